// Command progress reads `go test -json` on its standard input and prints
// what a person watching test/run needs (README, "Development"):
//
//   - one line per package as it ends ("ok", "FAIL" with its time), as
//     plain go test prints them, but as soon as each ends, not in package
//     order;
//   - the whole output of every failed test and of every failed package
//     (a panic, a timeout, a build error), and nothing of passing tests;
//   - a progress line whenever nothing was printed for 30 s: the packages
//     ended so far and those still running, with their times;
//   - at the end, one loud line naming everything skipped: the parts given
//     with -skipped (what test/run could not set up) and the tests that
//     skipped with a "SKIPPED" message, grouped by that message.
//
// With -ci (test/run passes it under CI=true) any such skip makes the exit
// status 1. Otherwise the status is 0: go test's own status is the verdict.
// SIGINT is ignored so that an interrupted run is still summed up when go
// test stops writing.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"time"
)

// event is one line of `go test -json` (go doc test2json).
type event struct {
	Time       time.Time
	Action     string
	Package    string
	ImportPath string // build-output and build-fail events
	Test       string
	Elapsed    float64
	Output     string
}

// quietFor is how long the output may stay silent before a progress line.
const quietFor = 30 * time.Second

// marker is the word a test's skip message carries when the skip means a
// part of the suite did not run (test/pgtest and test/e2e write it).
const marker = "SKIPPED"

type pkgState struct {
	started time.Time
	ended   bool
	out     []string            // package-level output
	tests   map[string][]string // output of tests still running
	order   []string            // tests in the order they first wrote
}

// report holds the state of one run. Its methods are called under mu.
type report struct {
	mu       sync.Mutex
	w        io.Writer
	now      func() time.Time
	begun    time.Time
	lastLine time.Time
	pkgs     map[string]*pkgState
	ok, fail []string
	skips    map[string][]string // skip message -> package.Test
	parts    []string            // parts test/run skipped itself
}

func newReport(w io.Writer, now func() time.Time, parts []string) *report {
	t := now()
	return &report{w: w, now: now, begun: t, lastLine: t,
		pkgs: map[string]*pkgState{}, skips: map[string][]string{}, parts: parts}
}

func (r *report) printf(format string, a ...any) {
	fmt.Fprintf(r.w, format, a...)
	r.lastLine = r.now()
}

func (r *report) pkg(name string) *pkgState {
	p := r.pkgs[name]
	if p == nil {
		p = &pkgState{started: r.now(), tests: map[string][]string{}}
		r.pkgs[name] = p
	}
	return p
}

// line handles one input line; what is not JSON is passed through.
func (r *report) line(text string) {
	var e event
	if !strings.HasPrefix(text, "{") || json.Unmarshal([]byte(text), &e) != nil {
		r.printf("%s\n", text)
		return
	}
	switch e.Action {
	case "build-output":
		r.printf("%s", e.Output)
		return
	case "build-fail", "run", "pause", "cont", "bench":
		return
	}
	p := r.pkg(e.Package)
	if e.Test == "" {
		r.packageEvent(e, p)
		return
	}
	switch e.Action {
	case "output":
		if _, ok := p.tests[e.Test]; !ok {
			p.order = append(p.order, e.Test)
		}
		p.tests[e.Test] = append(p.tests[e.Test], e.Output)
	case "fail":
		r.printf("%s", strings.Join(p.tests[e.Test], ""))
		delete(p.tests, e.Test)
	case "skip":
		for _, l := range p.tests[e.Test] {
			if i := strings.Index(l, marker); i >= 0 {
				msg := strings.TrimSpace(l[i:])
				r.skips[msg] = append(r.skips[msg], e.Package+"."+e.Test)
				break
			}
		}
		delete(p.tests, e.Test)
	case "pass":
		delete(p.tests, e.Test)
	}
}

