package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
)

// A write under a quota is one statement that writes only if the count of
// its assignee (cache_usage, kept by triggers: usage_schema.go) leaves
// room, so the check and the write are atomic (ARCHITECTURE.md, "Quotas"):
// on PostgreSQL it selects FROM a one-row CTE calling cache_usage_admit,
// which holds the assignee's advisory lock until the write commits (a
// PL/pgSQL function, so its plans are kept per connection); on SQLite a
// NOT EXISTS over the count row runs under the one write lock.
//
// Only a write that grows a limited count carries the condition
// (domain.Growth). A statement that wrote nothing is examined (refusal):
// room made meanwhile, or the assignee's dead rows removed there, lead to
// another try; otherwise the write is refused with
// domain.ErrCacheQuotaExceeded.

// maxQuotaTries bounds how often a create goes round a refusal that
// cleared its way (expired rows removed, room made meanwhile).
const maxQuotaTries = 3

// quotaGuard is the room one write needs in its assignee's count.
type quotaGuard struct{ engine.Guard }

// newQuotaGuard returns the guard of writing next in place of prev (nil
// for a new entry) under q, or nil when the write needs no room: no limit
// on what it grows.
func newQuotaGuard(q domain.Quota, prev *domain.Entry, next domain.Entry) *quotaGuard {
	entries, bytes := domain.Growth(prev, next)
	if !(entries > 0 && q.MaxEntries > 0 || bytes > 0 && q.MaxBytes > 0) {
		return nil
	}
	return &quotaGuard{engine.Guard{Quota: q, Assignee: next.AssigneeID, Entries: entries, Bytes: bytes}}
}

// admit says whether usage u leaves room for the write.
func (g *quotaGuard) admit(u domain.Usage) error { return g.Quota.Admit(u, g.Entries, g.Bytes) }

// guarded returns the parts that make a statement write only within the
// guard (nil: the plain statement; engine.Engine.Guarded).
func (r *CacheRepository) guarded(g *quotaGuard) (with, from, where string, args []any) {
	if g == nil {
		return "", "", "", nil
	}
	return r.eng.Guarded(r.name, g.Guard)
}

