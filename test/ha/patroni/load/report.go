package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// The request kinds of the load.
const (
	kindWrite   = "write"   // POST /cache/user
	kindRefresh = "refresh" // POST /auth/refresh
	kindLogin   = "login"   // POST /auth/login
)

// outcome is one request of the load and how it was answered.
type outcome struct {
	Kind       string
	Replica    int // index into --urls
	Sent, Done time.Time
	Status     int    // 0: no answer (timeout or transport error, see Err)
	Code       string // errorCode of an error body
	Err        string // "timeout" or "transport error" when Status is 0
	RetryAfter bool   // the answer carried Retry-After
	Retry      bool   // a retry of an unanswered write with the same Idempotency-Key
}

func (o outcome) ok() bool { return o.Status >= 200 && o.Status < 300 }

// unavailable tells the answer the recipe expects while there is no
// primary: 503 DATABASE_UNAVAILABLE with Retry-After (README, "Deployment").
func (o outcome) unavailable() bool {
	return o.Status == 503 && o.Code == "DATABASE_UNAVAILABLE" && o.RetryAfter
}

// label names the answer for the report: "201", "503 DATABASE_UNAVAILABLE",
// "503 DATABASE_UNAVAILABLE without Retry-After", "timeout".
func (o outcome) label() string {
	if o.Status == 0 {
		return o.Err
	}
	s := fmt.Sprint(o.Status)
	if o.Code != "" {
		s += " " + o.Code
	}
	if o.Status == 503 && !o.RetryAfter {
		s += " without Retry-After"
	}
	return s
}

// counts counts answers by label.
type counts map[string]int

func (c counts) String() string {
	if len(c) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(c))
	for _, k := range slices.Sorted(maps.Keys(c)) {
		parts = append(parts, fmt.Sprintf("%s: %d", k, c[k]))
	}
	return strings.Join(parts, ", ")
}

// election is what happened between the kill and the first success
// after the outage it caused.
type election struct {
	Kill time.Time
	// OutageStart is when the first request sent at or after the kill
	// that failed was sent; zero when none failed. With the whole node
	// killed that is right after the kill; with only the leader's Patroni
	// killed its PostgreSQL serves on until HAProxy takes it out, and
	// the outage starts then.
	OutageStart time.Time
	// Recovered is when the first success of a request sent after
	// OutageStart was answered; zero when none was (or no outage).
	Recovered time.Time
	// PerReplica and PerKind hold the same, for each replica and kind.
	PerReplica map[int]time.Time
	PerKind    map[string]time.Time
	// During counts the answers to requests sent at or after the kill and
	// answered before Recovered (all of them when there was no recovery):
	// the statuses answered during the election.
	During counts
	// InFlight counts the answers to requests sent before the kill and
	// answered after it.
	InFlight counts
	// DuringTimes are how long the requests counted in During took,
	// shortest first.
	DuringTimes []time.Duration
}

// percentile returns the p-th percentile (0 < p ≤ 100, nearest rank) of
// the election's answer times; 0 when there were none.
func (e election) percentile(p float64) time.Duration {
	n := len(e.DuringTimes)
	if n == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(n))) - 1
	return e.DuringTimes[min(max(i, 0), n-1)]
}

// recovery is the time from the kill to the first success after the
// outage: 0 when nothing failed after the kill; false when the outage did
// not end.
func (e election) recovery() (time.Duration, bool) {
	if e.OutageStart.IsZero() {
		return 0, true
	}
	if e.Recovered.IsZero() {
		return 0, false
	}
	return e.Recovered.Sub(e.Kill), true
}

