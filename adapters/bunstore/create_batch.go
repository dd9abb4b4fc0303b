package bunstore

import (
	"context"
	"strings"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/batch"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/bound"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"

	"github.com/cachegate/cachegate/domain"
)

// Batched creates on PostgreSQL, which costs mostly per statement and per
// commit (docs/storage.md, "One batcher").
//
// A repository on PostgreSQL lets at most createBatchSlots creates run at
// once; the caller that gets the next slot writes the creates waiting at
// that moment (up to maxCreateBatch) in one statement:
//
//	INSERT INTO t (…) VALUES (…), (…), … ON CONFLICT DO NOTHING RETURNING id
//
// A create whose id the statement returns committed with it. Every other
// one, and a second create of the same id or natural key within the batch,
// runs alone afterwards (create), which clears dead rows and tells which
// conflict it met; failures follow the batcher's rule (internal/batch).
//
// Creates under a quota take their rows from the VALUES list only where
// cache_usage_admit admits the growth of the whole batch in the row's
// assignee (one advisory lock per assignee for all its rows):
//
//	INSERT INTO t (…) SELECT … FROM (VALUES (…, growth, limits), …) v
//	WHERE CASE WHEN v.guarded THEN cache_usage_admit(…) ELSE true END
//	ON CONFLICT DO NOTHING RETURNING id
//
// Refused rows run alone, which tells exactly. The creates of a batch
// behave like consecutive transactions in some order, sharing one commit.

const (
	// maxCreateBatch bounds the rows of one statement.
	maxCreateBatch = 64
	// createBatchSlots is how many creates, alone or batched, a
	// repository runs on PostgreSQL at once; the others queue.
	createBatchSlots = 2
)

// queuedCreate is one create waiting in a repository's batcher.
type queuedCreate struct {
	e   domain.Entry
	now time.Time
	q   domain.Quota
	g   *quotaGuard // the room e needs under q (nil: none)
}

// newCreateBatcher returns the batcher of r's creates.
func newCreateBatcher(r *CacheRepository) *batch.Batcher[*queuedCreate] {
	return batch.New(batch.Config[*queuedCreate]{
		Slots: make(chan struct{}, createBatchSlots), Max: maxCreateBatch, Timeout: r.bounds.Timeout, PastBound: dberr.ErrPastBound,
		Run: r.writeCreates,
		Alone: func(ctx context.Context, w *queuedCreate) error {
			return r.create(ctx, r.db, w.e, w.now, w.q, 0)
		},
		Outage: dberr.BatchOutage,
	})
}

// create writes e under q: in a batch with the creates queued beside it,
// or alone. A create too large for q whatever its assignee holds runs
// alone at once.
func (w batchWriter) create(ctx context.Context, _ *bound.Call, e domain.Entry, now time.Time, q domain.Quota) error {
	g := newQuotaGuard(q, nil, e)
	if g != nil && g.admit(domain.Usage{}) != nil {
		return w.r.create(ctx, w.r.db, e, now, q, 0)
	}
	return w.creates.Do(ctx, &queuedCreate{e: e, now: now, q: q, g: g})
}

// writeCreates answers every create of jobs: nil for those its statement
// wrote, batch.ErrAlone for the others. A batch of one runs alone, under
// its caller's context.
func (r *CacheRepository) writeCreates(ctx context.Context, jobs []batch.Job[*queuedCreate]) ([]error, error) {
	answers := make([]error, len(jobs))
	if len(jobs) == 1 {
		answers[0] = batch.ErrAlone
		return answers, nil
	}
	var rows []*queuedCreate
	in := make([]int, 0, len(jobs))
	ids := make(map[string]bool, len(jobs))
	keys := make(map[domain.NaturalKey]bool, len(jobs))
	for i, j := range jobs {
		w := j.Work
		switch {
		case j.Ctx.Err() != nil:
			answers[i] = j.Ctx.Err()
		case ids[w.e.ID] || keys[w.e.NaturalKey()]:
			answers[i] = batch.ErrAlone
		default:
			ids[w.e.ID], keys[w.e.NaturalKey()] = true, true
			rows = append(rows, w)
			in = append(in, i)
		}
	}
	written, err := r.insertCreates(ctx, rows)
	if err != nil {
		return nil, err
	}
	if len(rows) > 1 {
		r.batchedCreates.Add(int64(len(written)))
	}
	for k, w := range rows {
		if !written[w.e.ID] {
			answers[in[k]] = batch.ErrAlone
		}
	}
	return answers, nil
}

// insertCreates writes rows in one statement and returns the ids it
// wrote, or the statement's failure (dberr.BatchFailure). It runs under the
// batch's context: the statement is every row's, not only its caller's.
func (r *CacheRepository) insertCreates(ctx context.Context, rows []*queuedCreate) (map[string]bool, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	// The growth of each assignee's guarded rows, all of them.
	type growth struct{ entries, bytes int64 }
	var grows map[string]growth
	for _, w := range rows {
		if w.g != nil {
			if grows == nil {
				grows = map[string]growth{}
			}
			gr := grows[w.e.AssigneeID]
			gr.entries, gr.bytes = gr.entries+w.g.Entries, gr.bytes+w.g.Bytes
			grows[w.e.AssigneeID] = gr
		}
	}
	var q strings.Builder
	args := append(make([]any, 0, 2+17*len(rows)), r.table)
	if grows == nil {
		q.WriteString("INSERT INTO ? (" + cacheWriteColumns + ") VALUES ")
	} else {
		q.WriteString("INSERT INTO ? (" + cacheWriteColumns + ") SELECT v.id, v.key, v.type, v.assignee_id, v.data, v.version::integer, " +
			"v.date_created::timestamptz, v.date_updated::timestamptz, v.date_deleted::timestamptz, v.expires_at::timestamptz, " +
			"v.key_folded, v.type_folded FROM (VALUES ")
	}
	for i, w := range rows {
		if i > 0 {
			q.WriteString(", ")
		}
		e := w.e
		args = append(args, e.ID, e.Key, e.Type, e.AssigneeID, string(e.Data), e.Version,
			engine.TimeArg(e.DateCreated), engine.TimeArg(e.DateUpdated), engine.NullTimeArg(e.DateDeleted), engine.NullTimeArg(e.ExpiresAt),
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
	err := dberr.WithRetry(ctx, func() error {
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
		return nil, dberr.BatchFailure(ctx, "create entries", err)
	}
	return written, nil
}
