package memstore

import (
	"context"
	"maps"
	"sort"
	"sync"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// ChangeLog is an in-memory ports.ChangeLog. The repositories it hands out
// (Repository) record each change under their own lock, so a change and
// its record are one step, as in the database store.
type ChangeLog struct {
	mu      sync.Mutex
	changes []domain.Change // in revision order
	last    int64           // the highest revision handed out
	pruned  int64
	wake    chan struct{}
	// repos are the repositories whose changes l records, by entity: a
	// pruned change leaves its assignee's usage there.
	repos map[string]*CacheRepository
}

var _ ports.ChangeLog = (*ChangeLog)(nil)

// NewChangeLog returns an empty log.
func NewChangeLog() *ChangeLog {
	return &ChangeLog{wake: make(chan struct{}, 1), repos: map[string]*CacheRepository{}}
}

// Repository returns a new, empty repository of entity whose changes are
// recorded in l.
func (l *ChangeLog) Repository(entity string) *CacheRepository {
	r := NewCacheRepository()
	r.log, r.entity = l, entity
	l.mu.Lock()
	l.repos[entity] = r
	l.mu.Unlock()
	return r
}

// record appends a change of e; at stamps it.
func (l *ChangeLog) record(entity string, kind domain.ChangeKind, e domain.Entry, at time.Time) {
	l.mu.Lock()
	l.last++
	l.changes = append(l.changes, domain.Change{Rev: l.last, Entity: entity, Kind: kind, Entry: cacheCopy(e),
		At: domain.Normalize(at)})
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Changes implements ports.ChangeLog.
func (l *ChangeLog) Changes(_ context.Context, after int64, limit int) ([]domain.Change, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := l.indexAfter(after)
	end := min(len(l.changes), i+max(limit, 0))
	out := make([]domain.Change, 0, end-i)
	for _, c := range l.changes[i:end] {
		c.Entry = cacheCopy(c.Entry)
		out = append(out, c)
	}
	return out, nil
}

// ChangesOf implements ports.ChangeLog by scanning the log from q.After:
// the in-memory log has no index by assignee.
func (l *ChangeLog) ChangesOf(_ context.Context, q ports.ChangeQuery) ([]domain.Change, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []domain.Change
	for _, c := range l.changes[l.indexAfter(q.After):] {
		if c.Rev > q.Upto || len(out) >= q.Limit {
			break
		}
		e := &c.Entry
		if c.Entity != q.Entity || q.AssigneeID != "" && e.AssigneeID != q.AssigneeID ||
			q.Key != "" && e.Key != q.Key || q.Type != "" && e.Type != q.Type {
			continue
		}
		c.Entry = cacheCopy(c.Entry)
		out = append(out, c)
	}
	return out, nil
}

// indexAfter returns the index of the first change above rev.
func (l *ChangeLog) indexAfter(rev int64) int {
	return sort.Search(len(l.changes), func(i int) bool { return l.changes[i].Rev > rev })
}

// Head implements ports.ChangeLog.
func (l *ChangeLog) Head(context.Context) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last, nil
}

// Horizon implements ports.ChangeLog.
func (l *ChangeLog) Horizon(context.Context) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pruned, nil
}

// Prune implements ports.ChangeLog.
func (l *ChangeLog) Prune(_ context.Context, before time.Time, limit int) (int, error) {
	l.mu.Lock()
	n := 0
	for n < len(l.changes) && n < limit && l.changes[n].At.Before(before) {
		n++
	}
	pruned := l.changes[:n]
	if n > 0 {
		l.pruned = l.changes[n-1].Rev
		l.changes = append(l.changes[:0:0], l.changes[n:]...)
	}
	repos := maps.Clone(l.repos)
	l.mu.Unlock()
	// A repository records under its own lock, then takes l's: its usage
	// is changed after l's lock is let go, never under it.
	for _, c := range pruned {
		if r := repos[c.Entity]; r != nil {
			r.unprune(c)
		}
	}
	return n, nil
}

// For implements ports.ChangeLog: memory bounds no caller.
func (l *ChangeLog) For(domain.Caller) ports.ChangeLog { return l }

// Wake implements ports.ChangeLog.
func (l *ChangeLog) Wake() <-chan struct{} { return l.wake }
