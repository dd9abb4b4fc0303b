package contract

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachegate/cachegate/ports"
)

// LoginThrottle runs the contract of ports.LoginThrottle. newThrottle must
// return a throttle of its own with no failures on every call; subtests
// run in parallel.
func LoginThrottle(t *testing.T, newThrottle func(t *testing.T) ports.LoginThrottle) {
	t.Helper()
	now := authT0.Add(time.Hour)

	t.Run("a key without failures counts none", func(t *testing.T) {
		t.Parallel()
		authWantFailures(t, newThrottle(t), "u:alice", now.Add(-time.Hour), 0, time.Time{})
	})

	t.Run("failures since a time are counted with the oldest of them", func(t *testing.T) {
		t.Parallel()
		l := newThrottle(t)
		// Recorded out of order, as concurrent logins may.
		for _, ago := range []time.Duration{time.Minute, 10 * time.Minute, 5 * time.Minute, 15 * time.Minute} {
			authRecord(t, l, "u:alice", now.Add(-ago))
		}
		for _, tc := range []struct {
			name   string
			since  time.Time
			n      int
			oldest time.Time
		}{
			{"a wide window counts all", now.Add(-time.Hour), 4, now.Add(-15 * time.Minute)},
			{"a failure exactly at since counts", now.Add(-10 * time.Minute), 3, now.Add(-10 * time.Minute)},
			{"one microsecond later it does not", now.Add(-10*time.Minute + time.Microsecond), 2, now.Add(-5 * time.Minute)},
			{"a window after every failure counts none", now.Add(time.Second), 0, time.Time{}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				authWantFailures(t, l, "u:alice", tc.since, tc.n, tc.oldest)
			})
		}
	})

	t.Run("keys are counted apart", func(t *testing.T) {
		t.Parallel()
		l := newThrottle(t)
		authRecord(t, l, "u:alice", now)
		authRecord(t, l, "ip:192.0.2.1", now)
		authRecord(t, l, "ip:192.0.2.1", now)
		authWantFailures(t, l, "u:alice", authT0, 1, now)
		authWantFailures(t, l, "ip:192.0.2.1", authT0, 2, now)
		authWantFailures(t, l, "u:Alice", authT0, 0, time.Time{})
	})

	t.Run("times come back in UTC, truncated to the microsecond", func(t *testing.T) {
		t.Parallel()
		l := newThrottle(t)
		at := time.Date(2030, 1, 2, 9, 4, 5, 123456789, time.FixedZone("UTC+6", 6*60*60))
		authRecord(t, l, "k", at)
		authWantFailures(t, l, "k", authT0, 1, time.Date(2030, 1, 2, 3, 4, 5, 123456000, time.UTC))
	})

	t.Run("reset forgets one key's failures only", func(t *testing.T) {
		t.Parallel()
		l := newThrottle(t)
		authRecord(t, l, "u:alice", now)
		authRecord(t, l, "u:bob", now)
		if err := l.Reset(t.Context(), "u:alice"); err != nil {
			t.Fatalf("Reset: %v", err)
		}
		if err := l.Reset(t.Context(), "u:nobody"); err != nil {
			t.Errorf("Reset(unknown) = %v, want nil", err)
		}
		authWantFailures(t, l, "u:alice", authT0, 0, time.Time{})
		authWantFailures(t, l, "u:bob", authT0, 1, now)
		authRecord(t, l, "u:alice", now)
		authWantFailures(t, l, "u:alice", authT0, 1, now)
	})

	t.Run("purging removes failures before the time, at most limit at a time", func(t *testing.T) {
		t.Parallel()
		l := newThrottle(t)
		for i := range 3 {
			authRecord(t, l, "u:alice", now.Add(-time.Duration(i+1)*time.Hour))
			authRecord(t, l, "u:bob", now.Add(-time.Duration(i+1)*time.Hour))
		}
		authRecord(t, l, "u:alice", now)
		for _, tc := range []struct{ limit, want int }{{0, 0}, {4, 4}, {4, 2}, {4, 0}} {
			n, err := l.PurgeFailures(t.Context(), now, tc.limit)
			if err != nil || n != tc.want {
				t.Errorf("PurgeFailures(limit %d) = %d, %v; want %d", tc.limit, n, err, tc.want)
			}
		}
		authWantFailures(t, l, "u:alice", time.Time{}, 1, now)
		authWantFailures(t, l, "u:bob", time.Time{}, 0, time.Time{})
	})

	t.Run("a reservation counts the attempt under every key", func(t *testing.T) {
		t.Parallel()
		l := newThrottle(t)
		authReserve(t, l, now, true, time.Time{}, throttleKey("u:alice", 2), throttleKey("ip:192.0.2.1", 5))
		authWantFailures(t, l, "u:alice", authT0, 1, now)
		authWantFailures(t, l, "ip:192.0.2.1", authT0, 1, now)
	})

	t.Run("a key at its limit refuses and nothing is counted", func(t *testing.T) {
		t.Parallel()
		l := newThrottle(t)
		authRecord(t, l, "u:alice", now.Add(-20*time.Minute)) // before the window
		authRecord(t, l, "u:alice", now.Add(-10*time.Minute))
		authRecord(t, l, "u:alice", now.Add(-5*time.Minute))
		authReserve(t, l, now, false, now.Add(-10*time.Minute), throttleKey("ip:192.0.2.1", 5), throttleKey("u:alice", 2))
		authWantFailures(t, l, "ip:192.0.2.1", authT0, 0, time.Time{})
		authWantFailures(t, l, "u:alice", authT0, 3, now.Add(-20*time.Minute))
		authReserve(t, l, now, true, time.Time{}, throttleKey("ip:192.0.2.1", 5), throttleKey("u:alice", 3))
	})

	t.Run("release forgets one attempt of one key", func(t *testing.T) {
		t.Parallel()
		l := newThrottle(t)
		authReserve(t, l, now, true, time.Time{}, throttleKey("u:alice", 5), throttleKey("ip:192.0.2.1", 5))
		authReserve(t, l, now, true, time.Time{}, throttleKey("ip:192.0.2.1", 5))
		if err := l.Release(t.Context(), "ip:192.0.2.1", now); err != nil {
			t.Fatalf("Release: %v", err)
		}
		if err := l.Release(t.Context(), "ip:192.0.2.9", now); err != nil {
			t.Errorf("Release(nothing counted) = %v, want nil", err)
		}
		authWantFailures(t, l, "ip:192.0.2.1", authT0, 1, now)
		authWantFailures(t, l, "u:alice", authT0, 1, now)
	})

	t.Run("parallel reservations never pass the limit", func(t *testing.T) {
		t.Parallel()
		l := newThrottle(t)
		const tries, limit = 30, 10
		var (
			wg sync.WaitGroup
			ok atomic.Int32
		)
		for i := range tries {
			wg.Go(func() {
				// Two usernames from one address: the shared key is the one that limits.
				user := []string{"u:alice", "u:bob"}[i%2]
				got, _, err := l.Reserve(t.Context(), []ports.ThrottleKey{throttleKey(user, tries), throttleKey("ip:192.0.2.1", limit)},
					now, now.Add(-time.Hour))
				if err != nil {
					t.Errorf("Reserve: %v", err)
				}
				if got {
					ok.Add(1)
				}
			})
		}
		wg.Wait()
		if got := ok.Load(); got != limit {
			t.Errorf("%d of %d parallel reservations succeeded at limit %d, want exactly %d", got, tries, limit, limit)
		}
		authWantFailures(t, l, "ip:192.0.2.1", authT0, limit, now)
	})

	t.Run("concurrent failures are all counted", func(t *testing.T) {
		t.Parallel()
		l := newThrottle(t)
		const n = 20
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				if err := l.RecordFailure(t.Context(), "ip:192.0.2.1", now.Add(time.Duration(i)*time.Microsecond)); err != nil {
					t.Errorf("RecordFailure: %v", err)
				}
			})
		}
		wg.Wait()
		authWantFailures(t, l, "ip:192.0.2.1", now, n, now)
	})
}

