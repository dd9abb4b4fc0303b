package bunstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/bound"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
)

// How this process writes the attempts folded into one row of
// auth_events: its first foldDirect attempts one by one; later ones are
// held in memory and added together once they span foldHold of event
// time, or foldHold of wall time after the first one held, or when Events
// reads the log, or on Flush. A flood then updates its row about once
// every foldHold: on PostgreSQL every update leaves a dead row version
// until vacuum (README.md, "Audit trail"). foldRowsMax bounds the rows
// remembered; beyond it attempts are written one by one.
const (
	foldDirect  = 10
	foldHold    = 5 * time.Second
	foldRowsMax = 10_000
)

// foldBuffer remembers the rows of folded attempts this process wrote and
// the attempts it holds for them.
type foldBuffer struct {
	// flushing is held while the held attempts are taken and written, so
	// that Events reads after a flush the timer started.
	flushing sync.Mutex
	mu       sync.Mutex
	rows     map[string]*foldRow
	newest   time.Time // the latest event time seen
	timer    *time.Timer
}

// foldRow is a row of auth_events this process wrote to, by fold key.
type foldRow struct {
	writes int       // attempts written one by one
	end    time.Time // the end of the row's window
	held   foldAdd   // attempts not written yet (n zero: none)
}

// foldAdd is attempts to add to a row: how many, the latest time, and the
// username (normalized), user id and reason they share (nil: they differ,
// so the row's are emptied).
type foldAdd struct {
	n                    int
	first, last          time.Time
	norm, userID, reason *string
}

func attemptOf(e domain.AuditEvent) foldAdd {
	norm := domain.NormalizeUsername(e.Username)
	return foldAdd{n: 1, first: e.Time, last: e.Time, norm: &norm, userID: &e.UserID, reason: &e.Reason}
}

// merge adds b's attempts to a's.
func (a *foldAdd) merge(b foldAdd) {
	if a.n == 0 {
		*a = b
		return
	}
	a.n += b.n
	if b.last.After(a.last) {
		a.last = b.last
	}
	if b.first.Before(a.first) {
		a.first = b.first
	}
	same := func(x, y *string) *string {
		if x == nil || y == nil || *x != *y {
			return nil
		}
		return x
	}
	a.norm, a.userID, a.reason = same(a.norm, b.norm), same(a.userID, b.userID), same(a.reason, b.reason)
}

