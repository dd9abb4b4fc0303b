package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Issue 33: the linearizability check. Clients read, write and write with
// If-Match a few entries at once while the test kills servers with SIGKILL
// (and, on PostgreSQL, the database) and starts them again; the history of
// what each request was asked and answered, with when it was sent and when
// its answer came, is then checked with Porcupine (the checker etcd's
// robustness tests use) against a sequential model of one entry: a version
// and its data. A history passes when some order of the operations, each
// placed between its call and its answer, explains every answer. So a write
// acknowledged by any replica is seen by every later read on every replica,
// If-Match sees the current version, and a SIGKILL, a restart or a
// database restart loses nothing acknowledged. The tests are
// TestLinearizableUnderSIGKILLOnSQLite and
// TestLinearizableUnderSIGKILLOfReplicasAndADatabaseRestartOnPostgreSQL
// (linearizable_linux_test.go); TestLinearizabilityCheckerRejectsViolations
// shows the model and checker catch what they must.
//
// Each variant records linearDuration of history (12 s by default, as
// part of `bash test/run`); longer runs take a flag after -args, e.g.
//
//	go test -tags nomsgpack,grpcnotrace -run TestLinearizable -timeout 30m ./test/e2e -args -linear.duration=5m
//
// An answer that never came is an operation of unknown outcome: it may or
// may not have happened, and Porcupine's convention records it as
// returning at infinity with an output the model accepts either way.
// Unknown are writes whose connection broke after the request may have
// been sent, and writes answered 503 (docs/api.md: a 503 may come after
// the write committed). A request whose connection was refused never
// reached a server and is left out, as is a read without an answer and a
// 429 (which changes nothing); every other answer but 200, 201 (PUT), 404
// (read, recorded for the model to refute) and 412 (If-Match) is a failure.
var linearDuration = flag.Duration("linear.duration", 12*time.Second,
	"history recorded by each TestLinearizable variant (test/e2e/linearizable_test.go)")

// linPause bounds a client's pause between two requests.
const linPause = 4 * time.Millisecond

// linKind is what one operation of the history does.
type linKind uint8

const (
	linGet     linKind = iota // GET /cache/user/<id>
	linList                   // GET /cache/user?key=…&type=…&assignee.id=…
	linPut                    // PUT without If-Match
	linIfPut                  // PUT with If-Match
	linIfPatch                // PATCH {"data"} with If-Match
)

func (k linKind) String() string {
	return [...]string{"GET", "LIST", "PUT", "PUT If-Match", "PATCH If-Match"}[k]
}

func (k linKind) writes() bool      { return k >= linPut }
func (k linKind) conditional() bool { return k >= linIfPut }

// linInput is an operation's request: on entry Key, through Replica.
type linInput struct {
	Key     int
	Kind    linKind
	Expect  int    // the If-Match version
	Data    string // the JSON written
	Replica int
}

// linOutput is its answer. A read or a write that succeeded gives the
// entry's version (0: the read found no entry) and data; Mismatch is a
// 412; Unknown an answer that never came.
type linOutput struct {
	Unknown  bool
	Mismatch bool
	Version  int
	Data     string
}

// linState is one entry: what the model holds per partition.
type linState struct {
	Version int
	Data    string
}

// linInitData is the data every entry is created with (version 1).
const linInitData = `"init"`

// linModel is the sequential specification of one entry: a read answers
// the current version and data; a write makes version + 1 with its data
// and answers that version; a write with If-Match does so only on the
// version it names, else it is a 412 and changes nothing. A write of
// unknown outcome may have happened or not: the model is
// nondeterministic, Porcupine follows the set of states it may be in.
// (With one state per partition and such writes placed last when they
// did not happen, as a return at infinity allows, the checker tried every
// subset of them at each step: a 2-minute history, 94 unknown writes over
// 3 entries, had no verdict within 4 minutes.) Histories are
// partitioned by entry.
var linModel = linSpec.ToModel()

