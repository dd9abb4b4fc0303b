package ports

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// FailureLog logs the outcome of a background loop's attempts (a poll, a
// reload) as at most two lines per outage: a Warn line at the first failed
// attempt after a success ("<what> failing", with its error), and an Info
// line at the first success after failures ("<what> recovered", with how
// many attempts failed and for how long); the attempts in between log
// nothing (README, "What the API does"). The zero value is ready; it is
// safe for concurrent use. It is in ports because adapters' loops use it
// too.
type FailureLog struct {
	mu       sync.Mutex
	failing  bool
	since    time.Time
	failures int64
}

// Record reports one attempt of what (e.g. "change feed: read") that ended
// at now with err (nil: it succeeded) and logs on log when the loop starts
// failing or recovers. An attempt cut short because ctx ended is not counted.
func (f *FailureLog) Record(ctx context.Context, log *slog.Logger, what string, err error, now time.Time) {
	if ctx.Err() != nil {
		return
	}
	f.mu.Lock()
	if err != nil {
		f.failures++
		first := !f.failing
		if first {
			f.failing, f.since = true, now
		}
		f.mu.Unlock()
		if first {
			log.LogAttrs(ctx, slog.LevelWarn, what+" failing", slog.String("err", err.Error()))
		}
		return
	}
	if !f.failing {
		f.mu.Unlock()
		return
	}
	n, since := f.failures, f.since
	f.failing, f.failures = false, 0
	f.mu.Unlock()
	log.LogAttrs(ctx, slog.LevelInfo, what+" recovered",
		slog.Int64("failed_attempts", n), slog.Duration("failing_for", now.Sub(since)))
}
