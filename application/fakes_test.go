package application_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// manualClock is a clock tests move by hand.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *manualClock {
	return &manualClock{now: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// seqIDs makes deterministic, ordered UUIDs.
type seqIDs struct{ n atomic.Uint64 }

func (s *seqIDs) NewID() string {
	return fmt.Sprintf("00000000-0000-7000-8000-%012x", s.n.Add(1))
}