var linSpec = porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[int][]porcupine.Operation{}
		for _, op := range history {
			k := op.Input.(linInput).Key
			byKey[k] = append(byKey[k], op)
		}
		keys := make([]int, 0, len(byKey))
		for k := range byKey {
			keys = append(keys, k)
		}
		sort.Ints(keys)
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() []any { return []any{linState{Version: 1, Data: linInitData}} },
	Step: func(state, input, output any) []any {
		s, in, out := state.(linState), input.(linInput), output.(linOutput)
		next := linState{Version: s.Version + 1, Data: in.Data}
		applies := in.Kind.writes() && (!in.Kind.conditional() || in.Expect == s.Version)
		switch {
		case !in.Kind.writes():
			if out.Version == s.Version && out.Data == s.Data {
				return []any{s}
			}
		case out.Unknown && applies:
			return []any{s, next}
		case out.Unknown:
			return []any{s}
		case !applies:
			if out.Mismatch {
				return []any{s}
			}
		case !out.Mismatch && out.Version == next.Version:
			return []any{next}
		}
		return nil
	},
	Hash: func(state any) uint64 {
		s := state.(linState)
		h := fnv.New64a()
		fmt.Fprintf(h, "%d %s", s.Version, s.Data)
		return h.Sum64()
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(linInput), output.(linOutput)
		call := fmt.Sprintf("k%d r%d %s", in.Key, in.Replica, in.Kind)
		if in.Kind.conditional() {
			call += fmt.Sprintf(` "%d"`, in.Expect)
		}
		if in.Kind.writes() {
			call += " " + in.Data
		}
		switch {
		case out.Unknown:
			return call + " → ?"
		case out.Mismatch:
			return call + " → 412"
		case !in.Kind.writes():
			return fmt.Sprintf("%s → v%d %s", call, out.Version, out.Data)
		default:
			return fmt.Sprintf("%s → v%d", call, out.Version)
		}
	},
	DescribeState: func(state any) string {
		s := state.(linState)
		return fmt.Sprintf("v%d %s", s.Version, s.Data)
	},
}

// linPrune leaves out the If-Match writes of unknown outcome that cannot
// have happened: one that names version v did not happen when version
// v+1 was seen (by a read, or as a write's answer) with other data, since
// exactly one write makes each version. Left in, each would be a no-op
// the checker may place anywhere, and k of them in one entry's history
// cost it up to 2^k orders to try. Leaving them out changes no verdict:
// a history is linearizable with such an operation (placed last, as a
// no-op) exactly when it is without.
func linPrune(history []porcupine.Operation) ([]porcupine.Operation, int) {
	seen := map[[2]int]map[string]bool{} // key, version → data seen
	note := func(key, version int, data string) {
		kv := [2]int{key, version}
		if seen[kv] == nil {
			seen[kv] = map[string]bool{}
		}
		seen[kv][data] = true
	}
	for _, op := range history {
		in, out := op.Input.(linInput), op.Output.(linOutput)
		switch {
		case out.Unknown || out.Mismatch:
		case in.Kind.writes():
			note(in.Key, out.Version, in.Data)
		case out.Version > 0:
			note(in.Key, out.Version, out.Data)
		}
	}
	kept, pruned := history[:0:0], 0
	for _, op := range history {
		in, out := op.Input.(linInput), op.Output.(linOutput)
		if out.Unknown && in.Kind.conditional() {
			other := false
			for data := range seen[[2]int{in.Key, in.Expect + 1}] {
				other = other || data != in.Data
			}
			if other {
				pruned++
				continue
			}
		}
		kept = append(kept, op)
	}
	return kept, pruned
}

