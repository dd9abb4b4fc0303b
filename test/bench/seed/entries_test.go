package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

const testAssignee = "01a21500-0002-723f-9544-94b48ace4dd3"

// TestSeedEntries seeds a migrated SQLite file and reads the entries back
// through the repository the service uses.
func TestSeedEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	dsn := "sqlite:" + filepath.Join(dir, "seed.db")
	db, err := bunstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := bunstore.Migrate(ctx, db, []string{"user_cache"}); err != nil {
		t.Fatal(err)
	}
	ids := filepath.Join(dir, "ids.txt")
	args := []string{"--database", dsn, "--assignee", testAssignee, "--rows", "25", "--batch", "10",
		"--ids-out", ids, "--ids-max", "10"}
	if err := seedEntries(ctx, args); err != nil {
		t.Fatalf("seedEntries: %v", err)
	}

	repo := bunstore.NewCacheRepository(db, "user_cache")
	res, err := repo.List(ctx, ports.ListQuery{Owner: testAssignee, Limit: 100, CountTotal: true}, time.Now(), func(domain.Entry) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 25 {
		t.Errorf("the table holds %d live entries of the assignee, want 25", res.Total)
	}

	b, err := os.ReadFile(ids)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	// 25 rows, at most 10 lines: every 2nd entry, so 13 lines.
	if len(lines) != 13 {
		t.Fatalf("the sample has %d lines, want 13", len(lines))
	}
	for _, line := range lines {
		id, key, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("sample line %q is not `id key`", line)
		}
		e, err := repo.Get(ctx, id, time.Now())
		if err != nil {
			t.Fatalf("Get(%s): %v", id, err)
		}
		if e.Key != key || e.AssigneeID != testAssignee || e.Version != 1 || e.ExpiresAt == nil {
			t.Errorf("entry %s = key %q, assignee %q, version %d, expires %v; want key %q, the assignee, version 1, an expiry",
				id, e.Key, e.AssigneeID, e.Version, e.ExpiresAt, key)
		}
	}
}

// TestParseEntries checks the flags that must be refused.
func TestParseEntries(t *testing.T) {
	t.Parallel()
	tests := map[string][]string{
		"a missing database is refused":      {"--assignee", testAssignee},
		"an assignee that is not a UUID":     {"--database", "sqlite:x.db", "--assignee", "bench"},
		"a zero batch is refused":            {"--database", "sqlite:x.db", "--assignee", testAssignee, "--batch", "0"},
		"a negative number of rows is wrong": {"--database", "sqlite:x.db", "--assignee", testAssignee, "--rows", "-1"},
	}
	for name, args := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, err := parseEntries(args); err == nil {
				t.Errorf("parseEntries(%q) succeeded", args)
			}
		})
	}
}

// TestWorkersDefault checks one writer on SQLite and four on PostgreSQL.
func TestWorkersDefault(t *testing.T) {
	t.Parallel()
	for dsn, want := range map[string]int{"sqlite:x.db": 1, "postgres://u@h/db": 4} {
		c, err := parseEntries([]string{"--database", dsn, "--assignee", testAssignee})
		if err != nil {
			t.Fatal(err)
		}
		if c.workers != want {
			t.Errorf("workers for %s = %d, want %d", dsn, c.workers, want)
		}
	}
}
