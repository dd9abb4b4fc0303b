package authfx_test

import (
	"context"
	"sync"
	"testing"

	"go.uber.org/fx"

	"github.com/cachegate/cachegate/bootstrap/authfx"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// recordingLog is an embedder's ports.AuditLog laid over the store's.
type recordingLog struct {
	ports.AuditLog
	mu    sync.Mutex
	types []domain.AuditType
}

func (l *recordingLog) RecordEvent(ctx context.Context, e domain.AuditEvent) error {
	l.mu.Lock()
	l.types = append(l.types, e.Type)
	l.mu.Unlock()
	return l.AuditLog.RecordEvent(ctx, e)
}

// TestAuditEventsOfChangesReachAnEmbeddersLogOrTheStoresOnce shows the
// wiring rule of ports.AuditLog: the default log gets user.added once
// (written by the store with the user), a decorated log gets it through
// RecordEvent.
func TestAuditEventsOfChangesReachAnEmbeddersLogOrTheStoresOnce(t *testing.T) {
	t.Parallel()
	t.Run("the default log", func(t *testing.T) {
		t.Parallel()
		var log ports.AuditLog
		h := start(t, authfx.ForRoot(fast(authfx.Options{})), fx.Populate(&log))
		h.addAlice(t)
		got, err := log.Events(context.Background(), ports.AuditFilter{Type: domain.AuditUserAdded})
		if err != nil || len(got) != 1 || got[0].Username != "alice" {
			t.Fatalf("user.added events %+v, %v; want one of alice", got, err)
		}
	})
	t.Run("a decorated log", func(t *testing.T) {
		t.Parallel()
		rec := &recordingLog{}
		start(t, authfx.ForRoot(fast(authfx.Options{})),
			fx.Decorate(func(l ports.AuditLog) ports.AuditLog { rec.AuditLog = l; return rec })).addAlice(t)
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.types) != 1 || rec.types[0] != domain.AuditUserAdded {
			t.Fatalf("the embedder's log received %v, want [user.added]", rec.types)
		}
		got, err := rec.Events(context.Background(), ports.AuditFilter{})
		if err != nil || len(got) != 1 {
			t.Fatalf("stored events %+v, %v; want exactly one", got, err)
		}
	})
}