// linCheck checks history and fails t when it is not linearizable (or the
// checker runs out of time), leaving the visualization in a temporary
// file whose path it logs.
func linCheck(t *testing.T, history []porcupine.Operation, timeout time.Duration) {
	t.Helper()
	history, pruned := linPrune(history)
	began := time.Now()
	result, info := porcupine.CheckOperationsVerbose(linModel, history, timeout)
	t.Logf("checked %d operations (%d unknown If-Match writes that cannot have happened left out) in %s: %s",
		len(history), pruned, time.Since(began).Round(time.Millisecond), result)
	if result == porcupine.Ok {
		return
	}
	f, err := os.CreateTemp("", "cachegate-linearizability-*.html")
	if err == nil {
		err = porcupine.Visualize(linModel, info, f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	where := "could not write the visualization: " + fmt.Sprint(err)
	if err == nil {
		where = "visualization (open in a browser): " + f.Name()
	}
	if result == porcupine.Illegal {
		t.Errorf("the history is NOT linearizable; %s", where)
	} else {
		t.Errorf("the checker gave no verdict within %s (%s); %s", timeout, result, where)
	}
}

// linWorkload runs the clients on a few entries and records the history.
type linWorkload struct {
	urls     []string // one per replica; each keeps its port across restarts
	ids      []string // the entries' ids, by key index
	assignee string
	start    time.Time

	mu      sync.Mutex
	history []porcupine.Operation
	bad     []string       // answers no fault may give
	counts  map[string]int // what became of the requests
	clients atomic.Int64
}

// newLinWorkload creates entries entries through urls[0], each at
// version 1 with linInitData.
func newLinWorkload(t *testing.T, urls []string, entries int) *linWorkload {
	t.Helper()
	w := &linWorkload{urls: urls, assignee: newUUID(), counts: map[string]int{}}
	client := newClient()
	for i := range entries {
		e := mustSend(t, client, http.MethodPost, urls[0]+"/cache/user",
			body(fmt.Sprintf("lin-%d", i), "lin", w.assignee, linInitData, `null`)).
			want(t, http.StatusCreated).entry(t)
		if e.Version != 1 {
			t.Fatalf("a new entry has version %d", e.Version)
		}
		w.ids = append(w.ids, e.ID)
	}
	w.start = time.Now()
	return w
}

// now is the time since the start in nanoseconds (monotonic).
func (w *linWorkload) now() int64 { return int64(time.Since(w.start)) }

func (w *linWorkload) count(what string) {
	w.mu.Lock()
	w.counts[what]++
	w.mu.Unlock()
}

func (w *linWorkload) record(op porcupine.Operation) {
	w.mu.Lock()
	w.history = append(w.history, op)
	w.mu.Unlock()
}

func (w *linWorkload) fail(format string, args ...any) {
	w.mu.Lock()
	w.bad = append(w.bad, fmt.Sprintf(format, args...))
	w.mu.Unlock()
}

// run starts clients goroutines that send requests until ctx ends, and
// returns a function that waits for them.
func (w *linWorkload) run(ctx context.Context, clients int) (wait func()) {
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.client(ctx, uint64(c))
		}()
	}
	return wg.Wait
}

// client is one client's loop. Its reads feed the versions it names in
// If-Match, so some of those writes win and some are stale.
func (w *linWorkload) client(ctx context.Context, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, uint64(w.start.UnixNano())))
	hc := &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	defer hc.CloseIdleConnections()
	id := int(w.clients.Add(1) - 1)
	seen := make([]int, len(w.ids))
	for i := range seen {
		seen[i] = 1
	}
	for n := 0; ctx.Err() == nil; n++ {
		// A pause of up to linPause between two requests leaves the
		// shared machine to the other tests (unpaced, six clients sent
		// 2500 requests a second to SQLite) and keeps long histories
		// checkable.
		time.Sleep(time.Duration(rng.Int64N(int64(linPause))))
		in := linInput{Key: rng.IntN(len(w.ids)), Replica: rng.IntN(len(w.urls))}
		switch r := rng.IntN(20); {
		case r < 6:
			in.Kind = linGet
		case r < 8:
			in.Kind = linList
		case r < 13:
			in.Kind = linPut
		case r < 17:
			in.Kind = linIfPut
		default:
			in.Kind = linIfPatch
		}
		if in.Kind.writes() {
			in.Data = fmt.Sprintf(`"c%d-%d"`, seed, n)
			in.Expect = seen[in.Key]
		}
		out, known := w.do(ctx, hc, id, in)
		if !known {
			continue
		}
		if out.Unknown {
			// This client is stuck in that call for ever, as far
			// as the history goes: go on as another one, once the
			// replica is ready again (so an outage costs at most
			// one unknown operation per client).
			id = int(w.clients.Add(1) - 1)
			w.waitReady(ctx, in.Replica)
		}
		if !out.Unknown && !out.Mismatch && out.Version > 0 {
			seen[in.Key] = out.Version
		}
	}
}

