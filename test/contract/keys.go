package contract

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// KeyStore runs the contract of ports.KeyStore. newStore must return an
// empty store of its own on every call; subtests run in parallel.
func KeyStore(t *testing.T, newStore func(t *testing.T) ports.KeyStore) {
	t.Helper()

	t.Run("an empty store has no keys", func(t *testing.T) {
		t.Parallel()
		keys, err := newStore(t).SigningKeys(t.Context())
		if err != nil || len(keys) != 0 {
			t.Errorf("SigningKeys = %d keys, %v; want none", len(keys), err)
		}
	})

	t.Run("a stored key reads back field for field", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		want := authKey("k1", authT0)
		want.Algorithm = "HS256"
		want.Public = nil
		authAddKey(t, s, want)
		authWantKeys(t, s, want)
	})

	t.Run("key times come back in UTC, truncated to the microsecond", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		zone := time.FixedZone("UTC-5", -5*60*60)
		retired := time.Date(2030, 1, 1, 0, 0, 0, 999, zone)
		k := authKey("k1", time.Date(2029, 12, 31, 19, 0, 0, 1001, zone))
		k.RetiredAt = &retired
		authAddKey(t, s, k)
		wantRetired := time.Date(2030, 1, 1, 5, 0, 0, 0, time.UTC)
		want := authKey("k1", time.Date(2030, 1, 1, 0, 0, 0, 1000, time.UTC))
		want.RetiredAt = &wantRetired
		authWantKeys(t, s, want)
	})

	t.Run("adding a key retires the current one at the new key's creation, newest first", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		t1, t2, t3 := authT0, authT0.Add(time.Hour), authT0.Add(2*time.Hour)
		authAddKey(t, s, authKey("k1", t1))
		authAddKey(t, s, authKey("k2", t2))
		authAddKey(t, s, authKey("k3", t3))
		k1, k2, k3 := authKey("k1", t1), authKey("k2", t2), authKey("k3", t3)
		k1.RetiredAt, k2.RetiredAt = &t2, &t3 // k1 keeps the time it was first retired at
		authWantKeys(t, s, k3, k2, k1)
	})

	t.Run("newest first follows creation time, not insertion order", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		late, early := authKey("late", authT0.Add(time.Hour)), authKey("early", authT0)
		early.RetiredAt = &authT0
		authAddKey(t, s, late)
		authAddKey(t, s, early)
		retiredLate := authKey("late", authT0.Add(time.Hour))
		retiredLate.RetiredAt = &authT0
		authWantKeys(t, s, retiredLate, early)
	})

	t.Run("deleting removes only keys retired before the time", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		t1, t2, t3 := authT0, authT0.Add(time.Hour), authT0.Add(2*time.Hour)
		authAddKey(t, s, authKey("k1", t1))
		authAddKey(t, s, authKey("k2", t2))
		authAddKey(t, s, authKey("k3", t3))
		for _, tc := range []struct {
			before time.Time
			want   int
		}{{t2, 0}, {t2.Add(time.Microsecond), 1}, {t3.Add(time.Hour), 1}, {t3.Add(time.Hour), 0}} {
			n, err := s.DeleteSigningKeysRetiredBefore(t.Context(), tc.before)
			if err != nil || n != tc.want {
				t.Errorf("DeleteSigningKeysRetiredBefore(%v) = %d, %v; want %d", tc.before, n, err, tc.want)
			}
		}
		authWantKeys(t, s, authKey("k3", t3))
	})

	t.Run("adding a key id twice fails and changes nothing", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authAddKey(t, s, authKey("k1", authT0))
		if err := s.AddSigningKey(t.Context(), authKey("k1", authT0.Add(time.Hour))); err == nil {
			t.Error("AddSigningKey of a stored id = nil, want an error")
		}
		authWantKeys(t, s, authKey("k1", authT0))
	})

	t.Run("keys added concurrently leave exactly one current key", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				errs[i] = s.AddSigningKey(t.Context(), authKey(fmt.Sprintf("k%d", i), authT0.Add(time.Duration(i)*time.Second)))
			})
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("AddSigningKey(k%d): %v", i, err)
			}
		}
		keys, err := s.SigningKeys(t.Context())
		if err != nil {
			t.Fatalf("SigningKeys: %v", err)
		}
		current := 0
		for _, k := range keys {
			if k.RetiredAt == nil {
				current++
			}
		}
		if len(keys) != n || current != 1 {
			t.Errorf("%d keys of which %d current, want %d and 1", len(keys), current, n)
		}
	})

	t.Run("retiring a key erases its private half", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authAddKey(t, s, authKey("k1", authT0))
		authAddKey(t, s, authKey("k2", authT0.Add(time.Hour)))
		keys, err := s.SigningKeys(t.Context())
		if err != nil || len(keys) != 2 {
			t.Fatalf("SigningKeys = %d keys, %v", len(keys), err)
		}
		if len(keys[1].Private) != 0 || len(keys[0].Private) == 0 {
			t.Errorf("private halves: retired %d bytes, current %d bytes; want 0 and some", len(keys[1].Private), len(keys[0].Private))
		}
	})

	t.Run("revoking a key marks it, erases its private half and keeps the first time", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authAddKey(t, s, authKey("k1", authT0))
		authAddKey(t, s, authKey("k2", authT0.Add(time.Hour)))
		at := authT0.Add(2 * time.Hour)
		for _, kid := range []string{"k2", "k1", "k2"} {
			if err := s.RevokeSigningKey(t.Context(), kid, at); err != nil {
				t.Fatalf("RevokeSigningKey(%s): %v", kid, err)
			}
			at = at.Add(time.Hour)
		}
		k1, k2 := authKey("k1", authT0), authKey("k2", authT0.Add(time.Hour))
		r1, r2 := authT0.Add(3*time.Hour), authT0.Add(2*time.Hour)
		k1.RetiredAt, k1.RevokedAt, k2.RevokedAt = &k2.DateCreated, &r1, &r2
		authWantKeys(t, s, k2, k1)
		if got := k2.StateAt(at); got != domain.KeyRevoked {
			t.Errorf("State of a revoked key = %q", got)
		}
	})

	t.Run("a key published ahead leaves the current key signing, private half and all, until its activation", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		t1, t2 := authT0, authT0.Add(time.Hour)
		from := t2.Add(2 * time.Minute)
		authAddKey(t, s, authKey("k1", t1))
		k2 := authKey("k2", t2)
		k2.SignsFrom = from
		authAddKey(t, s, k2)
		k1 := authKey("k1", t1)
		k1.RetiredAt = &from
		authWantKeys(t, s, k2, k1)
		keys, err := s.SigningKeys(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			at         time.Time
			new, older string
		}{
			{t2, domain.KeyPublished, domain.KeySigning},
			{from.Add(-time.Microsecond), domain.KeyPublished, domain.KeySigning},
			{from, domain.KeySigning, domain.KeyRetired},
		} {
			if n, o := keys[0].StateAt(c.at), keys[1].StateAt(c.at); n != c.new || o != c.older {
				t.Errorf("states at %v: new %s, previous %s; want %s, %s", c.at, n, o, c.new, c.older)
			}
		}
	})

	t.Run("a key signing at once retires a key still published and the one signing, at its activation", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		t1, t2, t3 := authT0, authT0.Add(time.Hour), authT0.Add(time.Hour+time.Minute)
		authAddKey(t, s, authKey("k1", t1))
		k2 := authKey("k2", t2)
		k2.SignsFrom = t2.Add(2 * time.Minute)
		authAddKey(t, s, k2)
		authAddKey(t, s, authKey("k3", t3))
		k1 := authKey("k1", t1)
		k1.RetiredAt, k2.RetiredAt = &t3, &t3
		authWantKeys(t, s, authKey("k3", t3), k2, k1)
		for at, want := range map[time.Time][]string{
			t3:                      {domain.KeySigning, domain.KeyRetired, domain.KeyRetired},
			t2.Add(3 * time.Minute): {domain.KeySigning, domain.KeyRetired, domain.KeyRetired},
		} {
			keys, _ := s.SigningKeys(t.Context())
			for i, k := range keys {
				if got := k.StateAt(at); got != want[i] {
					t.Errorf("state of %s at %v = %s, want %s", k.ID, at, got, want[i])
				}
			}
		}
	})

	t.Run("revoking a key published ahead withdraws it: the key that signs keeps signing", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		t1, t2, t3 := authT0, authT0.Add(time.Hour), authT0.Add(time.Hour+time.Minute)
		f2, f3 := t2.Add(2*time.Minute), t3.Add(2*time.Minute)
		authAddKey(t, s, authKey("k1", t1))
		k2, k3 := authKey("k2", t2), authKey("k3", t3)
		k2.SignsFrom, k3.SignsFrom = f2, f3
		authAddKey(t, s, k2)
		authAddKey(t, s, k3) // k2 signs from f2 to f3, k1 until f2
		k1 := authKey("k1", t1)
		k1.RetiredAt, k2.RetiredAt = &f2, &f3
		authWantKeys(t, s, k3, k2, k1)

		// Withdrawing k2 leaves k1 signing until k3 takes over.
		r2 := t3.Add(30 * time.Second) // before f2
		// A second revocation changes nothing.
		for range 2 {
			if err := s.RevokeSigningKey(t.Context(), "k2", r2); err != nil {
				t.Fatalf("RevokeSigningKey(k2): %v", err)
			}
			k1.RetiredAt, k2.RevokedAt = &f3, &r2
			authWantKeys(t, s, k3, k2, k1)
		}
		// Withdrawing k3 too leaves k1 signing on, private half and all.
		r3 := r2.Add(time.Second)
		if err := s.RevokeSigningKey(t.Context(), "k3", r3); err != nil {
			t.Fatalf("RevokeSigningKey(k3): %v", err)
		}
		k1.RetiredAt, k3.RevokedAt = nil, &r3
		authWantKeys(t, s, k3, k2, k1)
		keys, err := s.SigningKeys(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []string{domain.KeyRevoked, domain.KeyRevoked, domain.KeySigning} {
			if got := keys[i].StateAt(f3.Add(time.Hour)); got != want {
				t.Errorf("state of %s after both activations = %s, want %s", keys[i].ID, got, want)
			}
		}
	})

	t.Run("revoking a key that signed already changes no other key", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		t1, t2 := authT0, authT0.Add(time.Hour)
		from := t2.Add(2 * time.Minute)
		authAddKey(t, s, authKey("k1", t1))
		k2 := authKey("k2", t2)
		k2.SignsFrom = from
		authAddKey(t, s, k2)
		at := from.Add(time.Minute) // k2 signs, k1 is retired
		if err := s.RevokeSigningKey(t.Context(), "k2", at); err != nil {
			t.Fatal(err)
		}
		k1 := authKey("k1", t1)
		k1.RetiredAt, k2.RevokedAt = &from, &at
		authWantKeys(t, s, k2, k1)
	})

	t.Run("revoking or replacing an unknown key is not found", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authAddKey(t, s, authKey("k1", authT0))
		if err := s.RevokeSigningKey(t.Context(), "nope", authT0); !authIs(err, domain.ErrSigningKeyNotFound) {
			t.Errorf("RevokeSigningKey(unknown) = %v, want ErrSigningKeyNotFound", err)
		}
		if err := s.SetSigningKeyPrivate(t.Context(), "nope", []byte("x")); !authIs(err, domain.ErrSigningKeyNotFound) {
			t.Errorf("SetSigningKeyPrivate(unknown) = %v, want ErrSigningKeyNotFound", err)
		}
		authWantKeys(t, s, authKey("k1", authT0))
	})

	t.Run("the private half can be replaced", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		authAddKey(t, s, authKey("k1", authT0))
		sealed := bytes.Repeat([]byte{0, 0xff, 'c'}, 27)
		if err := s.SetSigningKeyPrivate(t.Context(), "k1", sealed); err != nil {
			t.Fatalf("SetSigningKeyPrivate: %v", err)
		}
		want := authKey("k1", authT0)
		want.Private = sealed
		authWantKeys(t, s, want)
	})

	t.Run("keys read back do not share memory with the store", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		k := authKey("k1", authT0)
		authAddKey(t, s, k)
		k.Private[0] ^= 0xff
		keys, err := s.SigningKeys(t.Context())
		if err != nil || len(keys) != 1 {
			t.Fatalf("SigningKeys = %d keys, %v", len(keys), err)
		}
		keys[0].Public[0] ^= 0xff
		authWantKeys(t, s, authKey("k1", authT0))
	})
}

