package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// Goals of docs/benchmarks.md, "Noisy neighbours": every victim request
// succeeds, and its p99 stays within goalRatio × the quiet run's or
// under goalP99, whichever is larger; the audit tables grow by at most
// goalGrowth bytes an hour under the failed-login flood.
const (
	goalRatio  = 3.0
	goalP99    = 250 * time.Millisecond
	goalGrowth = 1 << 20
)

// victimStats summarises the victim's requests of one phase.
type victimStats struct {
	n, ok      int
	gets       int // GET requests among n; the rest are logins
	p50, p99   time.Duration
	getP99     time.Duration
	loginP99   time.Duration
	failures   map[string]int // status (or "err") of the failed requests
	successPct float64
}

// summarise computes victimStats from samples.
func summarise(samples []sample) victimStats {
	var all, gets, logins []time.Duration
	v := victimStats{n: len(samples), failures: map[string]int{}}
	for _, s := range samples {
		all = append(all, s.latency)
		if s.login {
			logins = append(logins, s.latency)
		} else {
			gets = append(gets, s.latency)
			v.gets++
		}
		if s.ok {
			v.ok++
		} else {
			v.failures[s.status]++
		}
	}
	v.p50, v.p99 = percentile(all, 0.50), percentile(all, 0.99)
	v.getP99, v.loginP99 = percentile(gets, 0.99), percentile(logins, 0.99)
	if v.n > 0 {
		v.successPct = 100 * float64(v.ok) / float64(v.n)
	}
	return v
}

// percentile returns the q-quantile (0 < q ≤ 1) of d by the nearest-rank
// method: the smallest value with at least q of the values at or below
// it. d is sorted in place; an empty d gives 0.
func percentile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	k := int(math.Ceil(q * float64(len(d))))
	k = min(max(k, 1), len(d))
	return d[k-1]
}

// growth is how the database grew over a phase.
type growth struct {
	seconds   float64
	db, audit int64 // bytes
	rows      int64
	tables    []string // the audit tables measured
	// late is the growth over the phase's second half alone. What a
	// flood adds once per window (the throttle's failures of an address,
	// the audit events an address starts in a fold window) comes in the
	// first seconds; the second half shows the rate that goes on, and is
	// the one held against the goal. Run the phase for several fold
	// windows (--duration 3m) for a rate that includes new windows.
	late *growth
}

// judged is the growth held against the goal: the second half's when
// measured.
func (g growth) judged() growth {
	if g.late != nil {
		return *g.late
	}
	return g
}

// perHour extrapolates bytes over g's phase to an hour.
func (g growth) perHour(bytes int64) float64 {
	if g.seconds <= 0 {
		return 0
	}
	return float64(bytes) / g.seconds * 3600
}

// phaseResult is one line of the report.
type phaseResult struct {
	name     string
	victim   victimStats
	attacker map[string]int
	growth   *growth
	churn    *churnResult    // churn phases
	sessions *sessionsResult // sessions phase
}

// verdict says whether r met the goals against the quiet p99.
//
// The growth held against the goal is the flood's: the phase's judged
// rate less the quiet run's (the victim's own logins), quietGrowth bytes
// an hour.
func verdict(r phaseResult, quietP99 time.Duration, quietGrowth float64) string {
	if r.name == "quiet" {
		return "-"
	}
	var missed []string
	if r.victim.n == 0 || r.victim.ok < r.victim.n {
		missed = append(missed, "success")
	}
	if r.victim.p99 > max(goalP99, time.Duration(goalRatio*float64(quietP99))) {
		missed = append(missed, "p99")
	}
	if r.growth != nil && r.growth.judged().perHour(r.growth.judged().audit)-quietGrowth > goalGrowth {
		missed = append(missed, "growth")
	}
	if r.churn != nil && r.churn.missed() {
		missed = append(missed, "growth")
	}
	if r.sessions != nil && r.sessions.missed() {
		missed = append(missed, "sessions")
	}
	if len(missed) == 0 {
		return "met"
	}
	return "MISSED " + strings.Join(missed, ",")
}

// writeTable prints the summary table of results: one line per phase.
func writeTable(w io.Writer, results []phaseResult) {
	var (
		quietP99    time.Duration
		quietGrowth float64
	)
	for _, r := range results {
		if r.name == "quiet" {
			quietP99 = r.victim.p99
			if g := r.growth; g != nil {
				quietGrowth = g.judged().perHour(g.judged().audit)
			}
			break
		}
	}
	// The phase column is as wide as the longest name, at least 8.
	width := 8
	for _, r := range results {
		width = max(width, len(r.name))
	}
	const row = "%-*s %11s %7s %8s %8s %9s %8s %9s  %s\n"
	fmt.Fprintf(w, row, width, "phase", "victim reqs", "ok %", "p50 ms", "p99 ms", "p99/quiet", "GET p99", "login p99", "goal")
	for _, r := range results {
		v := r.victim
		ratio := "-"
		if r.name != "quiet" && quietP99 > 0 {
			ratio = fmt.Sprintf("%.2f", float64(v.p99)/float64(quietP99))
		}
		fmt.Fprintf(w, row, width, r.name, fmt.Sprint(v.n), fmt.Sprintf("%.2f", v.successPct),
			ms(v.p50), ms(v.p99), ratio, msOf(v.getP99, v.gets), msOf(v.loginP99, v.n-v.gets), verdict(r, quietP99, quietGrowth))
	}
	fmt.Fprintln(w)
	for _, r := range results {
		if r.name == "quiet" {
			continue
		}
		fmt.Fprintf(w, "%-8s attacker: %s", r.name, formatCounts(r.attacker))
		if len(r.victim.failures) > 0 {
			fmt.Fprintf(w, "; victim failures: %s", formatCounts(r.victim.failures))
		}
		fmt.Fprintln(w)
		if g := r.growth; g != nil {
			fmt.Fprintf(w, "%-8s growth over %.0f s: audit tables (%s) %+d rows, %s (%s/h); database %s (%s/h)\n", "", g.seconds,
				strings.Join(g.tables, ", "), g.rows, mib(float64(g.audit)), mib(g.perHour(g.audit)), mib(float64(g.db)), mib(g.perHour(g.db)))
			if l := g.late; l != nil {
				fmt.Fprintf(w, "%-8s   of which the last %.0f s (judged): %+d rows, %s (%s/h); database %s (%s/h)\n", "", l.seconds,
					l.rows, mib(float64(l.audit)), mib(l.perHour(l.audit)), mib(float64(l.db)), mib(l.perHour(l.db)))
			}
		}
		if r.churn != nil {
			writeChurn(w, r.churn)
		}
		if r.sessions != nil {
			writeSessions(w, r.sessions)
		}
	}
}

// ms prints d in milliseconds with one decimal.
func ms(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }

// msOf prints d as ms does, or "-" when it summarises no request.
func msOf(d time.Duration, n int) string {
	if n == 0 {
		return "-"
	}
	return ms(d)
}

// mib prints a byte count in MiB (KiB when small), signed.
func mib(b float64) string {
	if math.Abs(b) < 1<<20 {
		return fmt.Sprintf("%+.1f KiB", b/1024)
	}
	return fmt.Sprintf("%+.1f MiB", b/(1<<20))
}
