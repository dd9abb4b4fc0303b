package web

import (
	"sync"
	"time"
)

// OutageLogInterval is how often one repeated failure is logged.
const OutageLogInterval = 10 * time.Second

// maxLimitedKeys bounds the distinct failures a LogLimiter remembers; past
// it the memory is cleared, which at worst logs a line more.
const maxLimitedKeys = 256

// LogLimiter decides which of many identical log lines to write: the first
// of each key, then at most one per interval, each with the count of those
// suppressed since the last one written. It is safe for concurrent use.
type LogLimiter struct {
	interval time.Duration

	mu   sync.Mutex
	seen map[string]*limitedKey
}

type limitedKey struct {
	last       time.Time
	suppressed int64
}

// NewLogLimiter limits lines to one per interval and key.
func NewLogLimiter(interval time.Duration) *LogLimiter {
	return &LogLimiter{interval: interval, seen: make(map[string]*limitedKey)}
}

// Admit reports whether the line of key should be written at now, and how
// many lines of key were suppressed since the last one written.
func (l *LogLimiter) Admit(key string, now time.Time) (suppressed int64, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.seen[key]
	if k == nil {
		if len(l.seen) >= maxLimitedKeys {
			clear(l.seen)
		}
		l.seen[key] = &limitedKey{last: now}
		return 0, true
	}
	if now.Sub(k.last) < l.interval {
		k.suppressed++
		return 0, false
	}
	n := k.suppressed
	k.last, k.suppressed = now, 0
	return n, true
}
