package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"
)

// sizes is what the database holds at one moment.
type sizes struct {
	db     int64    // SQLite: the file plus its WAL; PostgreSQL: pg_database_size
	audit  int64    // the audit tables with their indexes
	rows   int64    // rows of the audit tables
	tables []string // which tables count as audit tables
}

// auditTablePattern picks the tables a failed login writes to, by name:
// auth_events (the audit trail) and login_failures (the throttle's
// counts), and any table a later version names after the audit or the
// throttle.
const auditTablePattern = `(name LIKE 'auth_event%' OR name LIKE 'login%' OR name LIKE '%audit%' OR name LIKE '%throttle%')`

// measure reads the sizes of s's database. SQLite is read through a
// read-only connection beside the server's (WAL lets it read while the
// server writes); dbstat counts the pages of each table and index as the
// server's last commit left them, WAL included.
func (s *server) measure(ctx context.Context) (sizes, error) {
	if s.pgDB != "" {
		return measurePostgres(ctx, s.pgDB)
	}
	var z sizes
	for _, p := range []string{s.sqlite, s.sqlite + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			z.db += fi.Size()
		}
	}
	db, err := sql.Open("sqlite", "file:"+s.sqlite+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return z, err
	}
	defer db.Close()
	names, err := queryStrings(ctx, db, "SELECT name FROM sqlite_master WHERE type = 'table' AND "+auditTablePattern+" ORDER BY name")
	if err != nil {
		return z, fmt.Errorf("list the audit tables: %w", err)
	}
	z.tables = names
	for _, t := range names {
		var bytes, rows int64
		if err := db.QueryRowContext(ctx, `SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE tbl_name = ?)`, t).Scan(&bytes); err != nil {
			return z, fmt.Errorf("measure %s: %w", t, err)
		}
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM "`+t+`"`).Scan(&rows); err != nil {
			return z, fmt.Errorf("count %s: %w", t, err)
		}
		z.audit += bytes
		z.rows += rows
	}
	return z, nil
}

// measurePostgres reads the sizes of the database url names:
// pg_total_relation_size counts dead tuples too, as they are until vacuum
// reuses their space.
func measurePostgres(ctx context.Context, url string) (sizes, error) {
	var z sizes
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return z, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&z.db); err != nil {
		return z, err
	}
	rows, err := conn.Query(ctx, "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND "+
		strings.ReplaceAll(auditTablePattern, "name", "tablename")+" ORDER BY tablename")
	if err != nil {
		return z, err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return z, err
	}
	z.tables = names
	for _, t := range names {
		var bytes, n int64
		id := pgx.Identifier{t}.Sanitize()
		if err := conn.QueryRow(ctx, "SELECT pg_total_relation_size($1::regclass)", id).Scan(&bytes); err != nil {
			return z, fmt.Errorf("measure %s: %w", t, err)
		}
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+id).Scan(&n); err != nil {
			return z, fmt.Errorf("count %s: %w", t, err)
		}
		z.audit += bytes
		z.rows += n
	}
	return z, nil
}

func queryStrings(ctx context.Context, db *sql.DB, q string) ([]string, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