// insert runs the INSERT of e, within g when g is set, and reports how
// many rows it wrote (0: refused by the guard).
func (r *CacheRepository) insert(ctx context.Context, db bun.IDB, e domain.Entry, g *quotaGuard) (int64, error) {
	if tx, ok := db.(bun.Tx); ok && r.writer.statements() != nil {
		args := []any{e.ID, e.Key, e.Type, e.AssigneeID, string(e.Data), e.Version,
			r.eng.Time(e.DateCreated), r.eng.Time(e.DateUpdated), engine.DriverNullTime(r.eng, e.DateDeleted),
			engine.DriverNullTime(r.eng, e.ExpiresAt), foldedArg(e.Key), foldedArg(e.Type)}
		if g == nil {
			return r.execPrepared(ctx, tx, stmtInsert, args...)
		}
		return r.execPrepared(ctx, tx, stmtInsertGuarded, append(args, engine.SQLiteQuotaArgs(r.name, g.Guard)...)...)
	}
	values := []any{e.ID, e.Key, e.Type, e.AssigneeID, string(e.Data), e.Version,
		engine.TimeArg(e.DateCreated), engine.TimeArg(e.DateUpdated), engine.NullTimeArg(e.DateDeleted), engine.NullTimeArg(e.ExpiresAt),
		foldedArg(e.Key), foldedArg(e.Type)}
	if g == nil {
		return dberr.Exec(ctx, db, "INSERT INTO ? ("+cacheWriteColumns+") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			append([]any{r.table}, values...)...)
	}
	with, from, where, gargs := r.guarded(g)
	query := with + "INSERT INTO ? (" + cacheWriteColumns + ") SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?"
	var args []any
	if from != "" {
		query += " FROM " + from
		args = append(append(append(args, gargs...), r.table), values...)
	} else {
		query += " WHERE " + where
		args = append(append([]any{r.table}, values...), gargs...)
	}
	return dberr.Exec(ctx, db, query, args...)
}

// usage reads the counts of assignee, summed over its shards.
func (r *CacheRepository) usage(ctx context.Context, db bun.IDB, assignee string) (u domain.Usage, err error) {
	err = dberr.WithRetry(ctx, func() error {
		return db.QueryRowContext(ctx, "SELECT coalesce(sum(entries), 0), coalesce(sum(bytes), 0) FROM "+usageTable+
			" WHERE entity = ? AND assignee_id = ?", r.name, assignee).Scan(&u.Entries, &u.Bytes)
	})
	if err != nil {
		return domain.Usage{}, dberr.Wrap("read the assignee's usage", err)
	}
	return u, nil
}

// refusal examines a write that g refused: it reports whether to try
// again, having removed the assignee's dead rows (expired or deleted) or
// seen room made meanwhile; otherwise it returns the quota error.
func (r *CacheRepository) refusal(ctx context.Context, db bun.IDB, g *quotaGuard, now time.Time) (retry bool, err error) {
	u, err := r.usage(ctx, db, g.Assignee)
	if err != nil {
		return false, err
	}
	refused := g.admit(u)
	if refused == nil {
		return true, nil
	}
	n, err := dberr.Exec(ctx, db, "DELETE FROM ? WHERE assignee_id = ? AND "+deadAt, r.table, g.Assignee, engine.TimeArg(now))
	if err != nil {
		return false, dberr.Wrap("remove the assignee's dead entries", err)
	}
	return n > 0, refused
}

// liveHolder returns the id of a live entry holding id or natural key k
// at now ("" when none): a write refused by its quota that would conflict
// anyway reports the conflict.
func (r *CacheRepository) liveHolder(ctx context.Context, db bun.IDB, id string, k domain.NaturalKey, now time.Time) (string, error) {
	var holder string
	err := dberr.WithRetry(ctx, func() error {
		return db.QueryRowContext(ctx, "SELECT id FROM ? WHERE (id = ? OR (key = ? AND type = ? AND assignee_id = ?)) AND "+
			liveAt+" ORDER BY id = ? DESC LIMIT 1", r.table, id, k.Key, k.Type, k.AssigneeID, engine.TimeArg(now), id).Scan(&holder)
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", nil
	case err != nil:
		return "", dberr.Wrap("check the entry's keys", err)
	}
	return holder, nil
}

// The statements of an SQLite repository's entry writes, prepared once
// (engine.Prepared): SQLite compiles a statement's triggers with it. They
// are used inside the write group's transaction; a write outside a group
// sends its text.
const (
	stmtInsert = iota
	stmtInsertGuarded
	stmtUpdate
	stmtUpdateGuarded
)

// sqliteWrites returns the prepared set of table's entry writes.
func sqliteWrites(db *DB, table string) *engine.Prepared {
	t := engine.QuoteIdent(table)
	insert := "INSERT INTO " + t + " (" + cacheWriteColumns + ") "
	update := "UPDATE " + t + " SET key = ?, type = ?, assignee_id = ?, data = ?, version = ?, " +
		"date_created = ?, date_updated = ?, date_deleted = ?, expires_at = ?, key_folded = ?, type_folded = ? " +
		"WHERE id = ? AND version = ? AND date_created = ? AND date_deleted IS NULL"
	guard := engine.SQLiteQuotaCheck(usageTable)
	return engine.NewPrepared(db.sql, db.eng, []string{
		insert + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		insert + "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE " + guard,
		update,
		update + " AND " + guard,
	}...)
}

// execPrepared runs prepared statement i in tx, retrying transient
// failures, and returns how many rows it changed.
func (r *CacheRepository) execPrepared(ctx context.Context, tx bun.Tx, i int, args ...any) (int64, error) {
	var n int64
	err := dberr.WithRetry(ctx, func() error {
		res, err := r.writer.statements().Exec(ctx, tx, i, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
