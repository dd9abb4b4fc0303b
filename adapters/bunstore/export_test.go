package bunstore

import (
	"time"

	"github.com/uptrace/bun"
)

// RevokedFamiliesQuery is the query of RefreshStore.RevokedFamilies, for
// the query-plan test.
const RevokedFamiliesQuery = revokedFamiliesQuery

// onPostgres reports whether db's engine is PostgreSQL's, for tests that
// measure or check a PostgreSQL-only detail.
func onPostgres(db bun.IDB) bool { _, ok := engineOf(db).(postgresEngine); return ok }

// PGTimeLiteral is the timestamptz literal a query argument of time t is
// written as on PostgreSQL.
func PGTimeLiteral(t time.Time) string { return string(appendPGTime(nil, t.UTC())) }
