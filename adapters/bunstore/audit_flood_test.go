package bunstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/adapters/passhash"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/pgtest"
)

// TestAuditGrowthUnderAFailedLoginFlood floods the real login use case on
// the real stores with failed logins from one address, each naming a
// different 300-character username (2 workers, like the report of issue
// 22), and measures the bytes auth_events (table and indexes) gained: on
// SQLite the pages dbstat counts, on PostgreSQL pg_total_relation_size
// (dead tuples included). The clock advances so that the flood spans one
// simulated hour, whatever its length: the bytes added are the growth of
// an hour (docs/benchmarks.md, "Audit growth under a failed-login flood").
// CACHEGATE_BENCH_AUDIT_FLOOD sets the number of attempts (default 1000;
// docs/benchmarks.md reports 20000). It runs with the default throttle
// and with none (every attempt then a failure with its password check).
func TestAuditGrowthUnderAFailedLoginFlood(t *testing.T) {
	t.Parallel()
	attempts := 1000
	if s := os.Getenv("CACHEGATE_BENCH_AUDIT_FLOOD"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 100 {
			t.Fatalf("CACHEGATE_BENCH_AUDIT_FLOOD=%q: want a number of attempts, at least 100", s)
		}
		attempts = n
	}
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bun.DB) {
		for _, sc := range []struct {
			name   string
			limits application.ThrottleLimits
		}{
			{"with the default throttle", application.DefaultThrottleLimits},
			{"without a throttle", application.ThrottleLimits{}},
		} {
			t.Run(sc.name, func(t *testing.T) {
				t.Parallel()
				floodAudit(t, newDB(t), sc.limits, attempts)
			})
		}
	})
}

func floodAudit(t *testing.T, db *bun.DB, limits application.ThrottleLimits, attempts int) {
	ctx := context.Background()
	clock := system.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	h, err := passhash.New(passhash.Options{BcryptCost: 4})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := josejwt.New(ctx, josejwt.Options{HS256Secret: []byte(strings.Repeat("s", 32)), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	validator, err := application.NewCredentialValidator(ctx,
		application.RepoUserLookup{Users: bunstore.NewUserRepository(db)}, h, h)
	if err != nil {
		t.Fatal(err)
	}
	audit := bunstore.NewAuditLog(db)
	deps := application.LoginDeps{Validator: validator,
		Tokens: application.TokenDeps{Issuer: tok.Issuer(), Refresh: bunstore.NewRefreshStore(db), Clock: clock, IDs: system.UUIDv7{}},
		Audit:  application.NewAuditTrail(application.AuditTrailDeps{Store: audit, Clock: clock, IDs: system.UUIDv7{}})}
	if limits.Window > 0 {
		deps.Throttle, deps.Limits = bunstore.NewLoginThrottle(db), limits
	}
	login, err := application.NewLogin(deps)
	if err != nil {
		t.Fatal(err)
	}

	before := auditBytes(t, db)
	step := time.Hour / time.Duration(attempts)
	var (
		next, failed, throttled atomic.Int64
		wg                      sync.WaitGroup
	)
	began := time.Now()
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= int64(attempts); i = next.Add(1) {
				user := fmt.Sprintf("%06d", i) + strings.Repeat("x", 294)
				_, err := login.Execute(ctx, application.LoginInput{Username: user, Password: "wrong-password", ClientAddr: "203.0.113.77"})
				switch domain.KindOf(err) {
				case domain.KindUnauthenticated:
					failed.Add(1)
				case domain.KindTooMany:
					throttled.Add(1)
				default:
					t.Errorf("attempt %d: %v, want a failed or throttled login", i, err)
					return
				}
				clock.Advance(step)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	// Reading the log writes the attempts this process still holds.
	if _, err := audit.Events(ctx, ports.AuditFilter{Limit: 1}); err != nil {
		t.Fatal(err)
	}
	added := auditBytes(t, db) - before
	var rows, counted int64
	if err := db.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(attempts), 0) FROM auth_events`).Scan(&rows, &counted); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d attempts (%d failed, %d throttled) in %.1f s of wall time (%.0f/s), one simulated hour: "+
		"auth_events gained %d rows standing for %d attempts, %d bytes (%.1f KiB an hour)",
		db.Dialect().Name(), attempts, failed.Load(), throttled.Load(), elapsed.Seconds(),
		float64(attempts)/elapsed.Seconds(), rows, counted, added, float64(added)/1024)
	if counted != int64(attempts) {
		t.Errorf("the rows stand for %d attempts, want %d", counted, attempts)
	}
	// 60 windows of a minute; each holds at most Distinct+2 rows of the
	// address, a few more where the two workers race.
	if limit := int64(60 * (domain.DefaultAuditFold.Distinct + 2 + 2)); rows > limit {
		t.Errorf("%d rows in an hour, want at most %d", rows, limit)
	}
	if added > 1<<20 {
		t.Errorf("the audit trail grew by %d bytes in an hour, want at most 1 MiB", added)
	}
}

// auditBytes is the size of auth_events with its indexes.
func auditBytes(t *testing.T, db *bun.DB) int64 {
	t.Helper()
	q := `SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE tbl_name = 'auth_events')`
	if db.Dialect().Name().String() == "pg" {
		q = `SELECT pg_total_relation_size('auth_events'::regclass)`
	}
	var n int64
	if err := db.QueryRowContext(context.Background(), q).Scan(&n); err != nil {
		t.Fatalf("measure auth_events: %v", err)
	}
	return n
}

// BenchmarkAuditLoginFailure measures what storing one failed login costs
// the audit log: a row of its own (RecordEvent, every failure before
// folding), a repeat folded into its row, and a failure naming a new
// username each time (after the address's first rows, folded into the
// address's row).
func BenchmarkAuditLoginFailure(b *testing.B) {
	engines := []string{"sqlite"}
	if os.Getenv(pgtest.EnvVar) != "" {
		engines = append(engines, "postgres")
	}
	for _, engine := range engines {
		for _, mode := range []string{"record", "fold repeat", "fold new username"} {
			b.Run(engine+"/"+mode, func(b *testing.B) {
				dsn := "sqlite:" + filepath.Join(b.TempDir(), "audit.db")
				if engine == "postgres" {
					dsn = pgtest.New(b)
				}
				db, err := bunstore.Open(context.Background(), dsn)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = db.Close() })
				if err := bunstore.Migrate(context.Background(), db, nil); err != nil {
					b.Fatal(err)
				}
				audit := bunstore.NewAuditLog(db)
				t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
				fold := domain.DefaultAuditFold
				ids := system.UUIDv7{}
				b.ResetTimer()
				for i := range b.N {
					user := "alice"
					if mode != "fold repeat" {
						user = fmt.Sprintf("%06d", i) + strings.Repeat("x", 294)
					}
					// Every event in one window: the clock of a flood.
					e := domain.AuditEvent{ID: ids.NewID(), Time: t0.Add(time.Duration(i) * time.Microsecond % fold.Window),
						Type: domain.AuditLoginFailed, Username: user, Address: "203.0.113.77", Reason: domain.AuditReasonUnknownUser}
					if mode == "record" {
						err = audit.RecordEvent(context.Background(), e)
					} else {
						err = audit.FoldEvent(context.Background(), e, fold)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