// FoldEvent stores e folded under f (ports.AuditFolder). A repeat of a
// row this process wrote is an UPDATE of it (or held, see foldDirect); an
// attempt of another key reads whether its row exists and how many rows
// its address has in the window (the partial index), then holds the
// attempt for the address's row, or upserts: the upsert on fold_key folds
// into a row another process inserted meanwhile.
func (l *AuditLog) FoldEvent(ctx context.Context, e domain.AuditEvent, f domain.AuditFold) (err error) {
	if !f.Folds(e) {
		return fmt.Errorf("bunstore: fold audit event: %s is not folded", e.Type)
	}
	ctx, call := l.bounds.Enter(ctx)
	defer call.Done(&err)
	e.Username = domain.CutAuditUsername(e.Username)
	own, shared := f.Keys(e)
	end := f.Start(e.Time).Add(f.Window)
	add := attemptOf(e)
	if held, flush := l.fold.hold(own, add, l.flushHeldLater); held {
		return l.addAttempts(ctx, call, own, flush)
	}
	if l.fold.knows(own) {
		// This process wrote the row: it is there unless purged since.
		if ok, err := l.addAttempts1(ctx, call, own, add); err != nil || ok {
			if ok {
				l.fold.wrote(own, end)
			}
			return err
		}
	}
	key := own
	if own != shared {
		// One read, no write lock: is there a row of e's own key (another
		// process's), and how many rows has the address in the window?
		start := f.Start(e.Time)
		var ownRows, addressRows int
		if err := l.db.sql.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM auth_events WHERE fold_key = ?),
			(SELECT count(*) FROM auth_events WHERE fold_key IS NOT NULL AND address = ? AND "at" >= ? AND "at" < ? AND type = ?)`,
			own, e.Address, engine.TimeArg(start), engine.TimeArg(end), string(domain.AuditLoginFailed)).Scan(&ownRows, &addressRows); err != nil {
			return dberr.Wrap("fold audit event", err)
		}
		if ownRows == 0 && addressRows >= f.Distinct {
			key = shared
			if held, flush := l.fold.hold(shared, add, l.flushHeldLater); held {
				return l.addAttempts(ctx, call, shared, flush)
			}
		}
	}
	_, err = l.db.exec(ctx, call, "fold audit event", `INSERT INTO auth_events
		(id, "at", type, user_id, username, username_norm, address, request_id, family, reason, fold_key)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (fold_key) WHERE fold_key IS NOT NULL DO UPDATE SET `+foldSet(func(c string) string {
		if c == "at" {
			return `excluded."at"`
		}
		if c == "n" {
			return "1"
		}
		return "excluded." + c
	}),
		e.ID, engine.TimeArg(e.Time), string(e.Type), e.UserID, e.Username, *add.norm, e.Address, e.RequestID, e.Family, e.Reason, key)
	if err != nil {
		return err
	}
	l.fold.wrote(key, end)
	return nil
}

// foldSet is the SET list that adds attempts to a row; v names the value
// of "n" (how many), "at" (the latest time), "username_norm", "user_id"
// and "reason" (NULL when the attempts differ: the row's is emptied).
func foldSet(v func(string) string) string {
	return `attempts = auth_events.attempts + ` + v("n") + `,
		last_at = CASE WHEN auth_events.last_at IS NULL AND auth_events."at" > ` + v("at") + ` THEN auth_events."at"
			WHEN auth_events.last_at > ` + v("at") + ` THEN auth_events.last_at ELSE ` + v("at") + ` END,
		username = CASE WHEN auth_events.username_norm = ` + v("username_norm") + ` THEN auth_events.username ELSE '' END,
		username_norm = CASE WHEN auth_events.username_norm = ` + v("username_norm") + ` THEN auth_events.username_norm ELSE '' END,
		user_id = CASE WHEN auth_events.user_id = ` + v("user_id") + ` THEN auth_events.user_id ELSE '' END,
		reason = CASE WHEN auth_events.reason = ` + v("reason") + ` THEN auth_events.reason ELSE '' END`
}

// addAttempts adds a to the row of key, if a holds any; a row that is
// gone (purged) takes nothing.
func (l *AuditLog) addAttempts(ctx context.Context, call *bound.Call, key string, a foldAdd) error {
	if a.n == 0 {
		return nil
	}
	_, err := l.addAttempts1(ctx, call, key, a)
	return err
}

// addAttempts1 adds a to the row of key and reports whether there was one.
func (l *AuditLog) addAttempts1(ctx context.Context, call *bound.Call, key string, a foldAdd) (bool, error) {
	str := func(p *string) any {
		if p == nil {
			return nil
		}
		return *p
	}
	vals := map[string]any{"n": a.n, "at": engine.TimeArg(a.last), "username_norm": str(a.norm), "user_id": str(a.userID),
		"reason": str(a.reason)}
	var args []any
	set := foldSet(func(c string) string { args = append(args, vals[c]); return "?" })
	n, err := l.db.exec(ctx, call, "fold audit event", `UPDATE auth_events SET `+set+` WHERE fold_key = ?`, append(args, key)...)
	return n > 0, err
}

// Flush writes the folded login attempts l holds (see foldDirect): call
// it before closing the database, so that a process that stops loses
// none.
func (l *AuditLog) Flush(ctx context.Context) (err error) {
	ctx, call := l.bounds.Enter(ctx)
	defer call.Done(&err)
	return l.flushHeld(ctx, call)
}

// flushHeld writes every attempt held.
func (l *AuditLog) flushHeld(ctx context.Context, call *bound.Call) error {
	l.fold.flushing.Lock()
	defer l.fold.flushing.Unlock()
	var first error
	for key, a := range l.fold.takeAll() {
		if err := l.addAttempts(ctx, call, key, a); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// flushHeldLater is flushHeld run by the buffer's timer. A failure loses
// those counts, as a failed RecordEvent loses its event.
func (l *AuditLog) flushHeldLater() {
	ctx, call := l.bounds.Enter(context.Background())
	err := l.flushHeld(ctx, call)
	call.Done(&err)
}

// hold keeps a for the row of key when this process has written that row
// foldDirect times, and reports whether it did; flush is what must be
// written now (the attempts held, a included, once they span foldHold).
// The first attempt held arms a timer that calls later after foldHold.
func (b *foldBuffer) hold(key string, a foldAdd, later func()) (held bool, flush foldAdd) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if a.last.After(b.newest) {
		b.newest = a.last
	}
	r := b.rows[key]
	if r == nil || r.writes < foldDirect {
		return false, foldAdd{}
	}
	r.held.merge(a)
	if r.held.last.Sub(r.held.first) >= foldHold {
		flush, r.held = r.held, foldAdd{}
		return true, flush
	}
	if b.timer == nil {
		b.timer = time.AfterFunc(foldHold, func() {
			b.mu.Lock()
			b.timer = nil
			b.mu.Unlock()
			later()
		})
	}
	return true, foldAdd{}
}

// knows reports whether this process wrote the row of key.
func (b *foldBuffer) knows(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.rows[key] != nil
}

// wrote counts an attempt written to the row of key, whose window ends
// at end.
func (b *foldBuffer) wrote(key string, end time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.rows[key]
	if r == nil {
		if len(b.rows) >= foldRowsMax {
			b.forgetPast()
			if len(b.rows) >= foldRowsMax {
				return
			}
		}
		r = &foldRow{end: end}
		b.rows[key] = r
	}
	r.writes++
}

// forgetPast forgets the rows of windows that ended before the latest
// event and hold nothing: no attempt folds into them any more.
func (b *foldBuffer) forgetPast() {
	for k, r := range b.rows {
		if r.held.n == 0 && r.end.Before(b.newest) {
			delete(b.rows, k)
		}
	}
}

// takeAll returns the attempts held, by key, and holds none any more.
func (b *foldBuffer) takeAll() map[string]foldAdd {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]foldAdd{}
	for k, r := range b.rows {
		if r.held.n > 0 {
			out[k], r.held = r.held, foldAdd{}
		}
	}
	b.forgetPast()
	return out
}