// do sends one operation of client id, records it and returns its output;
// known is false when the operation is left out of the history.
func (w *linWorkload) do(ctx context.Context, c *http.Client, id int, in linInput) (out linOutput, known bool) {
	base := w.urls[in.Replica]
	var (
		method, target = http.MethodGet, base + "/cache/user/" + w.ids[in.Key]
		payload        []byte
		hdr            []string
	)
	switch in.Kind {
	case linList:
		target = base + "/cache/user?" + url.Values{"key": {fmt.Sprintf("lin-%d", in.Key)},
			"type": {"lin"}, "assignee.id": {w.assignee}}.Encode()
	case linPut, linIfPut:
		method = http.MethodPut
		payload = body(fmt.Sprintf("lin-%d", in.Key), "lin", w.assignee, in.Data, `null`)
	case linIfPatch:
		method = http.MethodPatch
		payload = []byte(`{"data":` + in.Data + `}`)
	}
	if in.Kind.conditional() {
		hdr = []string{"If-Match", fmt.Sprintf(`"%d"`, in.Expect)}
	}
	call := w.now()
	r, err := send(c, method, target, payload, hdr...)
	ret := w.now()
	op := porcupine.Operation{ClientId: id, Input: in, Call: call, Return: ret}
	unknown := func(what string) (linOutput, bool) {
		w.count(what)
		if !in.Kind.writes() {
			// A read without an answer tells nothing.
			w.waitReady(ctx, in.Replica)
			return linOutput{}, false
		}
		op.Output, op.Return = linOutput{Unknown: true}, math.MaxInt64
		w.record(op)
		return op.Output.(linOutput), true
	}
	switch {
	case err != nil && isDialError(err):
		// Refused: nothing reached a server. Wait for it to return.
		w.count("refused")
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
		return linOutput{}, false
	case err != nil:
		return unknown("transport error")
	case r.Status == http.StatusServiceUnavailable:
		return unknown("503")
	case r.Status == http.StatusTooManyRequests:
		w.count("429")
		time.Sleep(100 * time.Millisecond)
		return linOutput{}, false
	case r.Status == http.StatusPreconditionFailed && in.Kind.conditional():
		out.Mismatch = true
	case r.Status == http.StatusNotFound && !in.Kind.writes() && in.Kind != linList:
		// Version 0: the entry is gone, which the model refutes.
	case r.Status == http.StatusOK || r.Status == http.StatusCreated && in.Kind == linPut:
		var e entry
		if in.Kind == linList {
			var list []entry
			if err := json.Unmarshal(r.Body, &list); err != nil || len(list) > 1 {
				w.fail("%s k%d: %d entries (%v): %s", in.Kind, in.Key, len(list), err, short(r.Body))
				return linOutput{}, false
			}
			if len(list) == 1 {
				e = list[0]
			}
		} else if err := json.Unmarshal(r.Body, &e); err != nil || e.Version < 1 {
			w.fail("%s k%d: %d without an entry (%v): %s", in.Kind, in.Key, r.Status, err, short(r.Body))
			return linOutput{}, false
		}
		if e.ID != "" && e.ID != w.ids[in.Key] {
			w.fail("%s k%d: the answer is entry %s, want %s", in.Kind, in.Key, e.ID, w.ids[in.Key])
			return linOutput{}, false
		}
		out.Version, out.Data = e.Version, string(e.Data)
	default:
		w.fail("%s k%d on replica %d: %d %s", in.Kind, in.Key, in.Replica, r.Status, short(r.Body))
		return linOutput{}, false
	}
	w.count("answered")
	op.Output = out
	w.record(op)
	return out, true
}

