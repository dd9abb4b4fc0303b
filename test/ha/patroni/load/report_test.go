package main

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)

// at is an instant s seconds after t0.
func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func unavailable(kind string, replica int, sent, done float64) outcome {
	return outcome{Kind: kind, Replica: replica, Sent: at(sent), Done: at(done), Status: 503,
		Code: "DATABASE_UNAVAILABLE", RetryAfter: true}
}

func created(kind string, replica int, sent, done float64) outcome {
	return outcome{Kind: kind, Replica: replica, Sent: at(sent), Done: at(done), Status: 201}
}

func TestAnalyseFindsTheElectionWindow(t *testing.T) {
	t.Parallel()
	kill := at(10)
	outs := []outcome{
		created(kindWrite, 0, 9, 9.5),      // before the kill: not in the window
		created(kindWrite, 1, 9.9, 10.1),   // in flight at the kill, answered 201
		unavailable(kindWrite, 0, 9.8, 12), // in flight at the kill, answered 503
		unavailable(kindWrite, 0, 12, 14),
		{Kind: kindRefresh, Replica: 1, Sent: at(13), Done: at(28), Err: "timeout"},
		unavailable(kindRefresh, 1, 20, 31.5), // answered after the first success: not counted
		created(kindRefresh, 1, 31, 33),       // replica 2's first success
		created(kindWrite, 0, 30, 31),         // the first success
		created(kindWrite, 0, 31.1, 31.2),
	}
	e := analyse(outs, kill)

	if d, ok := e.recovery(); !ok || d != 21*time.Second {
		t.Errorf("recovery = %s, %t; want 21s", d, ok)
	}
	if got := e.PerReplica[0]; !got.Equal(at(31)) {
		t.Errorf("replica 1's first success at %s; want %s", got, at(31))
	}
	if got := e.PerReplica[1]; !got.Equal(at(33)) {
		t.Errorf("replica 2's first success at %s; want %s", got, at(33))
	}
	if got := e.PerKind[kindRefresh]; !got.Equal(at(33)) {
		t.Errorf("first refresh success at %s; want %s", got, at(33))
	}
	if got, want := e.During.String(), "503 DATABASE_UNAVAILABLE: 1, timeout: 1"; got != want {
		t.Errorf("during the election: %s; want %s", got, want)
	}
	if got, want := e.InFlight.String(), "201: 1, 503 DATABASE_UNAVAILABLE: 1"; got != want {
		t.Errorf("in flight at the kill: %s; want %s", got, want)
	}
	if got := e.percentile(50); got != 2*time.Second {
		t.Errorf("median answer time during the election %s; want 2s (of 2s and 15s)", got)
	}
	if got := e.percentile(100); got != 15*time.Second {
		t.Errorf("longest answer during the election %s; want 15s", got)
	}
}

// With only the leader's Patroni killed, its PostgreSQL serves on until
// HAProxy takes it out: the successes right after the kill are not the
// recovery, the first one after the outage is.
func TestAnalyseMeasuresRecoveryFromTheOutageNotFromSuccessesBeforeIt(t *testing.T) {
	t.Parallel()
	outs := []outcome{
		created(kindWrite, 0, 10.05, 10.1),
		created(kindRefresh, 1, 10.5, 10.6),
		unavailable(kindWrite, 0, 11.6, 11.7),
		unavailable(kindRefresh, 1, 11.65, 11.7),
		created(kindWrite, 0, 29.2, 29.3),
	}
	e := analyse(outs, at(10))
	if !e.OutageStart.Equal(at(11.6)) {
		t.Errorf("outage began at %s; want %s", e.OutageStart, at(11.6))
	}
	if d, ok := e.recovery(); !ok || d != 19300*time.Millisecond {
		t.Errorf("recovery = %s, %t; want 19.3s", d, ok)
	}
	if got, want := e.During.String(), "201: 2, 503 DATABASE_UNAVAILABLE: 2"; got != want {
		t.Errorf("during the election: %s; want %s", got, want)
	}
}

func TestAnalyseWithoutRecoveryCountsEverythingAfterTheKill(t *testing.T) {
	t.Parallel()
	outs := []outcome{
		created(kindWrite, 0, 1, 2),
		unavailable(kindWrite, 0, 11, 12),
		unavailable(kindWrite, 1, 50, 52),
	}
	e := analyse(outs, at(10))
	if d, ok := e.recovery(); ok {
		t.Errorf("recovery = %s; want none", d)
	}
	if got := e.During[outs[1].label()]; got != 2 {
		t.Errorf("%d answers 503 during the election; want 2 (%s)", got, e.During)
	}
}

func TestLabelsTellTheExpected503FromOthers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o    outcome
		want string
		ok   bool // counted as the expected answer while there is no primary
	}{
		{unavailable(kindWrite, 0, 0, 1), "503 DATABASE_UNAVAILABLE", true},
		{outcome{Status: 503, Code: "DATABASE_UNAVAILABLE"}, "503 DATABASE_UNAVAILABLE without Retry-After", false},
		{outcome{Status: 500, Code: "INTERNAL"}, "500 INTERNAL", false},
		{outcome{Err: "timeout"}, "timeout", false},
		{outcome{Status: 401}, "401", false},
	} {
		if got := tc.o.label(); got != tc.want {
			t.Errorf("label %q; want %q", got, tc.want)
		}
		if got := tc.o.unavailable(); got != tc.ok {
			t.Errorf("%s: unavailable() = %t; want %t", tc.want, got, tc.ok)
		}
	}
}

