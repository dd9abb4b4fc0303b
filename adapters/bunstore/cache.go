package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/bound"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// maxUpdateTries bounds how often Update and Delete reload an entry that
// other writers keep changing under them.
const maxUpdateTries = 50

// maxCreateTries bounds how often Create clears dead rows out of its way.
const maxCreateTries = 3

// CacheRepository stores the entries of one cache entity in one table, on
// SQLite or PostgreSQL. Create is one INSERT, and Update and Delete are
// optimistic (read, apply fn, UPDATE … WHERE version matches, reload on a
// miss). How a write reaches the database is its writer's, chosen once by
// the constructor (cache_writer.go).
//
// Rows are soft-deleted and expire by time; they stay in the table, dead,
// until Purge removes them or a Create needs their id or natural key.
// Deleting leaves an entry's version and DateUpdated as they were and sets
// DateDeleted.
type CacheRepository struct {
	db    bun.IDB
	table bun.Ident
	// name is the table's name as a value: its entity in cache_usage.
	name   string
	bounds bound.Bounds
	// eng is the engine of db, chosen once by Open (internal/engine).
	eng    engine.Engine
	handle *DB
	// paging overrides the page bounds of List, for tests (cache_page.go).
	paging listPaging
	// writer runs the entry writes: directly, in the SQLite write group,
	// or with PostgreSQL's create batches (cache_writer.go). The
	// constructor chooses once.
	writer entryWriter
	// batchedCreates counts the creates written by statements of several,
	// for tests; its copies (For) count in the same.
	batchedCreates *atomic.Int64
	// reads are the point reads by id of an SQLite file: a prepared
	// statement and the entries read since the file last changed
	// (cache_read.go); nil elsewhere.
	reads *pointReads
}

// listPaging holds a repository's page bounds; tests set smaller ones.
// Zero fields take listPageRowsMax and listPageBytes (cache_page.go).
type listPaging struct {
	rows, bytes int
	// rowRead, when set, runs after each row is read, with the page's
	// statement still open (the connection taken): tests block it.
	rowRead func(context.Context)
}

var _ ports.CacheRepository = (*CacheRepository)(nil)

// NewCacheRepository returns the repository of table, which Migrate
// created.
func NewCacheRepository(db *DB, table string) *CacheRepository {
	r := &CacheRepository{db: db.sql, table: bun.Ident(table), name: table, bounds: db.bounds, eng: db.eng, handle: db,
		batchedCreates: new(atomic.Int64)}
	r.writer = newEntryWriter(r, db)
	r.reads = newPointReads(db, table)
	return r
}

// For implements ports.CacheRepository: a copy whose calls enter their
// bounds as caller's (bound.Bounds.Caller). The writer stays r's: a write
// it runs is inside a call that entered the copy's bounds.
func (r *CacheRepository) For(caller domain.Caller) ports.CacheRepository {
	v := *r
	v.bounds.Caller = caller
	return &v
}

const cacheColumns = "id, key, type, assignee_id, data, version, date_created, date_updated, date_deleted, expires_at"

// cacheWriteColumns are the columns a write sets: cacheColumns, then the
// folded key and type (foldedArg in fold_schema.go).
const cacheWriteColumns = cacheColumns + ", key_folded, type_folded"

// liveAt is the condition of rows visible at a time given as its one
// argument.
const liveAt = "date_deleted IS NULL AND (expires_at IS NULL OR expires_at > ?)"

// deadAt is the condition of rows deleted, or expired at its one argument.
const deadAt = "(date_deleted IS NOT NULL OR expires_at <= ?)"

// Create implements ports.CacheRepository. When live entries hold both e's
// id and e's natural key, the id wins: ErrCacheIDTaken, as the port says.
// A conflict is reported before the quota (cache_quota.go).
func (r *CacheRepository) Create(ctx context.Context, e domain.Entry, now time.Time, q domain.Quota) (err error) {
	enter := r.bounds.Enter
	if r.writer.groupsCreates() {
		enter = r.bounds.EnterGrouped
	}
	ctx, call := enter(ctx)
	defer call.Done(&err)
	return r.writer.create(ctx, call, e.Normalized(), now, q)
}

