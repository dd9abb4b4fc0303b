package application

import (
	"testing"

	"github.com/cachegate/cachegate/domain"
)

func TestChangeQueueKeepsOrderAcrossGrowthAndWrapping(t *testing.T) {
	t.Parallel()
	q := newChangeQueue()
	if len(q.ring) != 0 {
		t.Fatalf("a new queue holds a ring of %d", len(q.ring))
	}
	if c := q.pop(); c != nil {
		t.Fatalf("pop of an empty queue = rev %d", c.Rev)
	}
	const limit = 20
	next, want := int64(1), int64(1)
	push := func(n int) {
		for range n {
			if !q.push(&domain.Change{Rev: next}, limit) {
				t.Fatalf("push of rev %d refused with %d queued", next, q.n)
			}
			next++
		}
	}
	pop := func(n int) {
		for range n {
			c := q.pop()
			if c == nil || c.Rev != want {
				t.Fatalf("pop = %v, want rev %d", c, want)
			}
			want++
		}
	}
	// Wrap the first ring, then grow it while wrapped, twice.
	push(6)
	pop(4)
	push(6) // 8 queued, head at 4: the ring is full and wrapped
	if len(q.ring) != queueMinCap {
		t.Fatalf("ring of %d, want %d", len(q.ring), queueMinCap)
	}
	push(5) // grows to 16
	pop(3)
	push(5) // 15 queued in 16, wrapped
	if len(q.ring) != 16 {
		t.Fatalf("ring of %d, want 16", len(q.ring))
	}
	push(5) // grows to the limit
	if len(q.ring) != limit {
		t.Fatalf("ring of %d, want the limit %d", len(q.ring), limit)
	}
	if q.push(&domain.Change{Rev: next}, limit) {
		t.Fatal("push beyond the limit accepted")
	}
	pop(limit)
	if c := q.pop(); c != nil {
		t.Fatalf("pop after draining = rev %d", c.Rev)
	}
	if q.ring != nil {
		t.Fatalf("a drained queue keeps a ring of %d after a burst", len(q.ring))
	}
}

func TestChangeQueueSignalsReadyOncePerWait(t *testing.T) {
	t.Parallel()
	q := newChangeQueue()
	select {
	case <-q.ready:
		t.Fatal("ready before any push")
	default:
	}
	q.push(&domain.Change{Rev: 1}, 4)
	q.push(&domain.Change{Rev: 2}, 4)
	select {
	case <-q.ready:
	default:
		t.Fatal("not ready after a push")
	}
	select {
	case <-q.ready:
		t.Fatal("two tokens for one wait")
	default:
	}
	if q.pop() == nil || q.pop() == nil {
		t.Fatal("the queued changes are gone")
	}
}