func TestFailuresLeaveOutSuccessesThe503AndSelfConflicts(t *testing.T) {
	t.Parallel()
	selfConflict := outcome{Kind: kindWrite, Status: 409, Code: "CACHE_ENTITY_ALREADY_EXISTS", Retry: true}
	firstAttempt409 := selfConflict
	firstAttempt409.Retry = false
	outs := []outcome{
		created(kindWrite, 0, 0, 1),
		unavailable(kindRefresh, 0, 0, 1),
		selfConflict,
		firstAttempt409,
		{Kind: kindRefresh, Status: 401},
		{Kind: kindWrite, Err: "timeout"},
	}
	got := failures(outs).String()
	want := "refresh 401: 1, write 409 CACHE_ENTITY_ALREADY_EXISTS: 1, write timeout: 1"
	if got != want {
		t.Errorf("failures: %s; want %s", got, want)
	}
}

func TestLostWritesAreAcknowledgedButNotStored(t *testing.T) {
	t.Parallel()
	acks := []ack{{"k1", "id1"}, {"k2", "id2"}, {"k3", "id3"}}
	stored := map[string]bool{"id1": true, "id3": true, "id9": true}
	lost := lostWrites(acks, stored)
	if len(lost) != 1 || lost[0] != (ack{"k2", "id2"}) {
		t.Errorf("lost %v; want [{k2 id2}]", lost)
	}
	if got := lostWrites(acks, map[string]bool{"id1": true, "id2": true, "id3": true}); len(got) != 0 {
		t.Errorf("lost %v with every write stored", got)
	}
}

func TestStoredAnywayCountsUnacknowledgedWritesThatCommitted(t *testing.T) {
	t.Parallel()
	if got := storedAnyway([]string{"a", "b", "c"}, map[string]bool{"b": true, "z": true}); got != 1 {
		t.Errorf("stored anyway: %d; want 1", got)
	}
}

func TestVerdict(t *testing.T) {
	t.Parallel()
	good := analyse([]outcome{unavailable(kindWrite, 0, 11, 12), created(kindWrite, 0, 20, 21)}, at(10))
	slow := analyse([]outcome{unavailable(kindWrite, 0, 11, 12), created(kindWrite, 0, 45, 46)}, at(10))
	none := analyse([]outcome{unavailable(kindWrite, 0, 11, 12)}, at(10))
	unhurt := analyse([]outcome{created(kindWrite, 0, 11, 12)}, at(10))
	for _, tc := range []struct {
		name          string
		e             election
		fails         counts
		lost, selfC   int
		restarted     []string
		idem          bool
		wantSubstring string // empty: goal met
	}{
		{name: "a clean failover meets the goal", e: good},
		{name: "self-conflicts do not count without Idempotency-Key", e: good, selfC: 3},
		{name: "a lost write misses it", e: good, lost: 1, wantSubstring: "1 acknowledged writes lost"},
		{name: "a slow recovery misses it", e: slow, wantSubstring: "first success 36.0 s after the kill"},
		{name: "no recovery misses it", e: none, wantSubstring: "no success after the outage began"},
		{name: "no outage meets it", e: unhurt},
		{name: "a 500 misses it", e: good, fails: counts{"write 500 INTERNAL": 1}, wantSubstring: "write 500 INTERNAL: 1"},
		{name: "a self-conflict misses it with Idempotency-Key", e: good, selfC: 2, idem: true, wantSubstring: "2 self-conflicts"},
		{name: "a restart misses it", e: good, restarted: []string{"42"}, wantSubstring: "restarted or gone: 42"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			why := strings.Join(verdict(tc.e, tc.fails, tc.lost, tc.selfC, tc.restarted, tc.idem, 30*time.Second), "; ")
			if tc.wantSubstring == "" && why != "" {
				t.Errorf("goal missed: %s", why)
			}
			if tc.wantSubstring != "" && !strings.Contains(why, tc.wantSubstring) {
				t.Errorf("verdict %q; want it to say %q", why, tc.wantSubstring)
			}
		})
	}
}

func TestSubjectReadsTheSubClaim(t *testing.T) {
	t.Parallel()
	// {"alg":"none"} . {"sub":"0190-abc"} . (no signature: not checked)
	if got, err := subject("eyJhbGciOiJub25lIn0.eyJzdWIiOiIwMTkwLWFiYyJ9.x"); err != nil || got != "0190-abc" {
		t.Errorf("subject = %q, %v; want 0190-abc", got, err)
	}
	for _, bad := range []string{"", "a.b", "a.!!!.c", "eyJhbGciOiJub25lIn0.e30.x"} {
		if _, err := subject(bad); err == nil {
			t.Errorf("subject(%q) succeeded", bad)
		}
	}
}

func TestParseRequiresURLsPasswordAndKillCommand(t *testing.T) {
	t.Parallel()
	ok := []string{"--urls", "http://127.0.0.1:1/,http://127.0.0.1:2", "--password-file", "pw", "--pids", "7,8", "--", "bash", "kill"}
	o, err := parse(ok, &strings.Builder{})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if len(o.urls) != 2 || o.urls[0] != "http://127.0.0.1:1" || len(o.pids) != 2 || strings.Join(o.killCommand, " ") != "bash kill" {
		t.Errorf("parsed %+v", o)
	}
	for _, args := range [][]string{
		{"--password-file", "pw", "--", "x"},
		{"--urls", "127.0.0.1:1", "--password-file", "pw", "--", "x"},
		{"--urls", "http://h", "--", "x"},
		{"--urls", "http://h", "--password-file", "pw"},
		{"--urls", "http://h", "--password-file", "pw", "--pids", "x", "--", "x"},
	} {
		if _, err := parse(args, &strings.Builder{}); err == nil {
			t.Errorf("parse(%q) succeeded", args)
		}
	}
}