// create inserts e in db, leaving room in q for extra bytes besides e's
// (an idempotency record's; zero for a plain create).
func (r *CacheRepository) create(ctx context.Context, db bun.IDB, e domain.Entry, now time.Time, q domain.Quota, extra int64) error {
	g := newQuotaGuard(q, nil, e)
	if g != nil {
		g.Bytes += extra
		if refused := g.admit(domain.Usage{}); refused != nil {
			// Too large for the quota whatever the assignee holds.
			return r.conflictOr(ctx, db, e, now, refused)
		}
	}
	for try, quotaTry := 1, 1; ; {
		n, err := r.insertIn(ctx, db, e, g)
		if err == nil && n == 1 {
			return nil
		}
		if err == nil {
			retry, refused := r.refusal(ctx, db, g, now)
			if refused != nil && !errors.Is(refused, domain.ErrCacheQuotaExceeded) {
				return refused
			}
			if !retry || quotaTry == maxQuotaTries {
				if refused == nil {
					refused = domain.ErrCacheQuotaExceeded
				}
				return r.conflictOr(ctx, db, e, now, refused)
			}
			quotaTry++
			continue
		}
		uv, ok := dberr.AsUniqueViolation(err)
		if !ok {
			return dberr.Wrap("create entry", err)
		}
		removed := int64(0)
		if try < maxCreateTries {
			// Only dead rows may stand in the way: clear them and try again.
			removed, err = dberr.Exec(ctx, db, "DELETE FROM ? WHERE (id = ? OR (key = ? AND type = ? AND assignee_id = ? AND date_deleted IS NULL)) AND "+deadAt,
				r.table, e.ID, e.Key, e.Type, e.AssigneeID, engine.TimeArg(now))
			if err != nil {
				return dberr.Wrap("clear dead entries", err)
			}
		}
		try++
		if removed == 0 {
			if uv.PrimaryKey {
				return domain.ErrCacheIDTaken
			}
			// SQLite names only the first constraint it trips over; ask
			// whether the id is taken too.
			n, err := db.NewSelect().TableExpr("?", r.table).Where("id = ?", e.ID).Count(ctx)
			if err != nil {
				return dberr.Wrap("check entry id", err)
			}
			if n > 0 {
				return domain.ErrCacheIDTaken
			}
			return domain.ErrCacheEntityAlreadyExists
		}
	}
}

// conflictOr returns the conflict a live entry holding e's id or natural
// key makes, or else refused.
func (r *CacheRepository) conflictOr(ctx context.Context, db bun.IDB, e domain.Entry, now time.Time, refused error) error {
	holder, err := r.liveHolder(ctx, db, e.ID, e.NaturalKey(), now)
	switch {
	case err != nil:
		return err
	case holder == e.ID:
		return domain.ErrCacheIDTaken
	case holder != "":
		return domain.ErrCacheEntityAlreadyExists
	}
	return refused
}

// Get implements ports.CacheRepository.
// On an SQLite file it answers from the entries it read since the file
// last changed, when it holds id (cache_read.go).
func (r *CacheRepository) Get(ctx context.Context, id string, now time.Time) (domain.Entry, error) {
	if r.reads == nil {
		return r.getBounded(ctx, id, now)
	}
	return r.reads.get(ctx, r, id, now)
}

// getBounded is Get without the cache: a bounded call that reads the row.
func (r *CacheRepository) getBounded(ctx context.Context, id string, now time.Time) (_ domain.Entry, err error) {
	ctx, call := r.bounds.Enter(ctx)
	defer call.Done(&err)
	if r.reads != nil {
		return r.reads.read(ctx, r, id, now)
	}
	return r.get(ctx, r.db, id, now)
}

// get reads the live entry id from db.
//
// The point reads (get, GetByKey) select the row not deleted and test its
// expiry in Go, as liveAt would: a range condition on expires_at could
// make PostgreSQL's planner walk the expiry index over every row a sweep
// removed and vacuum has not yet reclaimed (docs/benchmarks.md, "Sweeps").
func (r *CacheRepository) get(ctx context.Context, db bun.IDB, id string, now time.Time) (domain.Entry, error) {
	return r.getOne(ctx, db, now, "SELECT "+cacheColumns+" FROM ? WHERE id = ? AND date_deleted IS NULL", r.table, id)
}

