package application_test

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/cachegate/cachegate/adapters/system"
)

func newClock() *system.ManualClock {
	return system.NewManualClock(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
}

// seqIDs makes deterministic, ordered UUIDs.
type seqIDs struct{ n atomic.Uint64 }

func (s *seqIDs) NewID() string {
	return fmt.Sprintf("00000000-0000-7000-8000-%012x", s.n.Add(1))
}
