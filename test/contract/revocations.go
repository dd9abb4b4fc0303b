package contract

import (
	"slices"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// RevocationStore is a refresh store that is also a revocation feed, as
// memstore's and bunstore's are.
type RevocationStore interface {
	ports.RefreshStore
	ports.RevocationFeed
}

// RevocationFeed runs the contract of ports.RevocationFeed over the
// revocations a ports.RefreshStore makes. newStore must return an empty
// store of its own on every call; subtests run in parallel.
func RevocationFeed(t *testing.T, newStore func(t *testing.T) RevocationStore) {
	t.Helper()
	now := authT0.Add(time.Hour)

	t.Run("nothing revoked, nothing listed", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		authWantRevoked(t, s, authT0)
	})

	t.Run("a revoked family is listed once from its revocation time on", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		authRotate(t, s, "t1", authToken("t2", "f1", "u1"), now, domain.RefreshRotate)
		authSave(t, s, authToken("other", "f2", "u1"))
		if err := s.RevokeFamily(t.Context(), "f1", now); err != nil {
			t.Fatalf("RevokeFamily: %v", err)
		}
		authWantRevoked(t, s, now.Add(-time.Hour), "f1")
		authWantRevoked(t, s, now, "f1")
		authWantRevoked(t, s, now.Add(time.Microsecond))
	})

	t.Run("revoking a user lists every family of the user", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("a", "f1", "u1"))
		authSave(t, s, authToken("b", "f2", "u1"))
		authSave(t, s, authToken("c", "f3", "u2"))
		if err := s.RevokeUser(t.Context(), "u1", now); err != nil {
			t.Fatalf("RevokeUser: %v", err)
		}
		authWantRevoked(t, s, now, "f1", "f2")
	})

	t.Run("reuse detection lists the family it revoked", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		authRotate(t, s, "t1", authToken("t2", "f1", "u1"), now, domain.RefreshRotate)
		later := now.Add(time.Minute)
		authRotate(t, s, "t1", authToken("t3", "f1", "u1"), later, domain.RefreshReused)
		authWantRevoked(t, s, later, "f1")
	})

	t.Run("a later revocation of a revoked family keeps its first time", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authSave(t, s, authToken("t1", "f1", "u1"))
		for _, at := range []time.Time{now, now.Add(time.Hour)} {
			if err := s.RevokeFamily(t.Context(), "f1", at); err != nil {
				t.Fatalf("RevokeFamily: %v", err)
			}
		}
		authWantRevoked(t, s, now.Add(time.Minute))
	})
}

// authWantRevoked fails t unless RevokedFamilies(since) is want, sorted.
func authWantRevoked(t *testing.T, s ports.RevocationFeed, since time.Time, want ...string) {
	t.Helper()
	got, err := s.RevokedFamilies(t.Context(), since)
	if err != nil {
		t.Fatalf("RevokedFamilies: %v", err)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Errorf("RevokedFamilies(%v) = %q, want %q", since, got, want)
	}
}