// GetByKey implements ports.CacheRepository.
func (r *CacheRepository) GetByKey(ctx context.Context, k domain.NaturalKey, now time.Time) (_ domain.Entry, err error) {
	ctx, call := r.bounds.Enter(ctx)
	defer call.Done(&err)
	return r.getOne(ctx, r.db, now, "SELECT "+cacheColumns+" FROM ? WHERE key = ? AND type = ? AND assignee_id = ? AND date_deleted IS NULL",
		r.table, k.Key, k.Type, k.AssigneeID)
}

// getOne reads the one row query selects and returns it if it has not
// expired at now.
func (r *CacheRepository) getOne(ctx context.Context, db bun.IDB, now time.Time, query string, args ...any) (domain.Entry, error) {
	var e domain.Entry
	err := dberr.WithRetry(ctx, func() error {
		var err error
		e, err = scanEntry(db.QueryRowContext(ctx, query, args...))
		return err
	})
	return pointAnswer(e, err, now)
}

// pointAnswer is the answer of a point read that found e, or failed with err:
// e unless it has expired at now.
func pointAnswer(e domain.Entry, err error, now time.Time) (domain.Entry, error) {
	if err == nil && e.ExpiresAt != nil && !e.ExpiresAt.After(now) {
		err = sql.ErrNoRows
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return domain.Entry{}, domain.ErrCacheNotFound
	case err != nil:
		return domain.Entry{}, dberr.Wrap("read entry", err)
	}
	return e, nil
}

// Update implements ports.CacheRepository. Only Version is set by the
// repository; every other field, DateUpdated included, is what fn left
// (the id excepted, which fn cannot change).
func (r *CacheRepository) Update(ctx context.Context, id string, now time.Time, q domain.Quota, fn func(*domain.Entry) error) (_ domain.Entry, err error) {
	ctx, call := r.bounds.Enter(ctx)
	defer call.Done(&err)
	return r.writeEntry(ctx, call, func(ctx context.Context, db bun.IDB) (domain.Entry, error) { return r.update(ctx, db, id, now, q, fn) })
}

// writeEntry runs fn, a write of one entry, through r's writer and returns
// the entry fn gave.
func (r *CacheRepository) writeEntry(ctx context.Context, call *bound.Call, fn func(ctx context.Context, db bun.IDB) (domain.Entry, error)) (domain.Entry, error) {
	var out domain.Entry
	err := r.writer.write(ctx, call, func(ctx context.Context, db bun.IDB) (err error) {
		out, err = fn(ctx, db)
		return err
	})
	return out, err
}

func (r *CacheRepository) update(ctx context.Context, db bun.IDB, id string, now time.Time, q domain.Quota, fn func(*domain.Entry) error) (domain.Entry, error) {
	for try := 0; try < maxUpdateTries; try++ {
		cur, err := r.get(ctx, db, id, now)
		if err != nil {
			return domain.Entry{}, err
		}
		next := cur
		if err := fn(&next); err != nil {
			return domain.Entry{}, err
		}
		next.ID, next.Version = cur.ID, cur.Version+1
		next = next.Normalized()
		n, err := r.replace(ctx, db, cur, next, now, q)
		if err != nil {
			return domain.Entry{}, err
		}
		if n == 1 {
			return next, nil
		}
	}
	return domain.Entry{}, fmt.Errorf("bunstore: update entry: changed by others %d times in a row", maxUpdateTries)
}

// replace writes next over cur when the row still holds cur's version
// and next fits q, and reports how many rows it changed (0: the caller
// reloads and tries again). A natural-key collision with a dead row clears
// that row; with a live one it is ErrCacheEntityAlreadyExists. A write
// past q is ErrCacheQuotaExceeded, unless the entry changed meanwhile
// (then 0).
func (r *CacheRepository) replace(ctx context.Context, db bun.IDB, cur, next domain.Entry, now time.Time, q domain.Quota) (int64, error) {
	g := newQuotaGuard(q, &cur, next)
	if g != nil {
		if refused := g.admit(domain.Usage{}); refused != nil {
			return 0, r.keyConflictOr(ctx, db, cur, next, now, refused)
		}
	}
	for try := 1; ; try++ {
		n, err := r.updateRow(ctx, db, cur, next, g)
		if err == nil && (n == 1 || g == nil) {
			return n, nil
		}
		if err == nil {
			return 0, r.updateRefusal(ctx, db, g, cur, next, now)
		}
		if _, ok := dberr.AsUniqueViolation(err); !ok {
			return 0, dberr.Wrap("update entry", err)
		}
		removed := int64(0)
		if try < maxCreateTries {
			removed, err = dberr.Exec(ctx, db, "DELETE FROM ? WHERE key = ? AND type = ? AND assignee_id = ? AND date_deleted IS NULL AND id <> ? AND "+deadAt,
				r.table, next.Key, next.Type, next.AssigneeID, next.ID, engine.TimeArg(now))
			if err != nil {
				return 0, dberr.Wrap("clear dead entries", err)
			}
		}
		if removed == 0 {
			return 0, domain.ErrCacheEntityAlreadyExists
		}
	}
}

