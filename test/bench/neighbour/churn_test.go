package main

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestChurnBodyIsAnExpiringEntryOf200To250KiB(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	for _, v := range []churnVariant{{expire: true}, {delete: true}} {
		for i := range 20 {
			b := churnBody(r, "k", "u-1", v)
			var e struct {
				Key       string `json:"key"`
				Assignee  struct{ ID string }
				ExpiresIn *string         `json:"expiresIn"`
				Data      json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal(b, &e); err != nil {
				t.Fatalf("body %d is not JSON: %v", i, err)
			}
			if n := len(e.Data); n < churnMinBytes || n > churnMaxBytes {
				t.Errorf("data of %d bytes, want %d to %d", n, churnMinBytes, churnMaxBytes)
			}
			if e.Key != "k" || e.Assignee.ID != "u-1" {
				t.Errorf("key %q, assignee %q; want k, u-1", e.Key, e.Assignee.ID)
			}
			if got := e.ExpiresIn != nil && *e.ExpiresIn == "1ms"; got != v.expire {
				t.Errorf("expiresIn %v for a variant that expires: %v", e.ExpiresIn, v.expire)
			}
			if seen[string(e.Data)] {
				t.Error("two bodies have the same data")
			}
			seen[string(e.Data)] = true
		}
	}
}

func TestChurnStatusTellsTheQuotaFromOtherRefusals(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		code int
		body string
		want string
	}{
		"created":               {201, `{"id":"x"}`, "201"},
		"the quota":             {403, `{"statusCode":403,"errorCode":"CACHE_QUOTA_EXCEEDED","message":"…"}`, "403quota"},
		"another 403":           {403, `{"statusCode":403,"errorCode":"FORBIDDEN"}`, "403"},
		"a 403 that is no JSON": {403, `nope`, "403"},
		"too many requests":     {429, `{"errorCode":"TOO_MANY_REQUESTS"}`, "429"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := churnStatus(c.code, []byte(c.body)); got != c.want {
				t.Errorf("churnStatus = %q, want %q", got, c.want)
			}
		})
	}
}

// churned returns a churn result whose database grew by db bytes under a
// 4 MiB quota, its change log by changes bytes over rows changes that the
// quota counts counted bytes for.
func churned(db, changes, rows, counted int64) *churnResult {
	return &churnResult{
		quota:    4 << 20,
		before:   churnSizes{db: 1 << 20, tables: map[string]int64{"cache_changes": 1 << 20, "auth_events": 0}},
		after:    churnSizes{db: 1<<20 + db, tables: map[string]int64{"cache_changes": 1<<20 + changes, "auth_events": 32 << 10}, changes: copies{rows: rows, counted: counted}, usage: counted},
		accepted: 9, quot: 120,
	}
}

func TestChurnGoalIsTheQuotaPlus12MiB(t *testing.T) {
	t.Parallel()
	if r := churned(16<<20, 0, 0, 0); r.missed() {
		t.Error("16 MiB of growth under a 4 MiB quota missed the goal")
	}
	if r := churned(16<<20+1, 0, 0, 0); !r.missed() {
		t.Error("one byte past 16 MiB met the goal")
	}
	quiet := 10 * time.Millisecond
	line := phaseResult{name: "churn-idem", victim: victimStats{n: 10, ok: 10, p99: quiet}, churn: churned(300<<20, 0, 0, 0)}
	if got := verdict(line, quiet, 0); got != "MISSED growth" {
		t.Errorf("verdict = %q, want MISSED growth", got)
	}
	line.churn = churned(5<<20, 0, 0, 0)
	if got := verdict(line, quiet, 0); got != "met" {
		t.Errorf("verdict = %q, want met", got)
	}
}

func TestChurnUncountedPerRow(t *testing.T) {
	t.Parallel()
	r := churned(5<<20, 10*1000+2000, 10, 10*1000)
	perRow, ok := r.uncounted()
	if !ok[1] || perRow[1] != 200 {
		t.Errorf("change log: %v B/row (ok %v), want 200", perRow[1], ok[1])
	}
	if ok[0] || ok[2] {
		t.Error("a per-row figure for tables whose rows did not change")
	}
	var b strings.Builder
	writeChurn(&b, r)
	for _, want := range []string{
		"creates accepted 9, refused 403 CACHE_QUOTA_EXCEEDED 120",
		"growth: database +5.0 MiB (goal ≤ +16.0 MiB: the quota and +12.0 MiB); counted in quotas +9.8 KiB",
		"tables grown: none by 64 KiB or more",
		"cache_changes +10 rows, counted +9.8 KiB, uncounted 200 B/row",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lines lack %q:\n%s", want, b.String())
		}
	}
}

func TestChurnTablesGrownMostFirst(t *testing.T) {
	t.Parallel()
	r := churned(300<<20, 200<<20, 0, 0)
	r.before.tables["cachegate_idempotency"] = 0
	r.after.tables["cachegate_idempotency"] = 50 << 20
	r.before.tuples = map[string][2]int64{"cache_changes": {10, 0}}
	r.after.tuples = map[string][2]int64{"cache_changes": {910, 880}}
	var b strings.Builder
	writeChurn(&b, r)
	want := "tables grown: cache_changes +200.0 MiB (+900 rows inserted, +880 dead), cachegate_idempotency +50.0 MiB\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("lines lack %q:\n%s", want, b.String())
	}
}

func TestExtraPhasesNeedTheirAccountsAndDurations(t *testing.T) {
	t.Parallel()
	c, err := parseFlags([]string{"--duration", "5s", "--phases", "lists,sessions,churn-idem"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(extraAccounts(c.phases), ","); got != "sessions,churn-idem" {
		t.Errorf("accounts %s, want sessions,churn-idem", got)
	}
	if phaseDuration(c, "churn-idem") != 45*time.Second || phaseDuration(c, "sessions") != 5*time.Second {
		t.Errorf("durations %v and %v, want 45s (churn) and 5s", phaseDuration(c, "churn-idem"), phaseDuration(c, "sessions"))
	}
	for name := range churnVariants {
		if abuses[name] == nil {
			t.Errorf("phase %s has no abuse", name)
		}
	}
	if _, err := parseFlags([]string{"--churn-quota-mib", "0", "--churn-duration", "0s"}, nil); err == nil ||
		!strings.Contains(err.Error(), "--churn-quota-mib") || !strings.Contains(err.Error(), "--churn-duration") {
		t.Errorf("bad churn flags: %v, want both named", err)
	}
}