// analyse finds the election window in the outcomes of a run whose leader
// was killed at kill.
func analyse(outs []outcome, kill time.Time) election {
	e := election{Kill: kill, PerReplica: map[int]time.Time{}, PerKind: map[string]time.Time{},
		During: counts{}, InFlight: counts{}}
	for _, o := range outs {
		if !o.ok() && !o.Sent.Before(kill) && (e.OutageStart.IsZero() || o.Sent.Before(e.OutageStart)) {
			e.OutageStart = o.Sent
		}
	}
	for _, o := range outs {
		if e.OutageStart.IsZero() || !o.ok() || !o.Sent.After(e.OutageStart) {
			continue
		}
		if e.Recovered.IsZero() || o.Done.Before(e.Recovered) {
			e.Recovered = o.Done
		}
		if t, seen := e.PerReplica[o.Replica]; !seen || o.Done.Before(t) {
			e.PerReplica[o.Replica] = o.Done
		}
		if t, seen := e.PerKind[o.Kind]; !seen || o.Done.Before(t) {
			e.PerKind[o.Kind] = o.Done
		}
	}
	for _, o := range outs {
		if !o.Done.After(kill) {
			continue
		}
		if o.Sent.Before(kill) {
			e.InFlight[o.label()]++
			continue
		}
		if e.Recovered.IsZero() || o.Done.Before(e.Recovered) {
			e.During[o.label()]++
			e.DuringTimes = append(e.DuringTimes, o.Done.Sub(o.Sent))
		}
	}
	slices.Sort(e.DuringTimes)
	return e
}

// failures counts, over the whole run, every answer that is neither a
// success nor the expected 503 DATABASE_UNAVAILABLE with Retry-After,
// self-conflicts excepted (they are counted on their own).
func failures(outs []outcome) counts {
	c := counts{}
	for _, o := range outs {
		if o.ok() || o.unavailable() || isSelfConflict(o) {
			continue
		}
		c[o.Kind+" "+o.label()]++
	}
	return c
}

// isSelfConflict tells a retry of one's own write refused as a duplicate:
// the first attempt was stored although it was not acknowledged, and the
// server did not recognise the retry by its Idempotency-Key.
func isSelfConflict(o outcome) bool {
	return o.Kind == kindWrite && o.Retry && o.Status == 409 && o.Code == "CACHE_ENTITY_ALREADY_EXISTS"
}

// ack is an acknowledged write: the key it was sent with and the id of
// the entry the 201 answered.
type ack struct{ Key, ID string }

// lostWrites lists the acknowledged writes whose entry is not among the
// stored ids.
func lostWrites(acks []ack, stored map[string]bool) []ack {
	var lost []ack
	for _, a := range acks {
		if !stored[a.ID] {
			lost = append(lost, a)
		}
	}
	return lost
}

// storedAnyway counts the keys of writes never acknowledged (answered 503,
// or not answered) whose entry is stored all the same: the write committed
// but its answer was lost. A client retrying such a write without an
// Idempotency-Key gets 409 for its own entry.
func storedAnyway(unacked []string, storedKeys map[string]bool) int {
	n := 0
	for _, k := range unacked {
		if storedKeys[k] {
			n++
		}
	}
	return n
}

// verdict lists why a run missed the goal (docs/ha.md); empty when it met
// it. lost is the most acknowledged writes missing from one replica's list.
func verdict(e election, fails counts, lost, selfConflicts int, restarted []string, idempotency bool, goal time.Duration) []string {
	var why []string
	if lost > 0 {
		why = append(why, fmt.Sprintf("%d acknowledged writes lost", lost))
	}
	if d, ok := e.recovery(); !ok {
		why = append(why, "no success after the outage began")
	} else if d > goal {
		why = append(why, fmt.Sprintf("first success %.1f s after the kill (goal %.0f s)", d.Seconds(), goal.Seconds()))
	}
	if len(fails) > 0 {
		why = append(why, "answers other than 503 DATABASE_UNAVAILABLE: "+fails.String())
	}
	if idempotency && selfConflicts > 0 {
		why = append(why, fmt.Sprintf("%d self-conflicts", selfConflicts))
	}
	if len(restarted) > 0 {
		why = append(why, "cachegate processes restarted or gone: "+strings.Join(restarted, ", "))
	}
	return why
}