// updateRow runs the UPDATE of cur to next, within g when g is set, and
// reports how many rows it changed.
func (r *CacheRepository) updateRow(ctx context.Context, db bun.IDB, cur, next domain.Entry, g *quotaGuard) (int64, error) {
	if tx, ok := db.(bun.Tx); ok && r.writer.statements() != nil {
		args := []any{next.Key, next.Type, next.AssigneeID, string(next.Data), next.Version,
			r.eng.Time(next.DateCreated), r.eng.Time(next.DateUpdated), engine.DriverNullTime(r.eng, next.DateDeleted),
			engine.DriverNullTime(r.eng, next.ExpiresAt), foldedArg(next.Key), foldedArg(next.Type),
			cur.ID, cur.Version, r.eng.Time(cur.DateCreated)}
		if g == nil {
			return r.execPrepared(ctx, tx, stmtUpdate, args...)
		}
		return r.execPrepared(ctx, tx, stmtUpdateGuarded, append(args, engine.SQLiteQuotaArgs(r.name, g.Guard)...)...)
	}
	with, from, where, gargs := r.guarded(g)
	query := with + "UPDATE ? SET key = ?, type = ?, assignee_id = ?, data = ?, version = ?, " +
		"date_created = ?, date_updated = ?, date_deleted = ?, expires_at = ?, key_folded = ?, type_folded = ? "
	args := []any{r.table, next.Key, next.Type, next.AssigneeID, string(next.Data), next.Version,
		engine.TimeArg(next.DateCreated), engine.TimeArg(next.DateUpdated), engine.NullTimeArg(next.DateDeleted), engine.NullTimeArg(next.ExpiresAt),
		foldedArg(next.Key), foldedArg(next.Type), cur.ID, cur.Version, engine.TimeArg(cur.DateCreated)}
	if from != "" {
		query += "FROM " + from + " "
		args = append(gargs, args...)
	}
	query += "WHERE id = ? AND version = ? AND date_created = ? AND date_deleted IS NULL"
	if where != "" {
		query += " AND " + where
		args = append(args, gargs...)
	}
	return dberr.Exec(ctx, db, query, args...)
}

// updateRefusal examines an update of cur to next that wrote nothing
// under g: nil (reload and try again) when the entry changed meanwhile or
// the refusal made way, else the quota error, or the conflict next's
// natural key makes.
func (r *CacheRepository) updateRefusal(ctx context.Context, db bun.IDB, g *quotaGuard, cur, next domain.Entry, now time.Time) error {
	retry, refused := r.refusal(ctx, db, g, now)
	switch {
	case refused != nil && !errors.Is(refused, domain.ErrCacheQuotaExceeded):
		return refused
	case retry:
		return nil
	}
	var same int
	err := dberr.WithRetry(ctx, func() error {
		return db.QueryRowContext(ctx, "SELECT count(*) FROM ? WHERE id = ? AND version = ? AND date_created = ? AND date_deleted IS NULL",
			r.table, cur.ID, cur.Version, engine.TimeArg(cur.DateCreated)).Scan(&same)
	})
	switch {
	case err != nil:
		return dberr.Wrap("read entry", err)
	case same == 0:
		return nil
	}
	return r.keyConflictOr(ctx, db, cur, next, now, refused)
}

