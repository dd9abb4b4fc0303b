package main

import (
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestPercentile(t *testing.T) {
	t.Parallel()
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	hundred := make([]int, 100)
	for i := range hundred {
		hundred[i] = 100 - i // 100 … 1, unsorted on purpose
	}
	cases := map[string]struct {
		d    []time.Duration
		q    float64
		want time.Duration
	}{
		"no samples give zero":                      {nil, 0.99, 0},
		"one sample is every percentile":            {ms(7), 0.5, 7 * time.Millisecond},
		"the median of four is the second":          {ms(4, 1, 3, 2), 0.5, 2 * time.Millisecond},
		"p99 of 1..100 is 99":                       {ms(hundred...), 0.99, 99 * time.Millisecond},
		"p50 of 1..100 is 50":                       {ms(hundred...), 0.50, 50 * time.Millisecond},
		"p99 of ten samples is the largest":         {ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 1000), 0.99, time.Second},
		"p100 is the largest":                       {ms(3, 9, 1), 1, 9 * time.Millisecond},
		"a tiny quantile is still the smallest one": {ms(3, 9, 1), 0.0001, time.Millisecond},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := percentile(c.d, c.q); got != c.want {
				t.Errorf("percentile(%v) = %v, want %v", c.q, got, c.want)
			}
		})
	}
}

func TestSummariseCountsFailuresByStatus(t *testing.T) {
	t.Parallel()
	s := summarise([]sample{
		{latency: time.Millisecond, ok: true, status: "200"},
		{latency: 2 * time.Millisecond, ok: true, status: "200"},
		{login: true, latency: 5 * time.Millisecond, ok: true, status: "201"},
		{latency: 5 * time.Second, status: "503"},
	})
	if s.n != 4 || s.ok != 3 || s.successPct != 75 {
		t.Errorf("n, ok, %% = %d, %d, %v; want 4, 3, 75", s.n, s.ok, s.successPct)
	}
	if s.failures["503"] != 1 || len(s.failures) != 1 {
		t.Errorf("failures = %v, want 503:1", s.failures)
	}
	if s.getP99 != 5*time.Second || s.loginP99 != 5*time.Millisecond {
		t.Errorf("GET p99 %v, login p99 %v; want 5s and 5ms", s.getP99, s.loginP99)
	}
}

func TestVerdict(t *testing.T) {
	t.Parallel()
	quiet := 10 * time.Millisecond
	line := func(ok, n int, p99 time.Duration) phaseResult {
		return phaseResult{name: "lists", victim: victimStats{n: n, ok: ok, p99: p99}}
	}
	cases := map[string]struct {
		r    phaseResult
		want string
	}{
		"the quiet run has no verdict":        {phaseResult{name: "quiet"}, "-"},
		"within three times quiet is met":     {line(10, 10, 30*time.Millisecond), "met"},
		"above 3× but under 250 ms is met":    {line(10, 10, 200*time.Millisecond), "met"},
		"above both bounds misses p99":        {line(10, 10, 251*time.Millisecond), "MISSED p99"},
		"one failure misses success":          {line(9, 10, time.Millisecond), "MISSED success"},
		"no victim requests at all is a miss": {line(0, 0, 0), "MISSED success"},
		"fast growth misses growth": {phaseResult{name: "logins", victim: victimStats{n: 1, ok: 1},
			growth: &growth{seconds: 10, audit: 3000}}, "MISSED growth"},
		"slow growth is met": {phaseResult{name: "logins", victim: victimStats{n: 1, ok: 1},
			growth: &growth{seconds: 10, audit: 2000}}, "met"},
		"the second half is judged when measured": {phaseResult{name: "logins", victim: victimStats{n: 1, ok: 1},
			growth: &growth{seconds: 10, audit: 3000, late: &growth{seconds: 5, audit: 0}}}, "met"},
		"fast growth in the second half misses": {phaseResult{name: "logins", victim: victimStats{n: 1, ok: 1},
			growth: &growth{seconds: 10, audit: 2000, late: &growth{seconds: 5, audit: 2000}}}, "MISSED growth"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := verdict(c.r, quiet, 0); got != c.want {
				t.Errorf("verdict = %q, want %q", got, c.want)
			}
		})
	}
}

