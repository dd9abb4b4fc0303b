package contract

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// AuditFoldLog is an audit log that folds login attempts.
type AuditFoldLog interface {
	ports.AuditLog
	ports.AuditFolder
}

// AuditFold runs the contract of ports.AuditFolder and of the username cut
// of ports.AuditLog.RecordEvent. newLog must return an empty log of its
// own on every call; subtests run in parallel.
func AuditFold(t *testing.T, newLog func(t *testing.T) AuditFoldLog) {
	t.Helper()
	fold := domain.AuditFold{Window: time.Minute, Distinct: 3}
	// w0 is the start of a window; attempts i milliseconds into it.
	w0 := fold.Start(authT0).Add(fold.Window)
	at := func(ms int) time.Time { return w0.Add(time.Duration(ms) * time.Millisecond) }
	var seq sync.Mutex
	n := 0
	attempt := func(typ domain.AuditType, ms int, user, addr, reason string) domain.AuditEvent {
		seq.Lock()
		n++
		id := fmt.Sprintf("a%06d", n)
		seq.Unlock()
		return domain.AuditEvent{ID: id, Time: at(ms), Type: typ, Username: user, Address: addr,
			RequestID: "rid-" + id, Reason: reason}
	}
	foldAll := func(t *testing.T, l AuditFoldLog, es ...domain.AuditEvent) {
		t.Helper()
		for _, e := range es {
			if err := l.FoldEvent(t.Context(), e, fold); err != nil {
				t.Fatalf("FoldEvent(%s): %v", e.ID, err)
			}
		}
	}
	all := func(t *testing.T, l AuditFoldLog) []domain.AuditEvent {
		t.Helper()
		es, err := l.Events(t.Context(), ports.AuditFilter{})
		if err != nil {
			t.Fatalf("Events: %v", err)
		}
		return es
	}
	long := func(i int) string { return fmt.Sprintf("%04d", i) + strings.Repeat("x", 296) }

	t.Run("stored usernames are cut to 64 characters at a character boundary", func(t *testing.T) {
		t.Parallel()
		l := newLog(t)
		cyrillic := strings.Repeat("ж", 300)
		if err := l.RecordEvent(t.Context(), attempt(domain.AuditLoginFailed, 0, cyrillic, "192.0.2.1", domain.AuditReasonUnknownUser)); err != nil {
			t.Fatal(err)
		}
		foldAll(t, l, attempt(domain.AuditLoginFailed, 1, long(1), "192.0.2.2", domain.AuditReasonUnknownUser))
		for _, e := range all(t, l) {
			if !utf8.ValidString(e.Username) || utf8.RuneCountInString(e.Username) != domain.MaxAuditUsernameLen {
				t.Errorf("stored username %q (%d characters), want the first 64 characters", e.Username, utf8.RuneCountInString(e.Username))
			}
		}
		got, err := l.Events(t.Context(), ports.AuditFilter{Username: cyrillic})
		if err != nil || len(got) != 1 || got[0].Username != strings.Repeat("ж", 64) {
			t.Errorf("by the full username: %+v, %v; want the event with its cut name", got, err)
		}
	})

	t.Run("repeated failures of one username and address are one event with a count", func(t *testing.T) {
		t.Parallel()
		l := newLog(t)
		const attempts = 25
		first := attempt(domain.AuditLoginFailed, 0, "Alice", "192.0.2.1", domain.AuditReasonBadPassword)
		first.UserID = "u-alice"
		foldAll(t, l, first)
		for i := 1; i < attempts; i++ {
			e := attempt(domain.AuditLoginFailed, i*100, []string{"alice", " ALICE", "Alice"}[i%3], "192.0.2.1", domain.AuditReasonBadPassword)
			e.UserID = "u-alice"
			foldAll(t, l, e)
		}
		got := all(t, l)
		if len(got) != 1 {
			t.Fatalf("%d events, want 1: %+v", len(got), got)
		}
		want := first
		want.Count, want.LastSeen = attempts, at((attempts-1)*100)
		if got[0] != want {
			t.Errorf("folded event %+v, want %+v", got[0], want)
		}
		authWantUTC(t, "last seen", got[0].LastSeen)
	})

	t.Run("a single attempt reads as a single event", func(t *testing.T) {
		t.Parallel()
		l := newLog(t)
		e := attempt(domain.AuditLoginFailed, 5, "bob", "192.0.2.1", domain.AuditReasonUnknownUser)
		foldAll(t, l, e)
		if got := all(t, l); len(got) != 1 || got[0] != e || got[0].Attempts() != 1 {
			t.Errorf("events %+v, want only %+v", got, e)
		}
	})

	t.Run("throttled attempts of one address are one event whatever usernames they name", func(t *testing.T) {
		t.Parallel()
		l := newLog(t)
		const attempts = 30
		for i := range attempts {
			foldAll(t, l, attempt(domain.AuditLoginThrottled, i, long(i), "198.51.100.9", ""))
		}
		foldAll(t, l, attempt(domain.AuditLoginThrottled, 40, "carol", "198.51.100.10", ""))
		got := all(t, l)
		if len(got) != 2 {
			t.Fatalf("%d events, want 2 (one per address): %+v", len(got), got)
		}
		for _, e := range got {
			switch e.Address {
			case "198.51.100.9":
				if e.Count != attempts || e.Username != "" || !e.Time.Equal(at(0)) || !e.LastSeen.Equal(at(attempts-1)) {
					t.Errorf("flooding address: %+v, want count %d, no username, first and last times", e, attempts)
				}
			case "198.51.100.10":
				if e.Attempts() != 1 || e.Username != "carol" {
					t.Errorf("other address: %+v, want one attempt of carol", e)
				}
			}
		}
	})

	t.Run("failures naming a different long username each are bounded per address and window", func(t *testing.T) {
		t.Parallel()
		l := newLog(t)
		const attempts = 200
		for i := range attempts {
			reason := domain.AuditReasonUnknownUser
			if i%7 == 0 {
				reason = domain.AuditReasonBadPassword
			}
			foldAll(t, l, attempt(domain.AuditLoginFailed, i*10, long(i), "203.0.113.5", reason))
		}
		got := all(t, l)
		if len(got) != fold.Distinct+1 {
			t.Fatalf("%d events, want %d (the address's first %d, then one of the address)", len(got), fold.Distinct+1, fold.Distinct)
		}
		total, shared := 0, 0
		for _, e := range got {
			total += e.Attempts()
			if utf8.RuneCountInString(e.Username) > domain.MaxAuditUsernameLen {
				t.Errorf("stored username of %d characters", utf8.RuneCountInString(e.Username))
			}
			if e.Count > 1 {
				shared++
				if e.Username != "" || e.Reason != "" || e.Count != attempts-fold.Distinct || !e.LastSeen.Equal(at((attempts-1)*10)) {
					t.Errorf("the address's event %+v: want no username nor reason, count %d", e, attempts-fold.Distinct)
				}
			}
		}
		if total != attempts || shared != 1 {
			t.Errorf("counts add up to %d in %d shared events, want %d in 1", total, shared, attempts)
		}
		// A repeat of one of the first usernames still folds into its own.
		foldAll(t, l, attempt(domain.AuditLoginFailed, 5000, long(1), "203.0.113.5", domain.AuditReasonUnknownUser))
		if after := all(t, l); len(after) != len(got) {
			t.Errorf("a repeat added an event: %d, want %d", len(after), len(got))
		}
		// Another address is not held by this one's flood.
		foldAll(t, l, attempt(domain.AuditLoginFailed, 6000, "dave", "203.0.113.6", domain.AuditReasonUnknownUser))
		if got, _ := l.Events(t.Context(), ports.AuditFilter{Username: "dave"}); len(got) != 1 || got[0].Username != "dave" {
			t.Errorf("another address's failure: %+v, want its own event", got)
		}
	})

	t.Run("the next window starts new events", func(t *testing.T) {
		t.Parallel()
		l := newLog(t)
		for _, ms := range []int{0, 59_999, 60_000, 60_001} {
			foldAll(t, l, attempt(domain.AuditLoginFailed, ms, "erin", "192.0.2.3", domain.AuditReasonUnknownUser))
			foldAll(t, l, attempt(domain.AuditLoginThrottled, ms, "erin", "192.0.2.3", ""))
		}
		got := all(t, l)
		if len(got) != 4 {
			t.Fatalf("%d events, want 4 (failed and throttled in two windows): %+v", len(got), got)
		}
		for _, e := range got {
			if e.Count != 2 {
				t.Errorf("event %+v, want count 2", e)
			}
		}
	})

	t.Run("folded events are filtered, ordered and purged by their first attempt", func(t *testing.T) {
		t.Parallel()
		l := newLog(t)
		foldAll(t, l, attempt(domain.AuditLoginFailed, 0, "frank", "192.0.2.4", domain.AuditReasonUnknownUser),
			attempt(domain.AuditLoginFailed, 30_000, "frank", "192.0.2.4", domain.AuditReasonUnknownUser))
		if err := l.RecordEvent(t.Context(), domain.AuditEvent{ID: "z1", Time: at(10_000), Type: domain.AuditLogout, Username: "gina"}); err != nil {
			t.Fatal(err)
		}
		got := all(t, l)
		if len(got) != 2 || got[0].ID != "z1" || got[1].Count != 2 {
			t.Fatalf("events %+v, want the logout first, then frank's 2 failures", got)
		}
		if s, err := l.Events(t.Context(), ports.AuditFilter{Since: at(20_000)}); err != nil || len(s) != 0 {
			t.Errorf("since after the first attempt: %+v, %v; want none", s, err)
		}
		if n, err := l.PurgeEvents(t.Context(), at(5_000), 10); err != nil || n != 1 {
			t.Errorf("PurgeEvents = %d, %v; want the folded event removed", n, err)
		}
		// Purged, its key starts afresh.
		foldAll(t, l, attempt(domain.AuditLoginFailed, 40_000, "frank", "192.0.2.4", domain.AuditReasonUnknownUser))
		if s, _ := l.Events(t.Context(), ports.AuditFilter{Username: "frank"}); len(s) != 1 || s[0].Attempts() != 1 {
			t.Errorf("after purge: %+v, want one new single event", s)
		}
	})

	t.Run("concurrent repeats fold into one event and lose no count", func(t *testing.T) {
		t.Parallel()
		l := newLog(t)
		const workers, each = 4, 10
		var wg sync.WaitGroup
		errs := make(chan error, workers*each)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					e := attempt(domain.AuditLoginFailed, w*each+i, "hank", "192.0.2.8", domain.AuditReasonUnknownUser)
					errs <- l.FoldEvent(t.Context(), e, fold)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("FoldEvent: %v", err)
			}
		}
		if got := all(t, l); len(got) != 1 || got[0].Count != workers*each {
			t.Errorf("events %+v, want one with count %d", got, workers*each)
		}
	})
}
