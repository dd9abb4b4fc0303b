package bunstore

import (
	"sync"
	"time"
)

// On SQLite a create that its quota refuses finds out inside its group's
// transaction, holding the database's one writer meanwhile, so an account
// that keeps creating past its quota would keep the writer for itself
// (docs/benchmarks.md, "The victim on SQLite"). Once an assignee's create
// has been refused, its next creates during refusedLatelyFor are first
// checked on a pool connection (refuseEarly), against committed counts; a
// create that may fit goes to the group, whose statement decides. The
// memory holds at most refusedLatelyMax assignees, forgetting all when
// full.

const (
	refusedLatelyFor = 10 * time.Second
	refusedLatelyMax = 1024
)

// refusedLately remembers when each assignee's create was last refused by
// its quota.
type refusedLately struct {
	mu sync.Mutex
	at map[string]time.Time
}

func newRefusedLately() *refusedLately { return &refusedLately{at: map[string]time.Time{}} }

// note records that assignee's create was refused at now.
func (l *refusedLately) note(assignee string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.at) >= refusedLatelyMax {
		clear(l.at)
	}
	l.at[assignee] = now
}

// recent reports whether assignee's create was refused within
// refusedLatelyFor before now.
func (l *refusedLately) recent(assignee string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	at, ok := l.at[assignee]
	return ok && now.Sub(at) < refusedLatelyFor
}
