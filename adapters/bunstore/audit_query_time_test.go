package bunstore_test

import (
	"database/sql"
	"math"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/pgtest"
)

// An audit time condition built in code may be before AD 1 in UTC (the
// admin API refuses such dates, domain.AuditFields), and a cursor holds
// any microsecond count. PostgreSQL refused the literal
// "0000-12-31 …" (GET /admin/audit?since=0001-01-01T00:00:00%2B23:59
// answered 500 there and 200 on SQLite, found by test/apifuzz). Each bound
// must select what it says, on every engine, without error.
func TestAuditQueryTakesTimesBeforeADOneAndFarOut(t *testing.T) {
	t.Parallel()
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bunstore.DB) {
		log := bunstore.NewAuditLog(newDB(t))
		at := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
		if err := log.RecordEvent(t.Context(), domain.AuditEvent{ID: "0190a000-0000-7000-8000-0000000000a1", Type: domain.AuditLogout,
			Time: at, UserID: "0190a000-0000-7000-8000-0000000000b1", Username: "ann", Address: "10.0.0.1"}); err != nil {
			t.Fatal(err)
		}
		lastOfOneBC := time.Date(1, 1, 1, 0, 0, 0, 0, time.FixedZone("", 23*3600+59*60)) // 0000-12-31T00:01:00Z
		ancient := time.UnixMicro(math.MinInt64).UTC()                                   // before 4713 BC
		farOut := time.UnixMicro(math.MaxInt64).UTC()                                    // year 294247
		const id = "0190a000-0000-7000-8000-00000000f00d"
		for _, tc := range []struct {
			name   string
			since  time.Time
			until  time.Time
			before ports.AuditCursor
			want   int
		}{
			{"since in 1 BC", lastOfOneBC, time.Time{}, ports.AuditCursor{}, 1},
			{"since before 4713 BC", ancient, time.Time{}, ports.AuditCursor{}, 1},
			{"until in 1 BC", time.Time{}, lastOfOneBC, ports.AuditCursor{}, 0},
			{"until past AD 294276", time.Time{}, farOut, ports.AuditCursor{}, 1},
			{"since past AD 294276", farOut, time.Time{}, ports.AuditCursor{}, 0},
			{"a cursor in 1 BC", time.Time{}, time.Time{}, ports.AuditCursor{Time: lastOfOneBC, ID: id}, 0},
			{"a cursor before 4713 BC", time.Time{}, time.Time{}, ports.AuditCursor{Time: ancient, ID: id}, 0},
			{"a cursor far out", time.Time{}, time.Time{}, ports.AuditCursor{Time: farOut, ID: id}, 1},
		} {
			var bounds []domain.Filter
			for _, b := range []struct {
				op domain.QueryOp
				t  time.Time
			}{{domain.OpGte, tc.since}, {domain.OpLt, tc.until}} {
				if !b.t.IsZero() {
					bounds = append(bounds, domain.Where(domain.Condition{Field: domain.FieldTime, Op: b.op, Values: []domain.QueryValue{{Time: b.t}}}))
				}
			}
			got, err := log.QueryEvents(t.Context(), ports.AuditQuery{Filter: domain.AllOf(bounds...), Before: tc.before})
			if err != nil || len(got) != tc.want {
				t.Errorf("%s: %d events, %v; want %d and no error", tc.name, len(got), err, tc.want)
			}
		}
	})
}

// Every time is written as the very instant on PostgreSQL, before AD 1
// too (its 1 BC is Go's year 0; leap days included); one outside what a
// timestamptz holds is written as the nearest it holds.
func TestPostgresTimeLiteralIsTheInstant(t *testing.T) {
	t.Parallel()
	db, err := sql.Open("pgx", pgtest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	first := time.Date(-4712, time.November, 24, 0, 0, 0, 0, time.UTC)
	last := time.Date(294276, time.December, 31, 23, 59, 59, 999999000, time.UTC)
	for _, tc := range []struct{ in, want time.Time }{
		{time.Date(2026, 11, 27, 6, 0, 0, 123456000, time.UTC), time.Date(2026, 11, 27, 6, 0, 0, 123456000, time.UTC)},
		{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(0, 12, 31, 23, 59, 59, 999999000, time.UTC), time.Date(0, 12, 31, 23, 59, 59, 999999000, time.UTC)},
		{time.Date(0, 2, 29, 12, 0, 0, 0, time.UTC), time.Date(0, 2, 29, 12, 0, 0, 0, time.UTC)},
		{time.Date(-4, 2, 29, 0, 0, 0, 0, time.UTC), time.Date(-4, 2, 29, 0, 0, 0, 0, time.UTC)},
		{first, first},
		{first.Add(-time.Microsecond), first},
		{time.UnixMicro(math.MinInt64), first},
		{time.UnixMicro(math.MaxInt64), time.UnixMicro(math.MaxInt64)},
		{last, last},
		{last.Add(time.Hour), last},
	} {
		// The day number and the clock, both exact whatever the era.
		lit := bunstore.PGTimeLiteral(tc.in)
		var (
			days  int64
			clock string
		)
		q := "SELECT (" + lit + " AT TIME ZONE 'UTC')::date - DATE '1970-01-01', to_char(" + lit + " AT TIME ZONE 'UTC', 'HH24:MI:SS.US')"
		if err := db.QueryRowContext(t.Context(), q).Scan(&days, &clock); err != nil {
			t.Errorf("%s (%s): %v", tc.in, lit, err)
			continue
		}
		wantDays := tc.want.Unix() / 86400
		if tc.want.Unix()%86400 < 0 {
			wantDays--
		}
		if days != wantDays || clock != tc.want.Format("15:04:05.000000") {
			t.Errorf("%s is written %s: day %d at %s; want day %d at %s", tc.in, lit, days, clock, wantDays, tc.want.Format("15:04:05.000000"))
		}
	}
}
