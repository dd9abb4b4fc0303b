package application_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// stubLookup counts BySubject calls and answers from a switch.
type stubLookup struct {
	calls  int
	active bool
}

func (s *stubLookup) ByUsername(context.Context, string) (domain.User, error) {
	return domain.User{}, domain.ErrUserNotFound
}

func (s *stubLookup) BySubject(_ context.Context, sub string) (domain.Principal, error) {
	s.calls++
	if !s.active {
		return domain.Principal{}, domain.ErrUserNotFound
	}
	return domain.Principal{ID: sub}, nil
}

func TestSubjectCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := newClock()
	inner := &stubLookup{active: true}
	c := application.NewSubjectCache(inner, time.Second, 2, clock)
	for range 3 {
		if p, err := c.BySubject(ctx, alice); err != nil || p.ID != alice {
			t.Fatalf("%+v %v", p, err)
		}
	}
	if inner.calls != 1 {
		t.Fatalf("inner lookup called %d times within the TTL, want 1", inner.calls)
	}
	inner.active = false
	clock.Advance(time.Second)
	if _, err := c.BySubject(ctx, alice); !errors.Is(err, domain.ErrUserNotFound) {
		t.Fatalf("after the TTL a disabled user must be refused: %v", err)
	}
	if _, err := c.BySubject(ctx, alice); !errors.Is(err, domain.ErrUserNotFound) || inner.calls != 3 {
		t.Fatalf("failures must not be cached: calls=%d err=%v", inner.calls, err)
	}
	inner.active = true
	for _, s := range []string{"a", "b", "c", "d"} {
		if _, err := c.BySubject(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if application.NewSubjectCache(inner, 0, 0, clock) != inner {
		t.Fatal("a zero TTL must not wrap")
	}
}