// authKey returns a current EdDSA key with distinct key material.
func authKey(id string, created time.Time) domain.SigningKey {
	return domain.SigningKey{
		ID:          id,
		Algorithm:   "EdDSA",
		Private:     bytes.Repeat([]byte{0, 1, 0xfe, 0xff}, 8),
		Public:      []byte(strings.Repeat("p", 32) + "\x00"),
		DateCreated: created,
	}
}

// authAddKey adds k or fails t.
func authAddKey(t *testing.T, s ports.KeyStore, k domain.SigningKey) {
	t.Helper()
	if err := s.AddSigningKey(t.Context(), k); err != nil {
		t.Fatalf("AddSigningKey(%s): %v", k.ID, err)
	}
}

// authWantKeys fails t unless the store holds exactly want, in order.
func authWantKeys(t *testing.T, s ports.KeyStore, want ...domain.SigningKey) {
	t.Helper()
	got, err := s.SigningKeys(t.Context())
	if err != nil {
		t.Fatalf("SigningKeys: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("SigningKeys = %d keys, want %d", len(got), len(want))
	}
	var newest time.Time // the creation of the newest key, the last added
	for _, w := range want {
		if w.DateCreated.After(newest) {
			newest = w.DateCreated
		}
	}
	for i := range got {
		g, w := got[i], want[i]
		authWantUTC(t, "DateCreated", g.DateCreated)
		if g.RetiredAt != nil {
			authWantUTC(t, "RetiredAt", *g.RetiredAt)
		}
		if g.RevokedAt != nil {
			authWantUTC(t, "RevokedAt", *g.RevokedAt)
		}
		if w.RevokedAt != nil || w.RetiredAt != nil && (!w.RetiredAt.After(newest) || w.DateCreated.Equal(newest)) {
			// A revoked key's private half is erased, a retired one's
			// once its retirement has passed (a key published ahead
			// retires the previous one at its activation), and a key
			// stored retired keeps none.
			w.Private = nil
		}
		if g.ID != w.ID || g.Algorithm != w.Algorithm || !bytes.Equal(g.Private, w.Private) ||
			!bytes.Equal(g.Public, w.Public) || !g.DateCreated.Equal(w.DateCreated) ||
			!g.SignsFrom.Equal(w.Activation()) ||
			!authSameTime(g.RetiredAt, w.RetiredAt) || !authSameTime(g.RevokedAt, w.RevokedAt) {
			// Key material stays out of the output.
			t.Errorf("key %d = %s %s created %v signs from %v retired %v, want %s %s created %v signs from %v retired %v (or its bytes differ)",
				i, g.ID, g.Algorithm, g.DateCreated, g.SignsFrom, authFmt(g.RetiredAt),
				w.ID, w.Algorithm, w.DateCreated, w.Activation(), authFmt(w.RetiredAt))
		}
	}
}

// authSameTime reports whether two optional times are both unset or equal.
func authSameTime(a, b *time.Time) bool {
	return (a == nil) == (b == nil) && (a == nil || a.Equal(*b))
}

// authFmt formats an optional time.
func authFmt(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.String()
}
