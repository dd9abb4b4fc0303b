package application

import (
	"sync"

	"github.com/cachegate/cachegate/domain"
)

// queueMinCap is the capacity a subscription's queue starts with when
// its first change arrives, and the most it keeps once drained.
const queueMinCap = 8

// changeQueue is a subscription's queue of live changes: a ring that is
// allocated with the first change, doubles up to its limit as the
// subscriber falls behind, and is released again when drained after a
// burst, so an idle subscription holds no buffer.
type changeQueue struct {
	mu    sync.Mutex
	ring  []*domain.Change
	head  int           // index of the oldest change
	n     int           // changes queued
	ready chan struct{} // holds a token while changes are queued unnoticed
}

func newChangeQueue() changeQueue { return changeQueue{ready: make(chan struct{}, 1)} }

// push appends c unless limit changes are already queued (false: the
// subscriber is too far behind).
func (q *changeQueue) push(c *domain.Change, limit int) bool {
	q.mu.Lock()
	if q.n >= limit {
		q.mu.Unlock()
		return false
	}
	if q.n == len(q.ring) {
		q.grow(limit)
	}
	q.ring[(q.head+q.n)%len(q.ring)] = c
	q.n++
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true
}

// grow doubles the ring (at least queueMinCap, at most limit).
func (q *changeQueue) grow(limit int) {
	size := min(max(2*len(q.ring), queueMinCap), limit)
	ring := make([]*domain.Change, size)
	for i := range q.n {
		ring[i] = q.ring[(q.head+i)%len(q.ring)]
	}
	q.ring, q.head = ring, 0
}

// pop takes the oldest change, or returns nil when none is queued.
func (q *changeQueue) pop() *domain.Change {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.n == 0 {
		return nil
	}
	c := q.ring[q.head]
	q.ring[q.head] = nil
	q.head = (q.head + 1) % len(q.ring)
	q.n--
	if q.n == 0 {
		q.head = 0
		if len(q.ring) > queueMinCap {
			q.ring = nil
		}
	}
	return c
}
