package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/cachegate/cachegate/adapters/bunstore"
)

// refreshTable prints the rows and bytes of the refresh table of the
// database url (refresh_families; refresh_tokens in builds that kept one
// row per token), so test/bench/run can show what a refresh load leaves
// behind: on SQLite the pages of the table and its indexes (dbstat), on
// PostgreSQL pg_total_relation_size (dead tuples included, as they are
// until vacuum reuses them).
func refreshTable(ctx context.Context, url string) error {
	db, err := bunstore.Open(ctx, url)
	if err != nil {
		return fmt.Errorf("refreshtable: open the database: %w", err)
	}
	defer db.Close()
	postgres := strings.HasPrefix(url, "postgres")
	exists := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'refresh_families'`
	if postgres {
		exists = `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'refresh_families'`
	}
	var n int
	if err := db.Bun().QueryRowContext(ctx, exists).Scan(&n); err != nil {
		return fmt.Errorf("refreshtable: %w", err)
	}
	table := "refresh_tokens"
	if n > 0 {
		table = "refresh_families"
	}
	size := `SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE tbl_name = ?)`
	if postgres {
		size = `SELECT pg_total_relation_size(?::regclass)`
	}
	var rows, bytes int64
	if err := db.Bun().QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&rows); err != nil {
		return fmt.Errorf("refreshtable: count rows: %w", err)
	}
	if err := db.Bun().QueryRowContext(ctx, size, table).Scan(&bytes); err != nil {
		return fmt.Errorf("refreshtable: measure %s: %w", table, err)
	}
	fmt.Printf("%s: %d rows, %d KiB\n", table, rows, bytes/1024)
	return nil
}