// keyConflictOr returns ErrCacheEntityAlreadyExists when next takes a
// natural key another live entry holds, or else refused.
func (r *CacheRepository) keyConflictOr(ctx context.Context, db bun.IDB, cur, next domain.Entry, now time.Time, refused error) error {
	if next.NaturalKey() == cur.NaturalKey() {
		return refused
	}
	holder, err := r.liveHolder(ctx, db, "", next.NaturalKey(), now)
	switch {
	case err != nil:
		return err
	case holder != "" && holder != cur.ID:
		return domain.ErrCacheEntityAlreadyExists
	}
	return refused
}

// Delete implements ports.CacheRepository.
func (r *CacheRepository) Delete(ctx context.Context, id string, now time.Time, fn func(domain.Entry) error) (_ domain.Entry, err error) {
	ctx, call := r.bounds.Enter(ctx)
	defer call.Done(&err)
	now = domain.Normalize(now)
	return r.writeEntry(ctx, call, func(ctx context.Context, db bun.IDB) (domain.Entry, error) { return r.delete(ctx, db, id, now, fn) })
}

func (r *CacheRepository) delete(ctx context.Context, db bun.IDB, id string, now time.Time, fn func(domain.Entry) error) (domain.Entry, error) {
	for try := 0; try < maxUpdateTries; try++ {
		cur, err := r.get(ctx, db, id, now)
		if err != nil {
			return domain.Entry{}, err
		}
		if err := fn(cur); err != nil {
			return domain.Entry{}, err
		}
		n, err := dberr.Exec(ctx, db, "UPDATE ? SET date_deleted = ? WHERE id = ? AND version = ? AND date_created = ? AND date_deleted IS NULL",
			r.table, engine.TimeArg(now), cur.ID, cur.Version, engine.TimeArg(cur.DateCreated))
		if err != nil {
			return domain.Entry{}, dberr.Wrap("delete entry", err)
		}
		if n == 1 {
			cur.DateDeleted = &now
			return cur, nil
		}
	}
	return domain.Entry{}, fmt.Errorf("bunstore: delete entry: changed by others %d times in a row", maxUpdateTries)
}

// DeleteByAssignee implements ports.CacheRepository.
func (r *CacheRepository) DeleteByAssignee(ctx context.Context, assigneeID string, now time.Time) (_ int, err error) {
	ctx, call := r.bounds.Enter(ctx)
	defer call.Done(&err)
	var n int64
	err = gated(ctx, call, r.handle, func() (err error) {
		n, err = dberr.Exec(ctx, r.db, "UPDATE ? SET date_deleted = ? WHERE assignee_id = ? AND "+liveAt,
			r.table, engine.TimeArg(now), assigneeID, engine.TimeArg(now))
		return err
	})
	if err != nil {
		return 0, dberr.Wrap("delete the assignee's entries", err)
	}
	return int(n), nil
}

// Purge implements ports.CacheRepository. Purgers running at once remove
// disjoint rows (see purgeStatement).
func (r *CacheRepository) Purge(ctx context.Context, now time.Time, limit int) (_ int, err error) {
	ctx, call := r.bounds.Enter(ctx)
	defer call.Done(&err)
	if limit <= 0 {
		return 0, nil
	}
	var n int64
	err = gated(ctx, call, r.handle, func() (err error) {
		n, err = r.eng.Purge(ctx, r.db, r.table, now, limit)
		return err
	})
	if err != nil {
		return 0, dberr.Wrap("purge entries", err)
	}
	return int(n), nil
}

// rowScanner is *sql.Row or *sql.Rows.
type rowScanner interface {
	Scan(dest ...any) error
}

// scanAll reads every row of rows with scan and closes rows.
func scanAll[T any](rows *sql.Rows, scan func(rowScanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// scanEntry converts one row of cacheColumns to an entry.
func scanEntry(s rowScanner) (domain.Entry, error) {
	var (
		e                          domain.Entry
		created, updated, del, exp engine.NullTime
	)
	if err := s.Scan(&e.ID, &e.Key, &e.Type, &e.AssigneeID, &e.Data, &e.Version,
		&created, &updated, &del, &exp); err != nil {
		return domain.Entry{}, err
	}
	e.DateCreated, e.DateUpdated = created.Time, updated.Time
	e.DateDeleted, e.ExpiresAt = del.Ptr(), exp.Ptr()
	return e, nil
}
