package bunstore

import (
	"context"
	"testing"
	"time"

	"github.com/cachegate/cachegate/test/pgtest"
)

// A migrator killed in the middle of a statement leaves the statement
// running on its backend after its advisory lock is gone (issue 26). Here
// that backend is a transaction that has created the idempotency table
// and commits while Migrate waits for it at the catalog's unique index:
// Migrate's CREATE TABLE then fails (23505 on pg_type_typname_nsp_index),
// and Migrate must run again and succeed instead of failing.
func TestMigrateOutlastsADeadMigratorsStatement(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, pgtest.New(t))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	dead, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = dead.Rollback() }()
	for _, stmt := range idempotencyDDL(db.eng) {
		if _, err := dead.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- Migrate(ctx, db, []string{"user_cache"}) }()
	for {
		var waiting int
		if err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'transactionid'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("Migrate ended (%v) without meeting the dead migrator's table", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := dead.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Migrate after the dead migrator's statement = %v", err)
	}
	if err := Migrate(ctx, db, []string{"user_cache"}); err != nil {
		t.Fatalf("Migrate again = %v", err)
	}
}
