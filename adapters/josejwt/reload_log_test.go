package josejwt_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/cachegate/cachegate/adapters/josejwt"
)

// logMessages is a slog handler that keeps the messages logged and their
// failed_attempts attribute.
type logMessages struct {
	mu   sync.Mutex
	msgs []string
	n    []int64
}

func (l *logMessages) Enabled(context.Context, slog.Level) bool { return true }
func (l *logMessages) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logMessages) WithGroup(string) slog.Handler            { return l }
func (l *logMessages) Handle(_ context.Context, r slog.Record) error {
	var n int64
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "failed_attempts" {
			n = a.Value.Int64()
		}
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs, l.n = append(l.msgs, r.Message), append(l.n, n)
	return nil
}

func TestKeyReloadLogsWhenItStartsFailingAndWhenItRecovers(t *testing.T) {
	t.Parallel()
	var logs logMessages
	e := newEdDSA(t, func(o *josejwt.Options) { o.Logger = slog.New(&logs) })
	ctx := context.Background()
	e.store.fail.Store(true)
	before := e.store.loads.Load()
	for range 100 {
		e.clock.Advance(josejwt.DefaultKeyReload)
		if _, err := e.tok.JWKS(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.store.loads.Load() - before; n != 100 {
		t.Fatalf("%d reloads were attempted, want 100", n)
	}
	if len(logs.msgs) != 1 || logs.msgs[0] != "reload signing keys failing" {
		t.Fatalf("100 failed reloads logged %q, want one \"reload signing keys failing\"", logs.msgs)
	}
	e.store.fail.Store(false)
	for range 3 {
		e.clock.Advance(josejwt.DefaultKeyReload)
		if _, err := e.tok.JWKS(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(logs.msgs) != 2 || logs.msgs[1] != "reload signing keys recovered" || logs.n[1] != 100 {
		t.Fatalf("after the recovery the log holds %q (failed_attempts %v), want one more line, \"reload signing keys recovered\" with 100",
			logs.msgs, logs.n)
	}
}
