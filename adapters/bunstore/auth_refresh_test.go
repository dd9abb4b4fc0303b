package bunstore_test

import (
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/contract"
	"github.com/cachegate/cachegate/test/pgtest"
)

func TestAuthRefreshStore(t *testing.T) {
	t.Parallel()
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bunstore.DB) {
		contract.RefreshStore(t, func(t *testing.T) ports.RefreshStore { return bunstore.NewRefreshStore(newDB(t)) })
	})
}

func TestAuthRevocationFeed(t *testing.T) {
	t.Parallel()
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bunstore.DB) {
		contract.RevocationFeed(t, func(t *testing.T) contract.RevocationStore { return bunstore.NewRefreshStore(newDB(t)) })
	})
}

func TestAuthSessionEvictor(t *testing.T) {
	t.Parallel()
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bunstore.DB) {
		contract.SessionEvictor(t, func(t *testing.T) contract.SessionBoundStore { return bunstore.NewRefreshStore(newDB(t)) })
	})
}

// TestAuthRevokeFamilyCatchesConcurrentSuccessor pins the PostgreSQL race
// a revocation meets: a rotation holding the family's row commits a
// successor while RevokeFamily's UPDATE waits for that row. The UPDATE
// then revokes the row as the rotation left it: the successor is revoked.
func TestAuthRevokeFamilyCatchesConcurrentSuccessor(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := authOpen(t, pgtest.New(t))
	s := bunstore.NewRefreshStore(db)
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	rec := func(id string) domain.RefreshRecord {
		return domain.RefreshRecord{ID: id, FamilyID: "f1", UserID: "u1", IssuedAt: now, ExpiresAt: now.Add(time.Hour)}
	}
	if err := s.SaveRefresh(ctx, rec("t1")); err != nil {
		t.Fatalf("SaveRefresh: %v", err)
	}

	// A rotation of t1 to t2, caught before its commit.
	tx, err := db.Bun().BeginTx(ctx, nil)
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `UPDATE refresh_families SET prev_id = current_id, prev_used_at = issued_at,
		current_id = 't2', generation = generation + 1 WHERE family_id = 'f1'`); err != nil {
		t.Fatalf("rotate t1 to t2: %v", err)
	}

	revoked := make(chan error, 1)
	go func() { revoked <- s.RevokeFamily(ctx, "f1", now) }()
	authAwaitLockWait(t, db)
	if err := tx.Commit(); err != nil {
		t.Fatalf("commit the rotation: %v", err)
	}
	if err := <-revoked; err != nil {
		t.Fatalf("RevokeFamily: %v", err)
	}
	next := rec("t3")
	presented := domain.Claims{Kind: domain.RefreshToken, ID: "t2", FamilyID: "f1", Subject: "u1", ExpiresAt: now.Add(time.Hour)}
	if rot, err := s.RotateRefresh(ctx, presented, next, now, 0); err != nil || rot.Outcome != domain.RefreshRefused {
		t.Errorf("rotating the successor after RevokeFamily = %v, %v; want refused", rot.Outcome, err)
	}
}

// authAwaitLockWait returns once a session of db's database waits for a
// lock.
func authAwaitLockWait(t *testing.T, db *bunstore.DB) {
	t.Helper()
	for {
		var n int
		err := db.Bun().QueryRowContext(t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n)
		if err != nil {
			t.Fatalf("read pg_stat_activity: %v", err)
		}
		if n > 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
