package system

import (
	"time"

	"github.com/cachegate/cachegate/ports"
)

// Clock is the real wall clock.
type Clock struct{}

var _ ports.Clock = Clock{}

// Now returns the current time in UTC. Converting to UTC also drops the
// monotonic reading, so values compare with == and round-trip through
// stores unchanged; truncation to microseconds is the domain's job.
func (Clock) Now() time.Time { return time.Now().UTC() }
