package bunstore

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/ports"
)

// LoginThrottle is the ports.LoginThrottle of the login_failures table:
// one row per failure, so concurrent failures never overwrite a count.
type LoginThrottle struct {
	db     *bun.DB
	bounds bounds
}

var _ ports.LoginThrottle = (*LoginThrottle)(nil)

// NewLoginThrottle returns the throttle over db, which must come from Open
// and have been migrated.
func NewLoginThrottle(db *bun.DB, opts ...RepoOption) *LoginThrottle {
	return &LoginThrottle{db: db, bounds: newBounds(opts)}
}

// Failures returns how many failures were recorded for key at or after
// since, and the time of the oldest of them (the zero time when none).
func (l *LoginThrottle) Failures(ctx context.Context, key string, since time.Time) (_ int, _ time.Time, err error) {
	ctx, done := l.bounds.enter(ctx)
	defer done(&err)
	var (
		n      int
		oldest nullTime
	)
	err = l.db.QueryRowContext(ctx, `SELECT count(*), min("at") FROM login_failures WHERE "key" = ? AND "at" >= ?`,
		key, timeArg(since)).Scan(&n, &oldest)
	if err != nil {
		return 0, time.Time{}, dbError("count login failures", err)
	}
	return n, oldest.Time, nil
}

// RecordFailure counts one failure for key at now.
func (l *LoginThrottle) RecordFailure(ctx context.Context, key string, now time.Time) (err error) {
	ctx, done := l.bounds.enter(ctx)
	defer done(&err)
	if _, err := l.db.ExecContext(ctx, `INSERT INTO login_failures ("key", "at") VALUES (?, ?)`, key, timeArg(now)); err != nil {
		return dbError("record login failure", err)
	}
	return nil
}

// Reset forgets the failures of key.
func (l *LoginThrottle) Reset(ctx context.Context, key string) (err error) {
	ctx, done := l.bounds.enter(ctx)
	defer done(&err)
	if _, err := l.db.ExecContext(ctx, `DELETE FROM login_failures WHERE "key" = ?`, key); err != nil {
		return dbError("reset login failures", err)
	}
	return nil
}

// PurgeFailures removes at most limit failures recorded before t, oldest
// first, and returns how many it removed. A limit below 1 removes nothing.
// On PostgreSQL replicas purging together take disjoint batches (SKIP
// LOCKED).
func (l *LoginThrottle) PurgeFailures(ctx context.Context, before time.Time, limit int) (_ int, err error) {
	ctx, done := l.bounds.enter(ctx)
	defer done(&err)
	if limit < 1 {
		return 0, nil
	}
	res, err := l.db.ExecContext(ctx, `DELETE FROM login_failures WHERE id IN (
		SELECT id FROM login_failures WHERE "at" < ? ORDER BY "at" LIMIT ?`+skipLocked(l.db)+`)`,
		timeArg(before), limit)
	if err != nil {
		return 0, dbError("purge login failures", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, dbError("purge login failures", err)
	}
	return int(n), nil
}
