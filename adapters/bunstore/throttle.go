package bunstore

import (
	"context"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/bound"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// LoginThrottle is the ports.LoginThrottle of the login_failures table:
// one row per counted attempt (a failed login, or one whose password is
// being checked), so concurrent attempts never overwrite a count.
//
// Reserve is one transaction: on PostgreSQL it first takes a
// transaction-scoped advisory lock per key (in key order, so two
// transactions never wait for each other crosswise), then counts and
// inserts; replicas sharing the database queue on the same locks, and a
// READ COMMITTED count after the lock sees every attempt the previous
// holder committed. On SQLite the IMMEDIATE transaction holds the
// database already.
type LoginThrottle struct {
	db     *DB
	bounds bound.Bounds
}

var _ ports.LoginThrottle = (*LoginThrottle)(nil)

// For implements ports.LoginThrottle (CacheRepository.For).
func (l *LoginThrottle) For(caller domain.Caller) ports.LoginThrottle {
	v := *l
	v.bounds.Caller = caller
	return &v
}

// NewLoginThrottle returns the throttle over db, which must come from Open
// and have been migrated.
func NewLoginThrottle(db *DB) *LoginThrottle {
	return &LoginThrottle{db: db, bounds: db.bounds}
}

// throttleLockClass is the first half of the two-key advisory locks of
// Reserve ("thrt"); the two-key space never meets Migrate's one-key lock.
const throttleLockClass int32 = 0x74687274

// Reserve counts one attempt at now under every key, unless one already
// holds its limit of attempts at or after since.
func (l *LoginThrottle) Reserve(ctx context.Context, keys []ports.ThrottleKey, now, since time.Time) (_ bool, _ time.Time, err error) {
	ctx, call := l.bounds.Enter(ctx)
	defer call.Done(&err)
	var (
		ok     bool
		oldest time.Time
	)
	err = authInTx(ctx, call, l.db, "reserve a login attempt", func(ctx context.Context, tx bun.Tx) error {
		ok, oldest = false, time.Time{}
		names := make([]string, 0, len(keys))
		for _, k := range keys {
			names = append(names, k.Key)
		}
		slices.Sort(names)
		if err := l.db.eng.LockThrottleKeys(ctx, tx, throttleLockClass, slices.Compact(names)); err != nil {
			return err
		}
		for _, k := range keys {
			var (
				n   int
				old engine.NullTime
			)
			err := tx.QueryRowContext(ctx, `SELECT count(*), min("at") FROM login_failures WHERE "key" = ? AND "at" >= ?`,
				k.Key, engine.TimeArg(since)).Scan(&n, &old)
			if err != nil {
				return dberr.Wrap("count login attempts", err)
			}
			if n >= k.Limit {
				oldest = old.Time
				return nil
			}
		}
		for _, k := range keys {
			if _, err := tx.ExecContext(ctx, `INSERT INTO login_failures ("key", "at") VALUES (?, ?)`, k.Key, engine.TimeArg(now)); err != nil {
				return dberr.Wrap("count a login attempt", err)
			}
		}
		ok = true
		return nil
	})
	if err != nil {
		return false, time.Time{}, err
	}
	return ok, oldest, nil
}

// Release forgets one attempt counted under key at at.
func (l *LoginThrottle) Release(ctx context.Context, key string, at time.Time) (err error) {
	ctx, call := l.bounds.Enter(ctx)
	defer call.Done(&err)
	_, err = l.db.exec(ctx, call, "release a login attempt", `DELETE FROM login_failures WHERE id IN (
		SELECT id FROM login_failures WHERE "key" = ? AND "at" = ? LIMIT 1)`, key, engine.TimeArg(at))
	return err
}

// Failures returns how many failures were recorded for key at or after
// since, and the time of the oldest of them (the zero time when none).
func (l *LoginThrottle) Failures(ctx context.Context, key string, since time.Time) (_ int, _ time.Time, err error) {
	ctx, call := l.bounds.Enter(ctx)
	defer call.Done(&err)
	var (
		n      int
		oldest engine.NullTime
	)
	err = l.db.sql.QueryRowContext(ctx, `SELECT count(*), min("at") FROM login_failures WHERE "key" = ? AND "at" >= ?`,
		key, engine.TimeArg(since)).Scan(&n, &oldest)
	if err != nil {
		return 0, time.Time{}, dberr.Wrap("count login failures", err)
	}
	return n, oldest.Time, nil
}

// RecordFailure counts one failure for key at now.
func (l *LoginThrottle) RecordFailure(ctx context.Context, key string, now time.Time) (err error) {
	ctx, call := l.bounds.Enter(ctx)
	defer call.Done(&err)
	_, err = l.db.exec(ctx, call, "record login failure", `INSERT INTO login_failures ("key", "at") VALUES (?, ?)`, key, engine.TimeArg(now))
	return err
}

// Reset forgets the failures of key.
func (l *LoginThrottle) Reset(ctx context.Context, key string) (err error) {
	ctx, call := l.bounds.Enter(ctx)
	defer call.Done(&err)
	_, err = l.db.exec(ctx, call, "reset login failures", `DELETE FROM login_failures WHERE "key" = ?`, key)
	return err
}

// PurgeFailures removes at most limit failures recorded before t, oldest
// first, and returns how many it removed. A limit below 1 removes nothing.
// On PostgreSQL replicas purging together take disjoint batches (SKIP
// LOCKED).
func (l *LoginThrottle) PurgeFailures(ctx context.Context, before time.Time, limit int) (_ int, err error) {
	ctx, call := l.bounds.Enter(ctx)
	defer call.Done(&err)
	if limit < 1 {
		return 0, nil
	}
	return l.db.exec(ctx, call, "purge login failures", `DELETE FROM login_failures WHERE id IN (
		SELECT id FROM login_failures WHERE "at" < ? ORDER BY "at" LIMIT ?`+l.db.eng.SkipLocked()+`)`,
		engine.TimeArg(before), limit)
}
