package limits

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// keys reports how many keys hold places now.
func (l *keyLimiter) keys() int {
	n := 0
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		n += len(sh.held)
		sh.mu.Unlock()
	}
	return n
}

func TestKeyLimiter(t *testing.T) {
	t.Parallel()
	t.Run("a key gets max places, then none until one is given back", func(t *testing.T) {
		t.Parallel()
		l := newKeyLimiter(3)
		for i := range 3 {
			if !l.acquire("alice") {
				t.Fatalf("place %d refused", i+1)
			}
		}
		if l.acquire("alice") {
			t.Fatal("a fourth place of three was given")
		}
		if !l.acquire("bob") {
			t.Fatal("bob was refused because of alice")
		}
		l.release("alice")
		if !l.acquire("alice") {
			t.Fatal("the place given back was refused")
		}
	})
	t.Run("a key leaves the map with its last place", func(t *testing.T) {
		t.Parallel()
		l := newKeyLimiter(2)
		l.acquire("alice")
		l.acquire("alice")
		l.acquire("bob")
		if n := l.keys(); n != 2 {
			t.Fatalf("%d keys held, want 2", n)
		}
		l.release("alice")
		l.release("bob")
		if n := l.keys(); n != 1 {
			t.Fatalf("%d keys held after bob's last release, want 1", n)
		}
		l.release("alice")
		if n := l.keys(); n != 0 {
			t.Fatalf("%d keys held after every release, want 0", n)
		}
	})
	t.Run("no limit admits everything", func(t *testing.T) {
		t.Parallel()
		l := newKeyLimiter(0)
		for range 1000 {
			if !l.acquire("alice") {
				t.Fatal("a limiter without a limit refused")
			}
		}
		l.release("alice")
	})
	t.Run("concurrent callers never hold more than max and leave nothing behind", func(t *testing.T) {
		t.Parallel()
		const max = 4
		l := newKeyLimiter(max)
		var inUse [8]atomic.Int32
		var over atomic.Bool
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 2000 {
					k := (g + i) % len(inUse)
					key := "user:" + strconv.Itoa(k)
					if !l.acquire(key) {
						continue
					}
					if inUse[k].Add(1) > max {
						over.Store(true)
					}
					inUse[k].Add(-1)
					l.release(key)
				}
			}()
		}
		wg.Wait()
		if over.Load() {
			t.Error("a key held more than max places at once")
		}
		if n := l.keys(); n != 0 {
			t.Errorf("%d keys left in the map after every release", n)
		}
	})
}

func TestSlot(t *testing.T) {
	t.Parallel()
	t.Run("release gives the place back once", func(t *testing.T) {
		t.Parallel()
		l := newKeyLimiter(2)
		l.acquire("k")
		l.acquire("k")
		s := Slot{l: l, key: "k"}
		s.Release()
		s.Release()
		if n := l.shard("k").held["k"]; n != 1 {
			t.Fatalf("held %d after releasing one of two places twice, want 1", n)
		}
	})
	t.Run("after a hand-off only the new owner gives the place back", func(t *testing.T) {
		t.Parallel()
		l := newKeyLimiter(1)
		l.acquire("k")
		s := Slot{l: l, key: "k"}
		kept := s.HandOff()
		s.Release()
		if l.acquire("k") {
			t.Fatal("the handler's release gave back a place it had handed off")
		}
		kept.Release()
		if !l.acquire("k") {
			t.Fatal("the new owner's release did not give the place back")
		}
	})
	t.Run("the zero Slot holds nothing", func(t *testing.T) {
		t.Parallel()
		var s Slot
		s.Release()
		kept := s.HandOff()
		kept.Release()
	})
}

func TestCallerLimitsDefaults(t *testing.T) {
	t.Parallel()
	got := Options{StreamsPerUser: 7, ConnsPerAddress: -1}.withDefaults()
	want := Options{ListsPerUser: DefaultMaxListsPerUser, StreamsPerUser: 7, ConnsPerAddress: 0}
	if got != want {
		t.Fatalf("withDefaults = %+v, want %+v (zero: default, negative: none)", got, want)
	}
	if c := New(Options{ConnsPerAddress: -1}, nil, nil); c.conns != nil || c.lists == nil || c.streams == nil {
		t.Fatalf("New: a negative cap must be no limiter, a zero one the default")
	}
}

func TestRefusalIsAComplete429(t *testing.T) {
	t.Parallel()
	raw := refusalResponse(`too many "connections"`)
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "1" || !resp.Close {
		t.Fatalf("status %d, Retry-After %q, close %v; want 429, 1, true", resp.StatusCode, resp.Header.Get("Retry-After"), resp.Close)
	}
	var env map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	if env["errorCode"] != CodeTooManyRequests || env["message"] != `too many "connections"` || env["statusCode"] != 429.0 {
		t.Fatalf("envelope %v", env)
	}
}

// BenchmarkKeyLimiter is one acquire and release from parallel callers
// with distinct keys: the cost a capped list or stream pays.
func BenchmarkKeyLimiter(b *testing.B) {
	l := newKeyLimiter(DefaultMaxListsPerUser)
	var next atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		key := "user:" + strconv.FormatInt(next.Add(1), 10)
		for pb.Next() {
			if l.acquire(key) {
				l.release(key)
			}
		}
	})
}