// throttleKey is a throttle key with its limit.
func throttleKey(key string, limit int) ports.ThrottleKey {
	return ports.ThrottleKey{Key: key, Limit: limit}
}

// authReserve fails t unless Reserve answers ok and oldest.
func authReserve(t *testing.T, l ports.LoginThrottle, now time.Time, ok bool, oldest time.Time, keys ...ports.ThrottleKey) {
	t.Helper()
	gotOK, gotOldest, err := l.Reserve(t.Context(), keys, now, now.Add(-15*time.Minute))
	if err != nil {
		t.Fatalf("Reserve(%v): %v", keys, err)
	}
	if gotOK != ok || !gotOldest.Equal(oldest) {
		t.Errorf("Reserve(%v) = %v, %v; want %v, %v", keys, gotOK, gotOldest, ok, oldest)
	}
}

// authRecord records a failure or fails t.
func authRecord(t *testing.T, l ports.LoginThrottle, key string, at time.Time) {
	t.Helper()
	if err := l.RecordFailure(t.Context(), key, at); err != nil {
		t.Fatalf("RecordFailure(%s): %v", key, err)
	}
}

// authWantFailures fails t unless Failures(key, since) answers n and oldest.
func authWantFailures(t *testing.T, l ports.LoginThrottle, key string, since time.Time, n int, oldest time.Time) {
	t.Helper()
	gotN, gotOldest, err := l.Failures(t.Context(), key, since)
	if err != nil {
		t.Fatalf("Failures(%s): %v", key, err)
	}
	if n > 0 {
		authWantUTC(t, "oldest", gotOldest)
	}
	if gotN != n || !gotOldest.Equal(oldest) {
		t.Errorf("Failures(%s, %v) = %d since %v, want %d since %v", key, since, gotN, gotOldest, n, oldest)
	}
}

// authT0 is the time the auth contracts start from: UTC, microsecond
// precision, so stores return it unchanged.
var authT0 = time.Date(2030, 1, 2, 3, 4, 5, 123456000, time.UTC)

// authWantUTC fails t unless tm is in UTC.
func authWantUTC(t *testing.T, field string, tm time.Time) {
	t.Helper()
	if tm.Location() != time.UTC {
		t.Errorf("%s is in %v, want UTC", field, tm.Location())
	}
}
