// Package pgtest gives tests a fresh, empty PostgreSQL database.
//
// The server comes from the environment variable CACHEGATE_TEST_POSTGRES, a
// URL of a role allowed to create databases (test/run starts a throwaway
// cluster and sets it). Without it, a test that needs PostgreSQL skips with
// one loud line; under CI (CI=true) it fails instead, so CI never skips.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	// The pgx driver registers itself as "pgx".
	_ "github.com/jackc/pgx/v5/stdlib"
)

// EnvVar names the variable holding the administrative PostgreSQL URL.
const EnvVar = "CACHEGATE_TEST_POSTGRES"

// New creates a database for this test and returns its URL. The database is
// dropped when the test ends.
func New(tb testing.TB) string {
	tb.Helper()
	admin := os.Getenv(EnvVar)
	if admin == "" {
		if os.Getenv("CI") != "" {
			tb.Fatalf("PostgreSQL is required under CI but %s is not set", EnvVar)
		}
		tb.Skipf("SKIPPED, NO POSTGRESQL: set %s (test/run does) to run this test", EnvVar)
	}
	u, err := url.Parse(admin)
	if err != nil {
		tb.Fatalf("%s is not a URL", EnvVar)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "cg_test_" + hex.EncodeToString(b[:])

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := sql.Open("pgx", admin)
	if err != nil {
		tb.Fatalf("open admin connection: %v", err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("create test database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db, err := sql.Open("pgx", admin)
		if err != nil {
			return
		}
		defer db.Close()
		_, _ = db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u.Path = "/" + name
	return u.String()
}
