package system

import (
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/google/uuid"
)

func TestClockTellsTheCurrentTimeInUTC(t *testing.T) {
	t.Parallel()
	before := time.Now().Round(0) // compare wall clocks only
	now := Clock{}.Now()
	after := time.Now().Round(0)
	if now.Location() != time.UTC {
		t.Fatalf("location = %v, want UTC", now.Location())
	}
	if now.Before(before) || now.After(after) {
		t.Fatalf("Now = %v, not between %v and %v", now, before, after)
	}
	if now != now.Round(0) {
		t.Fatal("Now carries a monotonic clock reading")
	}
}

func checkIDs(t *testing.T, gen func() string, n int) {
	t.Helper()
	seen := make(map[string]struct{}, n)
	prev := ""
	for i := range n {
		id := gen()
		if !domain.IsUUID(id) {
			t.Fatalf("id %d = %q is not a UUID", i, id)
		}
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 7 || u.Variant() != uuid.RFC4122 || u.String() != id {
			t.Fatalf("id %d = %q: version %d variant %v, err %v; want a lowercase canonical v7", i, id, u.Version(), u.Variant(), err)
		}
		if _, dup := seen[id]; dup {
			t.Fatalf("id %d = %q repeats", i, id)
		}
		seen[id] = struct{}{}
		if id <= prev {
			t.Fatalf("id %d = %q sorts before its predecessor %q", i, id, prev)
		}
		prev = id
	}
}

func TestUUIDv7IDsAreUniqueValidAndInCreationOrder(t *testing.T) {
	t.Parallel()
	// Ids from other goroutines may interleave: the order is process-wide.
	checkIDs(t, UUIDv7{}.NewID, 10_000)
}

func TestUUIDv7IsSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	const workers, each = 4, 500
	ids := make(chan string, workers*each)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				ids <- UUIDv7{}.NewID()
			}
		})
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("%q repeats across goroutines", id)
		}
		seen[id] = true
	}
	if len(seen) != workers*each {
		t.Fatalf("%d ids, want %d", len(seen), workers*each)
	}
}

func BenchmarkNewID(b *testing.B) {
	g := UUIDv7{}
	b.ReportAllocs()
	for b.Loop() {
		_ = g.NewID()
	}
}

func TestManualClockMovesOnlyWhenTold(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewManualClock(start)
	if !c.Now().Equal(start) || !c.Now().Equal(start) {
		t.Fatal("the clock moved by itself")
	}
	c.Advance(time.Minute)
	if got := c.Now(); !got.Equal(start.Add(time.Minute)) {
		t.Fatalf("after Advance: %v", got)
	}
}
