package bunstore

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/domain"
)

// Batched creates on PostgreSQL.
//
// A create was one INSERT in a transaction of its own. Under load its
// cost was mostly PostgreSQL's per statement and per commit: parsing and
// planning, the change log's and the usage counts' triggers being set up,
// the commit record and its WAL flush, two round trips of the protocol.
// Measured with pgbench on a migrated table (docs/benchmarks.md), a
// statement of 8 rows costs PostgreSQL less than half the CPU per row of
// 8 statements of one.
//
// So a repository on PostgreSQL lets at most createBatchSlots creates
// run at once. A create that finds every slot taken
// queues, and the caller that gets the next slot writes the creates
// waiting at that moment (up to maxCreateBatch) in one statement:
//
//	INSERT INTO t (…) VALUES (…), (…), … ON CONFLICT DO NOTHING RETURNING id
//
// A create whose id the statement returns is done; it committed with the
// statement. Every other one (its id or natural key was held, by a live
// row or a dead one) runs alone afterwards, on the path it always took
// (create), which clears dead rows out of its way and tells which
// conflict it met. If PostgreSQL refuses the statement, every create of
// the batch runs alone, so each gets the answer it would have got by
// itself; if the database fails under it (batchFailure), each gets that
// failure.
// Within a batch a second create of the same id or natural key is left
// out of the statement and runs alone after it, so it meets the first as
// a later transaction would. A batch of one create runs alone at once.
//
// Creates under a quota are written by the same statement, taking their
// rows from the VALUES list only where cache_usage_admit (cache_quota.go)
// admits the growth of the whole batch in the row's assignee:
//
//	INSERT INTO t (…) SELECT … FROM (VALUES (…, growth, limits), …) v
//	WHERE CASE WHEN v.guarded THEN cache_usage_admit(…) ELSE true END
//	ON CONFLICT DO NOTHING RETURNING id
//
// The statement takes each assignee's advisory lock once, for all its
// rows, where alone each create held it from its statement to its
// commit, one after the other. Refused rows run alone: the growth admitted
// counts every row of the assignee, written or not, so a refusal is only
// a reason to look again, one create at a time, which tells exactly.
//
// The creates of a batch therefore behave like consecutive transactions
// in some order, as concurrent creates did. They share a commit: they all
// take effect or none does, and none answers before the commit. SQLite
// groups every write through its write gate instead (write_group.go).

const (
	// maxCreateBatch bounds the rows of one statement.
	maxCreateBatch = 64
	// createBatchSlots is how many creates, alone or batched, a
	// repository runs on PostgreSQL at once; the others queue.
	createBatchSlots = 2
)

// errCreateAlone answers a queued create that must run by itself.
var errCreateAlone = errors.New("bunstore: create alone")

// queuedCreate is one create waiting in a createBatcher.
type queuedCreate struct {
	ctx  context.Context //nolint:containedctx // a create whose caller gave up is not written
	e    domain.Entry
	now  time.Time
	q    domain.Quota
	g    *quotaGuard // the room e needs under q (nil: none)
	done chan error
}

// createBatcher is the queue of one repository's creates on PostgreSQL.
type createBatcher struct {
	slots chan struct{}
	queue writeQueue[queuedCreate]
	// batched counts the creates written by statements of several, for
	// tests.
	batched atomic.Int64
}

func newCreateBatcher() *createBatcher {
	return &createBatcher{slots: make(chan struct{}, createBatchSlots)}
}

// create writes e under q: in a batch with the creates queued beside it,
// or alone. A create too large for q whatever its assignee holds runs
// alone at once.
func (b *createBatcher) create(ctx context.Context, r *CacheRepository, e domain.Entry, now time.Time, q domain.Quota) error {
	g := newQuotaGuard(q, nil, e)
	if g != nil && g.admit(domain.Usage{}) != nil {
		return r.create(ctx, r.db, e, now, q)
	}
	w := &queuedCreate{ctx: ctx, e: e, now: now, q: q, g: g, done: make(chan error, 1)}
	b.queue.push(w)
	err := b.queue.await(ctx, w, w.done, b.slots, maxCreateBatch, func(batch []*queuedCreate) {
		b.write(ctx, r, batch)
	})
	if errors.Is(err, errCreateAlone) {
		return r.create(ctx, r.db, e, now, q)
	}
	return err
}

// write answers every create of batch: nil for those its statement wrote,
// errCreateAlone for the others. A batch of one runs alone here, under
// its caller's context.
func (b *createBatcher) write(ctx context.Context, r *CacheRepository, batch []*queuedCreate) {
	if len(batch) == 1 {
		w := batch[0]
		w.done <- r.create(w.ctx, r.db, w.e, w.now, w.q)
		return
	}
	var rows, later []*queuedCreate
	ids := make(map[string]bool, len(batch))
	keys := make(map[domain.NaturalKey]bool, len(batch))
	for _, w := range batch {
		switch {
		case w.ctx.Err() != nil:
			w.done <- w.ctx.Err()
		case ids[w.e.ID] || keys[w.e.NaturalKey()]:
			later = append(later, w)
		default:
			ids[w.e.ID], keys[w.e.NaturalKey()] = true, true
			rows = append(rows, w)
		}
	}
	written, err := b.insert(ctx, r, rows)
	if err == nil && len(rows) > 1 {
		b.batched.Add(int64(len(written)))
	}
	for _, w := range rows {
		switch {
		case err != nil:
			w.done <- err
		case written[w.e.ID]:
			w.done <- nil
		default:
			w.done <- errCreateAlone
		}
	}
	for _, w := range later {
		w.done <- errCreateAlone
	}
}

