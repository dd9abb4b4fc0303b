package application_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// TestKeysListEachKeysStateAcrossARotation: a rotation publishes the
// new key while the old one signs; after the publish-ahead time the new
// one signs and the old one is retired; --now signs at once.
func TestKeysListEachKeysStateAcrossARotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := newClock()
	tok, err := josejwt.New(ctx, josejwt.Options{Keys: memstore.NewKeyStore(nil), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := application.NewKeys(tok, clock, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	states := func() []string {
		t.Helper()
		keys, err := admin.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(keys))
		for i, k := range keys {
			out[i] = k.State
		}
		return out
	}
	if got := states(); !slices.Equal(got, []string{domain.KeySigning}) {
		t.Fatalf("states at the start = %v", got)
	}
	clock.Advance(time.Hour)
	k, err := admin.Rotate(ctx, domain.System(), application.RotateKeyInput{})
	if err != nil {
		t.Fatal(err)
	}
	if want := clock.Now().Add(josejwt.DefaultKeyPublishAhead); !k.SignsFrom.Equal(want) {
		t.Errorf("the new key signs from %v, want %v", k.SignsFrom, want)
	}
	if got := states(); !slices.Equal(got, []string{domain.KeyPublished, domain.KeySigning}) {
		t.Errorf("states after keys rotate = %v, want published, signing", got)
	}
	clock.Advance(josejwt.DefaultKeyPublishAhead)
	if got := states(); !slices.Equal(got, []string{domain.KeySigning, domain.KeyRetired}) {
		t.Errorf("states after the publish-ahead time = %v, want signing, retired", got)
	}
	clock.Advance(time.Minute)
	if _, err := admin.Rotate(ctx, domain.System(), application.RotateKeyInput{Now: true}); err != nil {
		t.Fatal(err)
	}
	if got := states(); !slices.Equal(got, []string{domain.KeySigning, domain.KeyRetired, domain.KeyRetired}) {
		t.Errorf("states after keys rotate --now = %v, want signing, retired, retired", got)
	}
}
