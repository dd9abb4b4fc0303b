package memstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/contract"
)

func TestUserRepository(t *testing.T) {
	t.Parallel()
	contract.UserRepository(t, func(*testing.T) ports.UserRepository { return memstore.NewUserRepository(nil, nil) })
}

// Without a refresh store attached, ending a user's sessions cannot be
// done with the change, so the change is refused rather than made alone.
func TestEndingSessionsWithoutARefreshStoreChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := memstore.NewUserRepository(nil, nil)
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := r.CreateUser(ctx, domain.User{ID: "u1", Username: "alice", Active: true, DateCreated: now, DateUpdated: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.UpdateUserEndingSessions(ctx, "u1", now, func(u *domain.User) error { u.Active = false; return nil }); err == nil {
		t.Fatal("UpdateUserEndingSessions without a refresh store succeeded")
	}
	if u, err := r.UserByID(ctx, "u1"); err != nil || !u.Active {
		t.Fatalf("user after the refused update: active %v, err %v; want still active", u.Active, err)
	}
}
