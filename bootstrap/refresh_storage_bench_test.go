package bootstrap_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/bootstrap"
	"github.com/cachegate/cachegate/bootstrap/config"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/test/pgtest"
)

// BenchmarkRefreshStorage measures what refreshes leave in the database:
// the default wiring (as BenchmarkRefreshSQLite), 64 sessions, b.N
// refreshes, each presenting the token the previous refresh of its
// session returned, one after the other. It reports the rows and bytes of
// the refresh table (refresh_families, or refresh_tokens where a build
// keeps one row per token) after the logins and after the refreshes, and
// the bytes after each quarter of them (KiB-q1 … KiB-q3), so a plateau
// shows. The
// sweeper does not run: nothing expires within a benchmark anyway. On
// SQLite the bytes are the table's and its indexes' pages (dbstat); on
// PostgreSQL (CACHEGATE_BENCH_POSTGRES=1 and CACHEGATE_TEST_POSTGRES) its
// pg_total_relation_size after a VACUUM. A fixed count compares builds:
//
//	go test -run '^$' -bench RefreshStorage -benchtime 20000x ./bootstrap/
func BenchmarkRefreshStorage(b *testing.B) {
	cfg := config.Default()
	cfg.Database = "sqlite:" + filepath.Join(b.TempDir(), "storage.db")
	if os.Getenv("CACHEGATE_BENCH_POSTGRES") != "" {
		cfg.Database = pgtest.New(b)
	}
	cfg.Auth.BcryptCost = 4
	var (
		admin   *application.Users
		login   *application.Login
		refresh *application.Refresh
	)
	app, err := bootstrap.Start(bootstrap.Core(cfg, io.Discard), fx.Populate(&admin, &login, &refresh))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = bootstrap.Stop(app, 10*time.Second) })
	ctx := context.Background()
	db, err := bunstore.Open(ctx, cfg.Database)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	const pw = "Bench-passw0rd!"
	if _, err := admin.Add(ctx, domain.System(), application.AddUserInput{Username: "bench", Password: pw, Active: true}); err != nil {
		b.Fatal(err)
	}
	const sessions = 64
	tokens := make([]string, sessions)
	for i := range tokens {
		p, err := login.Execute(ctx, application.LoginInput{Username: "bench", Password: pw})
		if err != nil {
			b.Fatal(err)
		}
		tokens[i] = p.RefreshToken
	}
	rows0, bytes0 := refreshTableSize(b, db.DB, cfg.Database)
	b.ResetTimer()
	for i := range b.N {
		p, err := refresh.Execute(ctx, tokens[i%sessions])
		if err != nil {
			b.Fatal(err)
		}
		tokens[i%sessions] = p.RefreshToken
		if q := 4 * (i + 1) / b.N; q < 4 && 4*(i+1)%b.N == 0 && b.N >= 4 {
			b.StopTimer()
			_, bytes := refreshTableSize(b, db.DB, cfg.Database)
			b.ReportMetric(float64(bytes)/1024, fmt.Sprintf("KiB-q%d", q))
			b.StartTimer()
		}
	}
	b.StopTimer()
	rows1, bytes1 := refreshTableSize(b, db.DB, cfg.Database)
	b.ReportMetric(float64(rows0), "rows-before")
	b.ReportMetric(float64(rows1), "rows-after")
	b.ReportMetric(float64(bytes0)/1024, "KiB-before")
	b.ReportMetric(float64(bytes1)/1024, "KiB-after")
}

// refreshTableSize returns the rows and bytes of the refresh table.
func refreshTableSize(b *testing.B, db *sql.DB, url string) (rows, bytes int64) {
	b.Helper()
	ctx := context.Background()
	postgres := len(url) > 8 && url[:8] == "postgres"
	exists := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'refresh_families'`
	if postgres {
		exists = `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'refresh_families'`
	}
	var n int
	if err := db.QueryRowContext(ctx, exists).Scan(&n); err != nil {
		b.Fatal(err)
	}
	table := "refresh_tokens"
	if n > 0 {
		table = "refresh_families"
	}
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&rows); err != nil {
		b.Fatal(err)
	}
	size := fmt.Sprintf(`SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN
		(SELECT name FROM sqlite_master WHERE tbl_name = '%s')`, table)
	if postgres {
		if _, err := db.ExecContext(ctx, "VACUUM "+table); err != nil {
			b.Fatal(err)
		}
		size = fmt.Sprintf(`SELECT pg_total_relation_size('%s')`, table)
	}
	if err := db.QueryRowContext(ctx, size).Scan(&bytes); err != nil {
		b.Fatal(err)
	}
	return rows, bytes
}
