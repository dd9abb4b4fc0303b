package memstore

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/cachegate/cachegate/ports"
)

// LoginThrottle is an in-memory ports.LoginThrottle, safe for concurrent
// use. It keeps every failure until Reset or PurgeFailures removes it.
// Times are kept and compared at microsecond precision in UTC, as the
// database stores do.
type LoginThrottle struct {
	mu       sync.Mutex
	failures map[string][]time.Time // by key, in the order recorded
}

var _ ports.LoginThrottle = (*LoginThrottle)(nil)

// NewLoginThrottle returns a throttle with no failures recorded.
func NewLoginThrottle() *LoginThrottle {
	return &LoginThrottle{failures: map[string][]time.Time{}}
}

// Failures returns how many failures were recorded for key at or after
// since, and the time of the oldest of them (the zero time when none).
func (l *LoginThrottle) Failures(_ context.Context, key string, since time.Time) (int, time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	since = authTime(since)
	var (
		n      int
		oldest time.Time
	)
	for _, at := range l.failures[key] {
		if at.Before(since) {
			continue
		}
		if n == 0 || at.Before(oldest) {
			oldest = at
		}
		n++
	}
	return n, oldest, nil
}

// RecordFailure counts one failure for key at now.
func (l *LoginThrottle) RecordFailure(_ context.Context, key string, now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failures[key] = append(l.failures[key], authTime(now))
	return nil
}

// Reset forgets the failures of key.
func (l *LoginThrottle) Reset(_ context.Context, key string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.failures, key)
	return nil
}

// PurgeFailures removes at most limit failures recorded before t and
// returns how many it removed. A limit below 1 removes nothing.
func (l *LoginThrottle) PurgeFailures(_ context.Context, before time.Time, limit int) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	before = authTime(before)
	removed := 0
	for key, ats := range l.failures {
		ats = slices.DeleteFunc(ats, func(at time.Time) bool {
			if removed < limit && at.Before(before) {
				removed++
				return true
			}
			return false
		})
		if len(ats) == 0 {
			delete(l.failures, key)
		} else {
			l.failures[key] = ats
		}
	}
	return removed, nil
}
