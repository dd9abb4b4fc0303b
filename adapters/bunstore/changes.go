package bunstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/bound"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// ChangeLog reads the change log the cache tables' triggers write
// (changes_schema.go). One ChangeLog per process is meant to serve every
// subscriber (background.Feed reads it); it keeps the PostgreSQL
// watermark's state.
//
// Which revisions are safe to deliver (ARCHITECTURE.md, "The change
// feed"): on SQLite revisions commit in the order they are drawn, so the
// head is the highest; on PostgreSQL one can be visible while an earlier
// one is in flight, so the head is a watermark (engine.ChangeHead) that
// never passes a revision whose predecessors may still commit.
type ChangeLog struct {
	db     *DB
	bounds bound.Bounds
	// visible finds the visible head: the engine's (engine.ChangeHead).
	visible engine.ChangeHead
	// next holds Changes' statement where the head does not trail
	// (changesAfterQuery): the feed runs it after every group of writes of
	// the process, so SQLite prepares it once, not on every read.
	next *engine.Prepared
}

var _ ports.ChangeLog = (*ChangeLog)(nil)

// NewChangeLog returns the log of db, which Migrate prepared. Each call is
// bounded as the repositories' are (WithTimeout).
func NewChangeLog(db *DB) *ChangeLog {
	return &ChangeLog{db: db, bounds: db.bounds, visible: db.eng.ChangeHead(), next: engine.NewPrepared(db.sql, db.eng, changesAfterQuery)}
}

// For implements ports.ChangeLog (CacheRepository.For); the head's state
// (the PostgreSQL watermark) stays l's, shared by its copies.
func (l *ChangeLog) For(caller domain.Caller) ports.ChangeLog {
	v := *l
	v.bounds.Caller = caller
	return &v
}

// changesAfterQuery reads the changes after a revision, at most a limit.
const changesAfterQuery = changeSelect + " WHERE rev > ? ORDER BY rev LIMIT ?"

// Wake implements ports.ChangeLog: the database does not tell. Writes of
// this process wake the reader through background.Feed.Observe; those of
// other processes are read by its periodic catch-up.
func (l *ChangeLog) Wake() <-chan struct{} { return nil }

const changeSelect = "SELECT rev, " + changeColumns + ", at FROM " + changesTable

// Changes implements ports.ChangeLog.
func (l *ChangeLog) Changes(ctx context.Context, after int64, limit int) (_ []domain.Change, err error) {
	ctx, call := l.bounds.Enter(ctx)
	defer call.Done(&err)
	if limit <= 0 {
		return nil, nil
	}
	if !l.visible.Trails() {
		return l.read(ctx, func() (*sql.Rows, error) { return l.next.QueryDB(ctx, 0, after, limit) })
	}
	head, err := l.head(ctx)
	if err != nil {
		return nil, err
	}
	if head <= after {
		return nil, nil
	}
	return l.readText(ctx, changeSelect+" WHERE rev > ? AND rev <= ? ORDER BY rev LIMIT ?", []any{after, head, limit})
}

// ChangesOf implements ports.ChangeLog. With an assignee, the index on
// (assignee_id, rev) (changesAssigneeMigration) serves the query: a
// resuming owner's replay reads its own changes, however many other
// users wrote (docs/benchmarks.md, "Replay of one user's changes").
// Without one (a caller who may see every assignee's entries) it reads
// the log's range by revision, as Changes does.
func (l *ChangeLog) ChangesOf(ctx context.Context, q ports.ChangeQuery) (_ []domain.Change, err error) {
	ctx, call := l.bounds.Enter(ctx)
	defer call.Done(&err)
	if q.Limit <= 0 || q.Upto <= q.After {
		return nil, nil
	}
	query, args := changesOfQuery(q)
	return l.readText(ctx, query, args)
}

// readText is read of query with its arguments.
func (l *ChangeLog) readText(ctx context.Context, query string, args []any) ([]domain.Change, error) {
	return l.read(ctx, func() (*sql.Rows, error) { return l.db.sql.QueryContext(ctx, query, args...) })
}

// read runs query, a select of changeSelect's columns, retrying a
// transient failure, and returns the changes it reads.
func (l *ChangeLog) read(ctx context.Context, query func() (*sql.Rows, error)) ([]domain.Change, error) {
	var out []domain.Change
	err := dberr.WithRetry(ctx, func() error {
		rows, err := query()
		if err != nil {
			return err
		}
		out, err = scanAll(rows, scanChange)
		return err
	})
	if err != nil {
		return nil, dberr.Wrap("read changes", err)
	}
	return out, nil
}

// changesOfQuery returns ChangesOf's statement and arguments for q.
func changesOfQuery(q ports.ChangeQuery) (string, []any) {
	var b strings.Builder
	b.WriteString(changeSelect + " WHERE ")
	args := make([]any, 0, 7)
	if q.AssigneeID != "" {
		b.WriteString("assignee_id = ? AND ")
		args = append(args, q.AssigneeID)
	}
	b.WriteString("rev > ? AND rev <= ? AND entity = ?")
	args = append(args, q.After, q.Upto, q.Entity)
	if q.Key != "" {
		b.WriteString(" AND key = ?")
		args = append(args, q.Key)
	}
	if q.Type != "" {
		b.WriteString(" AND type = ?")
		args = append(args, q.Type)
	}
	b.WriteString(" ORDER BY rev LIMIT ?")
	args = append(args, q.Limit)
	return b.String(), args
}

