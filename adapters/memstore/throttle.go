package memstore

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// LoginThrottle is an in-memory ports.LoginThrottle, safe for concurrent
// use. It keeps every failure until Reset or PurgeFailures removes it.
type LoginThrottle struct {
	mu       sync.Mutex
	failures map[string][]time.Time // by key, in the order recorded
}

var _ ports.LoginThrottle = (*LoginThrottle)(nil)

// NewLoginThrottle returns a throttle with no failures recorded.
func NewLoginThrottle() *LoginThrottle {
	return &LoginThrottle{failures: map[string][]time.Time{}}
}

// Reserve implements ports.LoginThrottle.
func (l *LoginThrottle) Reserve(_ context.Context, keys []ports.ThrottleKey, now, since time.Time) (bool, time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	since = domain.Normalize(since)
	for _, k := range keys {
		if n, oldest := l.count(k.Key, since); n >= k.Limit {
			return false, oldest, nil
		}
	}
	now = domain.Normalize(now)
	for _, k := range keys {
		l.failures[k.Key] = append(l.failures[k.Key], now)
	}
	return true, time.Time{}, nil
}

// Release implements ports.LoginThrottle.
func (l *LoginThrottle) Release(_ context.Context, key string, at time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	at = domain.Normalize(at)
	ats := l.failures[key]
	if i := slices.IndexFunc(ats, at.Equal); i >= 0 {
		ats = slices.Delete(ats, i, i+1)
		if len(ats) == 0 {
			delete(l.failures, key)
		} else {
			l.failures[key] = ats
		}
	}
	return nil
}

// Failures implements ports.LoginThrottle.
func (l *LoginThrottle) Failures(_ context.Context, key string, since time.Time) (int, time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, oldest := l.count(key, domain.Normalize(since))
	return n, oldest, nil
}

// count returns how many attempts key holds at or after since and the
// oldest of them. The caller holds mu.
func (l *LoginThrottle) count(key string, since time.Time) (n int, oldest time.Time) {
	for _, at := range l.failures[key] {
		if at.Before(since) {
			continue
		}
		if n == 0 || at.Before(oldest) {
			oldest = at
		}
		n++
	}
	return n, oldest
}

// RecordFailure implements ports.LoginThrottle.
func (l *LoginThrottle) RecordFailure(_ context.Context, key string, now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failures[key] = append(l.failures[key], domain.Normalize(now))
	return nil
}

// Reset implements ports.LoginThrottle.
func (l *LoginThrottle) Reset(_ context.Context, key string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.failures, key)
	return nil
}

// PurgeFailures implements ports.LoginThrottle.
func (l *LoginThrottle) PurgeFailures(_ context.Context, before time.Time, limit int) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	before = domain.Normalize(before)
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

// For implements ports.LoginThrottle: memory bounds no caller.
func (t *LoginThrottle) For(domain.Caller) ports.LoginThrottle { return t }