func (r *report) packageEvent(e event, p *pkgState) {
	switch e.Action {
	case "start":
		p.started = r.now()
	case "output":
		p.out = append(p.out, e.Output)
	case "pass":
		p.ended = true
		r.ok = append(r.ok, e.Package)
		r.printf("ok  \t%s\t%.1fs\n", e.Package, e.Elapsed)
	case "skip": // no test files
		p.ended = true
		r.printf("?   \t%s\t[no test files]\n", e.Package)
	case "fail":
		p.ended = true
		r.fail = append(r.fail, e.Package)
		// Tests that never ended (a panic, a timeout) keep their output.
		for _, t := range p.order {
			r.printf("%s", strings.Join(p.tests[t], ""))
		}
		out := strings.Join(p.out, "")
		if !strings.Contains(out, "FAIL\t"+e.Package) {
			out += fmt.Sprintf("FAIL\t%s\t%.1fs\n", e.Package, e.Elapsed)
		}
		r.printf("%s", out)
	}
	if p.ended {
		p.tests, p.order, p.out = nil, nil, nil
	}
}

// running lists the packages started and not ended, the longest first.
func (r *report) running() []string {
	var names []string
	for n, p := range r.pkgs {
		if !p.ended {
			names = append(names, n)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := r.pkgs[names[i]].started, r.pkgs[names[j]].started
		if !a.Equal(b) {
			return a.Before(b)
		}
		return names[i] < names[j]
	})
	now := r.now()
	for i, n := range names {
		names[i] = fmt.Sprintf("%s (%s)", n, now.Sub(r.pkgs[n].started).Round(time.Second))
	}
	return names
}

// tick prints a progress line when the output was silent for quietFor.
func (r *report) tick() {
	now := r.now()
	if now.Sub(r.lastLine) < quietFor {
		return
	}
	run := r.running()
	what := "building"
	if len(run) > 0 {
		what = "running " + strings.Join(run, ", ")
	}
	r.printf("test/run: %s: %d ok, %d FAIL; %s\n",
		now.Sub(r.begun).Round(time.Second), len(r.ok), len(r.fail), what)
}

// finish prints the summary and the skip line; it returns the exit status.
func (r *report) finish(ci bool) int {
	r.printf("test/run: go test took %s: %d packages ok, %d FAIL%s\n",
		r.now().Sub(r.begun).Round(time.Second), len(r.ok), len(r.fail), list(r.fail))
	if run := r.running(); len(run) > 0 {
		r.printf("test/run: no result (interrupted?) from %s\n", strings.Join(run, ", "))
	}
	skipped := append([]string(nil), r.parts...)
	msgs := make([]string, 0, len(r.skips))
	for m := range r.skips {
		msgs = append(msgs, m)
	}
	sort.Strings(msgs)
	for _, m := range msgs {
		tests := r.skips[m]
		sort.Strings(tests)
		skipped = append(skipped, fmt.Sprintf("%d tests (%s) %q", len(tests), strings.Join(tests, ", "), m))
	}
	if len(skipped) == 0 {
		return 0
	}
	r.printf("test/run: %s: %s\n", marker, strings.Join(skipped, "; "))
	if ci {
		r.printf("test/run: FAIL: under CI=true nothing may be skipped\n")
		return 1
	}
	return 0
}

func list(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " (" + strings.Join(names, ", ") + ")"
}

// partsFlag collects repeated -skipped values.
type partsFlag []string

func (p *partsFlag) String() string     { return strings.Join(*p, "; ") }
func (p *partsFlag) Set(v string) error { *p = append(*p, v); return nil }

func main() {
	var parts partsFlag
	flag.Var(&parts, "skipped", "a part test/run skipped, named in the final line (repeatable)")
	ci := flag.Bool("ci", false, "exit 1 when anything was skipped")
	flag.Parse()
	signal.Ignore(os.Interrupt)

	out := bufio.NewWriter(os.Stdout)
	r := newReport(out, time.Now, parts)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				r.mu.Lock()
				r.tick()
				out.Flush()
				r.mu.Unlock()
			}
		}
	}()

	in := bufio.NewReader(os.Stdin)
	for {
		text, err := in.ReadString('\n')
		if text != "" {
			r.mu.Lock()
			r.line(strings.TrimSuffix(text, "\n"))
			out.Flush()
			r.mu.Unlock()
		}
		if err != nil {
			break
		}
	}
	close(done)
	r.mu.Lock()
	defer r.mu.Unlock()
	status := r.finish(*ci)
	out.Flush()
	os.Exit(status)
}
