package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/domain"
)

// entriesConfig is what `seed entries` was asked to do.
type entriesConfig struct {
	database  string
	table     string
	assignee  string
	rows      int
	batch     int
	workers   int
	expiresIn time.Duration
	idsOut    string
	idsMax    int
}

// parseEntries reads the flags of `seed entries`.
func parseEntries(args []string) (entriesConfig, error) {
	var c entriesConfig
	fs := flag.NewFlagSet("seed entries", flag.ContinueOnError)
	fs.StringVar(&c.database, "database", "", "database URL, as cachegate's --database (sqlite:PATH or postgres://…); already migrated")
	fs.StringVar(&c.table, "table", "user_cache", "cache table (the default assignment's is user_cache)")
	fs.StringVar(&c.assignee, "assignee", "", "id of the user owning every entry")
	fs.IntVar(&c.rows, "rows", 10000, "entries to write")
	fs.IntVar(&c.batch, "batch", 2000, "entries per transaction")
	fs.IntVar(&c.workers, "workers", 0, "parallel writers (0: 1 on SQLite, 4 on PostgreSQL)")
	fs.DurationVar(&c.expiresIn, "expires-in", 30*24*time.Hour, "lifetime of the entries (0: never expire)")
	fs.StringVar(&c.idsOut, "ids-out", "", "file to write a sample of `id key` lines to, spread evenly over the entries")
	fs.IntVar(&c.idsMax, "ids-max", 100000, "most lines in --ids-out")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case c.database == "":
		return c, fmt.Errorf("entries: --database is required")
	case !domain.IsUUID(c.assignee):
		return c, fmt.Errorf("entries: --assignee must be a user id (a UUID)")
	case c.rows < 0 || c.batch < 1 || c.workers < 0 || c.idsMax < 1:
		return c, fmt.Errorf("entries: --rows, --batch, --workers and --ids-max must be positive")
	}
	if c.workers == 0 {
		c.workers = 1
		if isPostgres(c) {
			c.workers = 4
		}
	}
	return c, nil
}

// isPostgres reports whether c seeds a PostgreSQL database.
func isPostgres(c entriesConfig) bool { return !strings.HasPrefix(c.database, "sqlite:") }

// seedEntries implements `seed entries`.
func seedEntries(ctx context.Context, args []string) error {
	c, err := parseEntries(args)
	if err != nil {
		return err
	}
	start := time.Now()
	ids := make([]string, c.rows)
	keys := make([]string, c.rows)
	var gen system.UUIDv7
	for i := range ids {
		ids[i], keys[i] = gen.NewID(), fmt.Sprintf("seed-%08d", i)
	}
	var wg sync.WaitGroup
	errs := make([]error, c.workers)
	per := (c.rows + c.workers - 1) / c.workers
	for w := range c.workers {
		lo, hi := min(w*per, c.rows), min((w+1)*per, c.rows)
		wg.Go(func() { errs[w] = writeRange(ctx, c, ids[lo:hi], keys[lo:hi], lo) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	took := time.Since(start)
	perTx := fmt.Sprintf("%d per transaction", c.batch)
	if isPostgres(c) {
		perTx = "one per transaction"
	}
	fmt.Printf("seeded %d entries in %.2f s (%.0f entries/s, %d writer(s), %s)\n",
		c.rows, took.Seconds(), float64(c.rows)/max(took.Seconds(), 1e-9), c.workers, perTx)
	if c.idsOut != "" {
		return writeSample(c.idsOut, ids, keys, c.idsMax)
	}
	return nil
}

// writeRange inserts one worker's entries through its own one-connection
// pool, so the BEGIN and COMMIT around each batch run on the connection
// the repository's INSERTs use. first is the index of ids[0] among all.
//
// On PostgreSQL each entry commits alone (--batch does not apply): pgx
// closes a pooled connection handed back inside a transaction, so a BEGIN
// sent through the pool did not hold. The INSERTs ran on a new connection,
// and the COMMIT found no transaction (a warning in the server's log).
func writeRange(ctx context.Context, c entriesConfig, ids, keys []string, first int) error {
	if len(ids) == 0 {
		return nil
	}
	db, err := bunstore.Open(ctx, c.database, bunstore.WithMaxOpenConns(1), bunstore.WithUngroupedWrites())
	if err != nil {
		return fmt.Errorf("entries: %w", err)
	}
	defer db.Close()
	repo := bunstore.NewCacheRepository(db, c.table)
	now := domain.Normalize(time.Now())
	var expires *time.Time
	if c.expiresIn > 0 {
		t := now.Add(c.expiresIn)
		expires = &t
	}
	for lo := 0; lo < len(ids); lo += c.batch {
		hi := min(lo+c.batch, len(ids))
		if err := inTx(ctx, db.Bun(), isPostgres(c), func() error {
			for i := lo; i < hi; i++ {
				e := domain.Entry{ID: ids[i], Key: keys[i], Type: "settings", AssigneeID: c.assignee,
					Data: seedData(first + i), Version: 1, DateCreated: now, DateUpdated: now, ExpiresAt: expires}
				if err := repo.Create(ctx, e, now, domain.Quota{}); err != nil {
					return fmt.Errorf("entries: create entry %d: %w", first+i, err)
				}
			}
			return nil
		}); err != nil {
			return err
		}
		if first == 0 && hi/c.batch%50 == 0 {
			fmt.Fprintf(os.Stderr, "seed: %d/%d entries of the first writer\n", hi, len(ids))
		}
	}
	return nil
}

// inTx runs fn between BEGIN and COMMIT on db, whose pool must hold a
// single connection; a failing fn is rolled back. alone runs fn without
// them.
func inTx(ctx context.Context, db *bun.DB, alone bool, fn func() error) error {
	if alone {
		return fn()
	}
	if _, err := db.ExecContext(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("entries: begin: %w", err)
	}
	if err := fn(); err != nil {
		_, _ = db.ExecContext(ctx, "ROLLBACK")
		return err
	}
	if _, err := db.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("entries: commit: %w", err)
	}
	return nil
}

// seedData is the data of entry i: a small JSON string, as clients of the
// service usually store.
func seedData(i int) []byte {
	b, _ := json.Marshal(fmt.Sprintf(`{"theme":"dark","n":%d}`, i))
	return b
}

// writeSample writes at most limit `id key` lines to path, taking every
// k-th entry so the sample spans the whole table.
func writeSample(path string, ids, keys []string, limit int) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("entries: %w", err)
	}
	w := bufio.NewWriter(f)
	step := max(1, len(ids)/limit)
	for i := 0; i < len(ids); i += step {
		fmt.Fprintf(w, "%s %s\n", ids[i], keys[i])
	}
	if err := w.Flush(); err != nil {
		_ = f.Close()
		return fmt.Errorf("entries: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("entries: %w", err)
	}
	return nil
}