// TestVerdictTakesTheVictimsOwnGrowthOff: the quiet run's growth (the
// victim's successful logins) is not the flood's.
func TestVerdictTakesTheVictimsOwnGrowthOff(t *testing.T) {
	t.Parallel()
	r := phaseResult{name: "logins", victim: victimStats{n: 1, ok: 1}, growth: &growth{seconds: 3600, audit: 3 << 20}}
	if got := verdict(r, time.Millisecond, 0); got != "MISSED growth" {
		t.Errorf("3 MiB/h with nothing to take off: verdict %q, want MISSED growth", got)
	}
	if got := verdict(r, time.Millisecond, float64(2.5*(1<<20))); got != "met" {
		t.Errorf("3 MiB/h beside a quiet run's 2.5 MiB/h: verdict %q, want met", got)
	}
}

func TestWriteTable(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	writeTable(&b, []phaseResult{
		{name: "quiet", victim: victimStats{n: 520, ok: 520, gets: 520, successPct: 100, p50: time.Millisecond, p99: 4 * time.Millisecond,
			getP99: 4 * time.Millisecond}},
		{name: "lists", victim: victimStats{n: 520, ok: 260, successPct: 50, p50: 2 * time.Millisecond, p99: 5 * time.Second,
			failures: map[string]int{"503": 250, "err": 10}}, attacker: map[string]int{"err": 1, "429": 30, "200": 4, "cut": 2}},
		{name: "logins", victim: victimStats{n: 520, ok: 520, successPct: 100, p99: 6 * time.Millisecond},
			attacker: map[string]int{"401": 100, "429": 900},
			growth:   &growth{seconds: 10, audit: 2 << 20, db: 4 << 20, rows: 1000, tables: []string{"auth_events", "login_failures"}}},
	})
	out := b.String()
	for _, want := range []string{
		"phase    victim reqs    ok %",
		"quiet            520  100.00      1.0      4.0         -      4.0         -  -\n",
		"lists            520   50.00      2.0   5000.0   1250.00",
		"MISSED success,p99",
		"logins           520  100.00      0.0      6.0      1.50",
		"MISSED growth",
		"lists    attacker: 200:4 429:30 cut:2 err:1; victim failures: 503:250 err:10",
		"logins   attacker: 401:100 429:900\n",
		"audit tables (auth_events, login_failures) +1000 rows, +2.0 MiB (+720.0 MiB/h); database +4.0 MiB (+1440.0 MiB/h)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestAttackerKeysAreDistinctNonASCIIAnd250Long(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for i := range 3000 {
		k := attackerKey(i)
		if n := utf8.RuneCountInString(k); n != 250 {
			t.Fatalf("key %d has %d characters, want 250", i, n)
		}
		if len(k) <= 250 {
			t.Fatalf("key %d is ASCII only", i)
		}
		if seen[k] {
			t.Fatalf("key %d repeats an earlier one", i)
		}
		seen[k] = true
	}
	if attackerKey(7) != attackerKey(7) {
		t.Error("a key differs between two calls")
	}
}

func TestFoldQueryStaysUnderTheQueryLimit(t *testing.T) {
	t.Parallel()
	// README.md ("Listing"): at most 4 KiB of query; a longer one would
	// measure the 400, not the fold.
	keys := []string{attackerKey(1), attackerKey(2)}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		if q := foldQuery(r, keys); len(q) > 4096 {
			t.Fatalf("query of %d bytes: %s", len(q), q)
		}
	}
}

func TestParsePhases(t *testing.T) {
	t.Parallel()
	got, err := parsePhases("fold, logins")
	if err != nil || strings.Join(got, ",") != "quiet,fold,logins" {
		t.Errorf("parsePhases = %v, %v; want quiet first, then fold,logins", got, err)
	}
	if _, err := parsePhases("quiet,floods"); err == nil {
		t.Error("an unknown phase was accepted")
	}
	if _, err := parseFlags([]string{"--db", "mysql", "--duration", "0s"}, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "--db") || !strings.Contains(err.Error(), "--duration") {
		t.Errorf("bad flags: %v, want both problems named", err)
	}
}
