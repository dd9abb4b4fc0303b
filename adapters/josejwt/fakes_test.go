package josejwt_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// fakeClock is a settable ports.Clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// memKeys is an in-memory ports.KeyStore that counts its loads and can be
// made to fail.
type memKeys struct {
	mu   sync.Mutex
	keys []domain.SigningKey // newest first
	// events are the audit events stored with the keys' changes.
	events []domain.AuditEvent
	loads  atomic.Int64
	fail   atomic.Bool
}

var errStoreDown = errors.New("key store down")

func clone(k domain.SigningKey) domain.SigningKey {
	k.Private = slices.Clone(k.Private)
	k.Public = slices.Clone(k.Public)
	if k.RetiredAt != nil {
		r := *k.RetiredAt
		k.RetiredAt = &r
	}
	if k.RevokedAt != nil {
		r := *k.RevokedAt
		k.RevokedAt = &r
	}
	return k
}

func (s *memKeys) RevokeSigningKey(_ context.Context, kid string, now time.Time, events ...domain.AuditEvent) error {
	var unpublished *domain.SigningKey
	err := s.change(kid, events, func(k *domain.SigningKey) {
		if k.RevokedAt == nil {
			if k.Activation().After(now) {
				c := clone(*k)
				unpublished = &c
			}
			k.RevokedAt = &now
		}
		k.Private = nil
	})
	if err != nil || unpublished == nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.keys {
		if r := s.keys[i].RetiredAt; s.keys[i].ID != kid && s.keys[i].RevokedAt == nil && r != nil && r.Equal(unpublished.Activation()) {
			s.keys[i].RetiredAt = unpublished.RetiredAt
		}
	}
	return nil
}

func (s *memKeys) SetSigningKeyPrivate(_ context.Context, kid string, private []byte) error {
	return s.change(kid, nil, func(k *domain.SigningKey) { k.Private = slices.Clone(private) })
}

func (s *memKeys) change(kid string, events []domain.AuditEvent, fn func(*domain.SigningKey)) error {
	if s.fail.Load() {
		return errStoreDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.keys {
		if s.keys[i].ID == kid {
			fn(&s.keys[i])
			s.events = append(s.events, events...)
			return nil
		}
	}
	return domain.ErrSigningKeyNotFound
}

func (s *memKeys) SigningKeys(context.Context) ([]domain.SigningKey, error) {
	s.loads.Add(1)
	if s.fail.Load() {
		return nil, errStoreDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]domain.SigningKey, len(s.keys))
	for i, k := range s.keys {
		out[i] = clone(k)
	}
	return out, nil
}

func (s *memKeys) AddSigningKey(_ context.Context, k domain.SigningKey, events ...domain.AuditEvent) error {
	if s.fail.Load() {
		return errStoreDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k.SignsFrom = k.Activation()
	for i := range s.keys {
		if s.keys[i].ID == k.ID {
			return errors.New("duplicate key id")
		}
		if r := s.keys[i].RetiredAt; r == nil || r.After(k.SignsFrom) {
			at := k.SignsFrom
			s.keys[i].RetiredAt = &at
		}
		if !s.keys[i].RetiredAt.After(k.DateCreated) {
			s.keys[i].Private = nil
		}
	}
	s.keys = append([]domain.SigningKey{clone(k)}, s.keys...)
	s.events = append(s.events, events...)
	return nil
}

func (s *memKeys) DeleteSigningKeysRetiredBefore(_ context.Context, t time.Time) (int, error) {
	if s.fail.Load() {
		return 0, errStoreDown
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.keys)
	s.keys = slices.DeleteFunc(s.keys, func(k domain.SigningKey) bool {
		return k.RetiredAt != nil && k.RetiredAt.Before(t)
	})
	return n - len(s.keys), nil
}

// current returns the newest non-retired key.
func (s *memKeys) current() domain.SigningKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.keys {
		if k.RetiredAt == nil && k.RevokedAt == nil {
			return clone(k)
		}
	}
	return domain.SigningKey{}
}

// hidingKeys is a memKeys that leaves out one key from its loads while
// hide is set: a replica that read the store before another's key was
// added.
type hidingKeys struct {
	*memKeys
	hidden string
	hide   atomic.Bool
}

func (s *hidingKeys) SigningKeys(ctx context.Context) ([]domain.SigningKey, error) {
	keys, err := s.memKeys.SigningKeys(ctx)
	if err != nil || !s.hide.Load() {
		return keys, err
	}
	return slices.DeleteFunc(keys, func(k domain.SigningKey) bool { return k.ID == s.hidden }), nil
}