// isDialError reports whether err is a refused (or otherwise failed)
// connection attempt: no byte of the request reached a server.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// waitReady waits until replica answers GET /readyz 200, or ctx ends; a
// replica not ready within startBound (plus the time a restart takes)
// is a failure.
func (w *linWorkload) waitReady(ctx context.Context, replica int) {
	c := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(2 * startBound)
	for ctx.Err() == nil {
		if r, err := send(c, http.MethodGet, w.urls[replica]+"/readyz", nil); err == nil && r.Status == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			w.fail("replica %d not ready within %s", replica, 2*startBound)
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// finalReads reads every entry through every replica once the faults are
// over: what was acknowledged must be there.
func (w *linWorkload) finalReads() {
	c := newClient()
	id := int(w.clients.Add(1) - 1)
	for key := range w.ids {
		for replica := range w.urls {
			for _, kind := range []linKind{linGet, linList} {
				if _, known := w.do(context.Background(), c, id, linInput{Key: key, Kind: kind, Replica: replica}); !known {
					w.fail("final %s of k%d on replica %d had no answer", kind, key, replica)
				}
			}
		}
	}
}

// report logs the counts and fails t for any answer no fault may give.
func (w *linWorkload) report(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	kinds := map[string]int{}
	for _, op := range w.history {
		in, out := op.Input.(linInput), op.Output.(linOutput)
		what := in.Kind.String()
		switch {
		case out.Unknown:
			what += " unknown"
		case out.Mismatch:
			what += " 412"
		}
		kinds[what]++
	}
	t.Logf("history of %d operations by %d client ids over %s: %v; requests: %v",
		len(w.history), w.clients.Load(), time.Duration(w.now()).Round(time.Millisecond), kinds, w.counts)
	for i, b := range w.bad {
		if i == 10 {
			t.Errorf("… and %d more", len(w.bad)-10)
			break
		}
		t.Errorf("an answer no fault may give: %s", b)
	}
	if kinds[linGet.String()] == 0 || kinds[linPut.String()] == 0 || kinds[linIfPut.String()] == 0 {
		t.Errorf("the history lacks reads, writes or If-Match writes that succeeded: %v", kinds)
	}
}

// TestLinearizabilityCheckerRejectsViolations feeds the model hand-made
// histories: what a correct service may answer passes, what it must not
// (a stale read after an acknowledged write, two If-Match writes on one
// version, a lost acknowledged write) fails.
func TestLinearizabilityCheckerRejectsViolations(t *testing.T) {
	t.Parallel()
	op := func(client int, call, ret int64, in linInput, out linOutput) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
	}
	put := func(key int, data string) linInput { return linInput{Key: key, Kind: linPut, Data: data} }
	ifPut := func(key, expect int, data string) linInput {
		return linInput{Key: key, Kind: linIfPut, Expect: expect, Data: data}
	}
	get := func(key int) linInput { return linInput{Key: key, Kind: linGet} }
	read := func(v int, data string) linOutput { return linOutput{Version: v, Data: data} }
	acked := func(v int) linOutput { return linOutput{Version: v} }
	unknown := linOutput{Unknown: true}
	never := int64(math.MaxInt64)
	cases := []struct {
		name    string
		history []porcupine.Operation
		ok      bool
	}{
		{"a read after an acknowledged write sees it", []porcupine.Operation{
			op(0, 0, 10, put(0, `"a"`), acked(2)),
			op(1, 20, 30, get(0), read(2, `"a"`)),
		}, true},
		{"a stale read after an acknowledged write", []porcupine.Operation{
			op(0, 0, 10, put(0, `"a"`), acked(2)),
			op(1, 20, 30, get(0), read(1, linInitData)),
		}, false},
		{"a read overlapping the write may see either", []porcupine.Operation{
			op(0, 0, 10, put(0, `"a"`), acked(2)),
			op(1, 5, 30, get(0), read(1, linInitData)),
			op(2, 6, 31, get(0), read(2, `"a"`)),
		}, true},
		{"a read going back after another saw the write", []porcupine.Operation{
			op(0, 0, 100, put(0, `"a"`), acked(2)),
			op(1, 5, 30, get(0), read(2, `"a"`)),
			op(2, 40, 50, get(0), read(1, linInitData)),
		}, false},
		{"two If-Match writes on one version both succeed", []porcupine.Operation{
			op(0, 0, 10, ifPut(0, 1, `"a"`), acked(2)),
			op(1, 0, 10, ifPut(0, 1, `"b"`), acked(2)),
		}, false},
		{"two If-Match writes on one version: one wins, one 412", []porcupine.Operation{
			op(0, 0, 10, ifPut(0, 1, `"a"`), acked(2)),
			op(1, 0, 10, ifPut(0, 1, `"b"`), linOutput{Mismatch: true}),
			op(2, 20, 30, get(0), read(2, `"a"`)),
		}, true},
		{"an If-Match write refused on the current version", []porcupine.Operation{
			op(0, 0, 10, ifPut(0, 1, `"a"`), linOutput{Mismatch: true}),
			op(1, 20, 30, get(0), read(1, linInitData)),
		}, false},
		{"an acknowledged write lost (a later read sees the version before)", []porcupine.Operation{
			op(0, 0, 10, put(0, `"a"`), acked(2)),
			op(0, 20, 30, put(0, `"b"`), acked(3)),
			op(1, 40, 50, get(0), read(2, `"a"`)),
		}, false},
		{"a write of unknown outcome may have happened", []porcupine.Operation{
			op(0, 0, never, put(0, `"a"`), unknown),
			op(1, 20, 30, get(0), read(2, `"a"`)),
		}, true},
		{"a write of unknown outcome may not have happened", []porcupine.Operation{
			op(0, 0, never, put(0, `"a"`), unknown),
			op(1, 20, 30, get(0), read(1, linInitData)),
			op(1, 40, 50, put(0, `"b"`), acked(2)),
		}, true},
		{"a write of unknown outcome is not seen before it was sent", []porcupine.Operation{
			op(1, 0, 10, get(0), read(2, `"a"`)),
			op(0, 20, never, put(0, `"a"`), unknown),
		}, false},
		{"a write of unknown outcome may have happened after a later one", []porcupine.Operation{
			op(0, 0, never, put(0, `"a"`), unknown),
			op(1, 5, 10, put(0, `"b"`), acked(2)),
			op(1, 20, 30, get(0), read(3, `"a"`)),
		}, true},
		{"a write of unknown outcome happens once", []porcupine.Operation{
			op(0, 0, never, put(0, `"a"`), unknown),
			op(1, 5, 10, get(0), read(2, `"a"`)),
			op(1, 20, 30, put(0, `"b"`), acked(3)),
			op(1, 40, 50, get(0), read(4, `"a"`)),
		}, false},
		{"entries are independent", []porcupine.Operation{
			op(0, 0, 10, put(0, `"a"`), acked(2)),
			op(1, 20, 30, get(1), read(1, linInitData)),
		}, true},
	}
	for _, c := range cases {
		for _, prune := range []bool{false, true} {
			h := c.history
			if prune {
				h, _ = linPrune(h)
			}
			got := porcupine.CheckOperationsTimeout(linModel, h, 10*time.Second)
			want := porcupine.Illegal
			if c.ok {
				want = porcupine.Ok
			}
			if got != want {
				t.Errorf("%s (pruned: %v): %s, want %s", c.name, prune, got, want)
			}
		}
	}

	// The pruning leaves out only If-Match writes of unknown outcome
	// whose version was made by another write.
	h := []porcupine.Operation{
		op(0, 0, never, ifPut(0, 1, `"a"`), unknown), // version 2 is "b": out
		op(1, 0, 10, ifPut(0, 1, `"b"`), acked(2)),
		op(2, 0, never, ifPut(0, 2, `"c"`), unknown), // version 3 is "c": kept
		op(3, 20, 30, get(0), read(3, `"c"`)),
		op(4, 0, never, ifPut(0, 3, `"d"`), unknown), // version 4 never seen: kept
	}
	kept, pruned := linPrune(h)
	if pruned != 1 || len(kept) != 4 || kept[0].Input.(linInput).Data != `"b"` {
		t.Errorf("pruned %d, kept %v; want the first operation only left out", pruned, kept)
	}
	if got := porcupine.CheckOperations(linModel, kept); !got {
		t.Errorf("the pruned history is not linearizable")
	}
	if !strings.Contains(linModel.DescribeOperation(h[0].Input, h[0].Output), `PUT If-Match "1" "a" → ?`) {
		t.Errorf("description %q", linModel.DescribeOperation(h[0].Input, h[0].Output))
	}
}
