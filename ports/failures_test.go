package ports_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/ports"
)

// records is a slog handler that keeps what was logged.
type records struct {
	mu    sync.Mutex
	lines []record
}

type record struct {
	level slog.Level
	msg   string
	attrs map[string]slog.Value
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *records) WithGroup(string) slog.Handler            { return r }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	l := record{level: rec.Level, msg: rec.Message, attrs: map[string]slog.Value{}}
	rec.Attrs(func(a slog.Attr) bool { l.attrs[a.Key] = a.Value; return true })
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, l)
	return nil
}

func (r *records) all() []record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]record(nil), r.lines...)
}

func TestFailureLogWritesOneLineWhenFailingAndOneWhenRecovered(t *testing.T) {
	t.Parallel()
	var (
		logs records
		f    ports.FailureLog
	)
	log := slog.New(&logs)
	ctx := context.Background()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	down := errors.New("dial tcp: connection refused")

	f.Record(ctx, log, "poll", nil, t0)
	if n := len(logs.all()); n != 0 {
		t.Fatalf("a success before any failure logged %d lines", n)
	}
	for i := range 100 {
		f.Record(ctx, log, "poll", down, t0.Add(time.Duration(i)*time.Second))
	}
	got := logs.all()
	if len(got) != 1 || got[0].msg != "poll failing" || got[0].level != slog.LevelWarn ||
		got[0].attrs["err"].String() != down.Error() {
		t.Fatalf("100 failed polls logged %+v, want one Warn line \"poll failing\" with the error", got)
	}
	// A poll cut short by the end of its context is not an outcome.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	f.Record(cancelled, log, "poll", context.Canceled, t0.Add(200*time.Second))
	f.Record(cancelled, log, "poll", nil, t0.Add(200*time.Second))

	f.Record(ctx, log, "poll", nil, t0.Add(100*time.Second))
	f.Record(ctx, log, "poll", nil, t0.Add(101*time.Second))
	got = logs.all()
	if len(got) != 2 {
		t.Fatalf("recovery logged %d lines in all, want 2: %+v", len(got), got)
	}
	rec := got[1]
	if rec.msg != "poll recovered" || rec.level != slog.LevelInfo ||
		rec.attrs["failed_attempts"].Int64() != 100 || rec.attrs["failing_for"].Duration() != 100*time.Second {
		t.Fatalf("recovery line %+v, want \"poll recovered\" with failed_attempts=100 failing_for=100s", rec)
	}

	f.Record(ctx, log, "poll", down, t0.Add(300*time.Second))
	if got := logs.all(); len(got) != 3 || got[2].msg != "poll failing" {
		t.Fatalf("a new outage after the recovery: %+v, want a new \"failing\" line", got)
	}
}

func TestFailureLogIsSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	var (
		logs records
		f    ports.FailureLog
		wg   sync.WaitGroup
	)
	log := slog.New(&logs)
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				f.Record(context.Background(), log, "reload", errors.New("down"), now)
			}
		}()
	}
	wg.Wait()
	f.Record(context.Background(), log, "reload", nil, now)
	got := logs.all()
	if len(got) != 2 || got[1].attrs["failed_attempts"].Int64() != 800 {
		t.Fatalf("800 concurrent failures and a success logged %+v, want 2 lines, failed_attempts=800", got)
	}
}
