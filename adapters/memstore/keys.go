package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// KeyStore is an in-memory ports.KeyStore, safe for concurrent use.
type KeyStore struct {
	mu    sync.Mutex
	keys  []domain.SigningKey
	audit *AuditLog
}

var _ ports.KeyStore = (*KeyStore)(nil)

// NewKeyStore returns an empty store whose changes append their events to
// audit under the store's lock; with a nil audit such events are refused.
func NewKeyStore(audit *AuditLog) *KeyStore { return &KeyStore{audit: audit} }

// SigningKeys implements ports.KeyStore; ties order by descending id.
func (s *KeyStore) SigningKeys(context.Context) ([]domain.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]domain.SigningKey, len(s.keys))
	for i, k := range s.keys {
		out[i] = authKey(k)
	}
	slices.SortFunc(out, func(a, b domain.SigningKey) int {
		return cmp.Or(b.DateCreated.Compare(a.DateCreated), cmp.Compare(b.ID, a.ID))
	})
	return out, nil
}

// AddSigningKey implements ports.KeyStore. A key id already stored is an
// error and changes nothing.
func (s *KeyStore) AddSigningKey(_ context.Context, k domain.SigningKey, events ...domain.AuditEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := eventsSink(s.audit, "add signing key", events); err != nil {
		return err
	}
	if slices.ContainsFunc(s.keys, func(have domain.SigningKey) bool { return have.ID == k.ID }) {
		return fmt.Errorf("memstore: add signing key: id %q is already stored", k.ID)
	}
	k = authKey(k)
	from, created := k.SignsFrom, k.DateCreated
	for i := range s.keys {
		if r := s.keys[i].RetiredAt; r == nil || r.After(from) {
			at := from
			s.keys[i].RetiredAt = &at
		}
		if !s.keys[i].RetiredAt.After(created) {
			s.keys[i].Private = []byte{}
		}
	}
	if k.RetiredAt != nil || k.RevokedAt != nil {
		k.Private = []byte{}
	}
	s.keys = append(s.keys, k)
	s.audit.appendEvents(events)
	return nil
}

// RevokeSigningKey implements ports.KeyStore.
func (s *KeyStore) RevokeSigningKey(_ context.Context, kid string, now time.Time, events ...domain.AuditEvent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := eventsSink(s.audit, "revoke signing key", events); err != nil {
		return err
	}
	i := slices.IndexFunc(s.keys, func(k domain.SigningKey) bool { return k.ID == kid })
	if i < 0 {
		return domain.ErrSigningKeyNotFound
	}
	if k := s.keys[i]; k.RevokedAt == nil {
		at := domain.Normalize(now)
		if from := k.Activation(); from.After(at) {
			for j := range s.keys {
				if r := s.keys[j].RetiredAt; j != i && s.keys[j].RevokedAt == nil && r != nil && r.Equal(from) {
					s.keys[j].RetiredAt = domain.NormalizePtr(k.RetiredAt)
				}
			}
		}
		s.keys[i].RevokedAt = &at
	}
	s.keys[i].Private = []byte{}
	s.audit.appendEvents(events)
	return nil
}

// SetSigningKeyPrivate implements ports.KeyStore.
func (s *KeyStore) SetSigningKeyPrivate(_ context.Context, kid string, private []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.keys, func(k domain.SigningKey) bool { return k.ID == kid })
	if i < 0 {
		return domain.ErrSigningKeyNotFound
	}
	s.keys[i].Private = slices.Clone(private)
	return nil
}

// DeleteSigningKeysRetiredBefore implements ports.KeyStore.
func (s *KeyStore) DeleteSigningKeysRetiredBefore(_ context.Context, t time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t = domain.Normalize(t)
	n := len(s.keys)
	s.keys = slices.DeleteFunc(s.keys, func(k domain.SigningKey) bool {
		return k.RetiredAt != nil && k.RetiredAt.Before(t)
	})
	return n - len(s.keys), nil
}

// authKey returns a copy of k sharing no memory with it, times as a
// database returns them.
func authKey(k domain.SigningKey) domain.SigningKey {
	k.Private = slices.Clone(k.Private)
	k.Public = slices.Clone(k.Public)
	k.DateCreated = domain.Normalize(k.DateCreated)
	k.SignsFrom = domain.Normalize(k.Activation())
	k.RetiredAt = domain.NormalizePtr(k.RetiredAt)
	k.RevokedAt = domain.NormalizePtr(k.RevokedAt)
	return k
}