func scanChange(s rowScanner) (domain.Change, error) {
	var (
		c                              domain.Change
		kind                           string
		created, updated, del, exp, at engine.NullTime
	)
	e := &c.Entry
	if err := s.Scan(&c.Rev, &c.Entity, &kind, &e.ID, &e.Key, &e.Type, &e.AssigneeID, &e.Data, &e.Version,
		&created, &updated, &del, &exp, &at); err != nil {
		return domain.Change{}, err
	}
	k, ok := domain.ParseChangeKind(kind)
	if !ok {
		return domain.Change{}, fmt.Errorf("bunstore: change %d has unknown kind %q", c.Rev, kind)
	}
	c.Kind, c.At = k, at.Time
	e.DateCreated, e.DateUpdated = created.Time, updated.Time
	e.DateDeleted, e.ExpiresAt = del.Ptr(), exp.Ptr()
	return c, nil
}

// Head implements ports.ChangeLog.
func (l *ChangeLog) Head(ctx context.Context) (_ int64, err error) {
	ctx, call := l.bounds.Enter(ctx)
	defer call.Done(&err)
	return l.head(ctx)
}

// head is Head inside a bounded call.
func (l *ChangeLog) head(ctx context.Context) (int64, error) {
	head, err := l.visible.Read(ctx, l.db.sql)
	if err != nil || head != 0 || l.visible.Trails() {
		return head, err
	}
	// An empty log after pruning still has had revisions up to pruned.
	return l.horizon(ctx)
}

// Horizon implements ports.ChangeLog.
func (l *ChangeLog) Horizon(ctx context.Context) (_ int64, err error) {
	ctx, call := l.bounds.Enter(ctx)
	defer call.Done(&err)
	return l.horizon(ctx)
}

// horizon is Horizon inside a bounded call.
func (l *ChangeLog) horizon(ctx context.Context) (int64, error) {
	var h int64
	err := dberr.WithRetry(ctx, func() error {
		return l.db.sql.QueryRowContext(ctx, "SELECT pruned FROM "+changesStateTable+" WHERE id = 1").Scan(&h)
	})
	if err != nil {
		return 0, dberr.Wrap("read the change log's horizon", err)
	}
	return h, nil
}

// Prune implements ports.ChangeLog. One pruner at a time holds the state
// row (replicas prune in turn); it deletes the prefix of the log, up to the
// head, recorded before t.
func (l *ChangeLog) Prune(ctx context.Context, before time.Time, limit int) (_ int, err error) {
	ctx, call := l.bounds.Enter(ctx)
	defer call.Done(&err)
	if limit <= 0 {
		return 0, nil
	}
	head, err := l.head(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	err = authInTx(ctx, call, l.db, "prune changes", func(ctx context.Context, tx bun.Tx) error {
		var pruned int64
		if err := tx.QueryRowContext(ctx, "SELECT pruned FROM "+changesStateTable+" WHERE id = 1"+l.db.eng.ForUpdate()).Scan(&pruned); err != nil {
			return err
		}
		var last int64
		// The prefix recorded before t: the batch's revisions up to the
		// first recorded at or after t.
		rows, err := tx.QueryContext(ctx, "SELECT rev, at FROM "+changesTable+" WHERE rev <= ? ORDER BY rev LIMIT ?", head, limit)
		if err != nil {
			return err
		}
		for rows.Next() {
			var (
				rev int64
				at  engine.NullTime
			)
			if err := rows.Scan(&rev, &at); err != nil {
				_ = rows.Close()
				return err
			}
			if !at.Time.Before(before) {
				break
			}
			last = rev
			n++
		}
		_ = rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		// What the pruned changes kept leaves their assignees' counts
		// (usage_schema.go), one upsert per entity and assignee in order.
		if _, err := tx.ExecContext(ctx, "INSERT INTO "+usageTable+" (entity, assignee_id, shard, entries, bytes) "+
			"SELECT entity, assignee_id, "+l.db.eng.UsageShard()+", 0, -sum("+engine.ChangeCost(changesTable)+") FROM "+changesTable+
			" WHERE rev <= ? GROUP BY entity, assignee_id ORDER BY entity, assignee_id"+
			" ON CONFLICT (entity, assignee_id, shard) DO UPDATE SET bytes = "+usageTable+".bytes + excluded.bytes", last); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+changesTable+" WHERE rev <= ?", last); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "UPDATE "+changesStateTable+" SET pruned = ? WHERE id = 1 AND pruned < ?", last, last)
		return err
	})
	if err != nil {
		return 0, dberr.Wrap("prune changes", err)
	}
	return n, nil
}

// Pending reports whether revisions are waiting for transactions in
// flight to end; a reader polls again soon when they are.
func (l *ChangeLog) Pending() bool {
	return l.visible.Pending()
}