// insert writes rows in one statement and returns the ids it wrote, or
// what its rows are to be answered when it fails (batchFailure). It runs
// under ctx without its cancellation: the statement is every row's, not
// only its caller's.
func (b *createBatcher) insert(ctx context.Context, r *CacheRepository, rows []*queuedCreate) (map[string]bool, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeoutCause(context.WithoutCancel(ctx), r.bounds.timeout, errPastBound)
	defer cancel()
	// The growth of each assignee's guarded rows, all of them.
	type growth struct{ entries, bytes int64 }
	var grows map[string]growth
	for _, w := range rows {
		if w.g != nil {
			if grows == nil {
				grows = map[string]growth{}
			}
			gr := grows[w.e.AssigneeID]
			gr.entries, gr.bytes = gr.entries+w.g.entries, gr.bytes+w.g.bytes
			grows[w.e.AssigneeID] = gr
		}
	}
	var q strings.Builder
	args := make([]any, 0, 2+17*len(rows))
	if grows == nil {
		q.WriteString("INSERT INTO ? (" + cacheWriteColumns + ") VALUES ")
		args = append(args, r.table)
	} else {
		q.WriteString("INSERT INTO ? (" + cacheWriteColumns + ") SELECT v.id, v.key, v.type, v.assignee_id, v.data, v.version::integer, " +
			"v.date_created::timestamptz, v.date_updated::timestamptz, v.date_deleted::timestamptz, v.expires_at::timestamptz, " +
			"v.key_folded, v.type_folded FROM (VALUES ")
		args = append(args, r.table)
	}
	for i, w := range rows {
		if i > 0 {
			q.WriteString(", ")
		}
		e := w.e
		args = append(args, e.ID, e.Key, e.Type, e.AssigneeID, string(e.Data), e.Version,
			timeArg(e.DateCreated), timeArg(e.DateUpdated), nullTimeArg(e.DateDeleted), nullTimeArg(e.ExpiresAt),
			foldedArg(e.Key), foldedArg(e.Type))
		if grows == nil {
			q.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
			continue
		}
		q.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::text, ?::text, ?, ?::bigint, ?::bigint, ?::bigint, ?::bigint)")
		gr := grows[e.AssigneeID]
		args = append(args, w.g != nil, gr.entries, gr.bytes, w.q.MaxEntries, w.q.MaxBytes)
	}
	if grows != nil {
		q.WriteString(") AS v (" + cacheWriteColumns + ", guarded, grow_entries, grow_bytes, max_entries, max_bytes) " +
			"WHERE CASE WHEN v.guarded THEN cache_usage_admit(?, v.assignee_id, v.grow_entries, v.grow_bytes, v.max_entries, v.max_bytes) ELSE true END")
		args = append(args, r.name)
	}
	q.WriteString(" ON CONFLICT DO NOTHING RETURNING id")
	var written map[string]bool
	err := withRetry(ctx, func() error {
		written = make(map[string]bool, len(rows))
		res, err := r.db.QueryContext(ctx, q.String(), args...)
		if err != nil {
			return err
		}
		defer func() { _ = res.Close() }()
		for res.Next() {
			var id string
			if err := res.Scan(&id); err != nil {
				return err
			}
			written[id] = true
		}
		return res.Err()
	})
	if err != nil {
		return nil, batchFailure(ctx, err)
	}
	return written, nil
}

// batchFailure is the answer of the creates of a statement that failed
// with err under ctx. When PostgreSQL refused the statement, it rolled
// back and wrote nothing: each create runs alone (errCreateAlone) and is
// answered for itself. A lost connection, a passed bound or another outage
// leaves unknown whether it committed; a create run again alone could
// then meet its own row and answer that its id is taken, so every create
// gets the outage, as it would have alone.
func batchFailure(ctx context.Context, err error) error {
	t := translate(ctx, err)
	var (
		pg *pgconn.PgError
		o  *outage
	)
	switch {
	case errors.As(t, &o):
		return t
	case errors.As(err, &pg):
		return errCreateAlone
	}
	return dbError("create entries", err)
}

// batchedCreates returns r's batcher: on PostgreSQL unless writes are
// ungrouped, else nil.
func batchedCreates(db bun.IDB, b bounds) *createBatcher {
	if !engineOf(db).batchesCreates() || b.ungrouped {
		return nil
	}
	return newCreateBatcher()
}
