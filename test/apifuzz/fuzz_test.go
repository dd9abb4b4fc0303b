package apifuzz_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/cachegate/cachegate/adapters/ginhttp"
)

// The budget: a thousand cases in `go test` on SQLite and half as many on
// PostgreSQL (some seconds on two cores), 20 000 or more for the long run
// on both (README.md, "Testing").
var (
	casesFlag = flag.Int("apifuzz.cases", 0, "generated cases on each database (default 1000 on SQLite and 500 on PostgreSQL, or $CACHEGATE_APIFUZZ_CASES)")
	seedFlag  = flag.Uint64("apifuzz.seed", 1, "the generator's seed; a run is reproduced by its seed and case count")
)

// budget is the number of cases: the flag's or the variable's when set,
// else def.
func budget(def int) int {
	if *casesFlag > 0 {
		return *casesFlag
	}
	if n, err := strconv.Atoi(os.Getenv("CACHEGATE_APIFUZZ_CASES")); err == nil && n > 0 {
		return n
	}
	return def
}

// fuzzer holds the document, the generator and what the run has found.
type fuzzer struct {
	t      *testing.T
	tgt    *target
	ops    map[string]*operation
	list   []*operation
	router routers.Router
	opts   *openapi3filter.Options
	gen    *gen
	st     state
	red    *redactor
	// found groups findings by operation, check and cause.
	found map[[3]string][]finding
	sent  int
	// ok counts 2xx answers by operation; rounds the stateful rounds that
	// went from create to delete.
	ok     map[string]int
	rounds int
	// adminRounds counts the admin rounds that went from create to
	// delete, selfRounds the self-service rounds that changed a password,
	// adminEntryRounds the admin entry rounds that went from read to
	// delete.
	adminRounds, selfRounds, adminEntryRounds int
	// outage: the database is made unavailable on purpose, so a 503 is
	// no server error (it must still be documented).
	outage bool
}

func newFuzzer(t *testing.T, tgt *target, seed uint64) *fuzzer {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(ginhttp.OpenAPIDocument())
	if err != nil {
		t.Fatal(err)
	}
	doc.Servers = nil // paths only: the server listens on a free port
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	f := &fuzzer{t: t, tgt: tgt, ops: map[string]*operation{}, list: operations(doc), router: router,
		gen: &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))},
		st:  state{userID: tgt.userID}, red: &redactor{secrets: map[string]string{}},
		found: map[[3]string][]finding{}, ok: map[string]int{}}
	f.red.add(fuzzPassword, "<the user's password>")
	f.red.add(adminPassword, "<the admin's password>")
	f.red.add(tgt.setupToken, "<the set-up token>")
	for _, o := range f.list {
		f.ops[o.id] = o
	}
	f.opts = &openapi3filter.Options{
		IncludeResponseStatus: true,
		AuthenticationFunc: func(_ context.Context, in *openapi3filter.AuthenticationInput) error {
			if in.SecuritySchemeName == "bearerAuth" && strings.HasPrefix(in.RequestValidationInput.Request.Header.Get("Authorization"), "Bearer ") {
				return nil
			}
			return errors.New("no bearer token")
		},
		SchemaValidationOptions: []openapi3.SchemaValidationOption{
			openapi3.DisableSchemaErrorDetails(), // values may be tokens
			openapi3.WithStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForUUIDOfRFC9562)),
		},
	}
	return f
}

func (f *fuzzer) route(req *http.Request) *routers.Route {
	route, _, err := f.router.FindRoute(req)
	if err != nil {
		return nil
	}
	return route
}

// verdict is the document's verdict on a request: nil when valid.
func (f *fuzzer) verdict(r *request, req *http.Request) error {
	clone := req.Clone(context.Background())
	clone.Body = io.NopCloser(bytes.NewReader(r.body))
	route, params, err := f.router.FindRoute(clone)
	if err != nil {
		return fmt.Errorf("no documented route: %w", err)
	}
	for _, kv := range r.header {
		if strings.ContainsFunc(kv[1], isCTL) {
			return fmt.Errorf("header %s: a control character (RFC 9110 admits none in a field value)", kv[0])
		}
	}
	for _, pair := range exclusivePairs {
		if r.has(pair[0]) && r.has(pair[1]) {
			return fmt.Errorf("%s with %s (the document says: not both)", pair[0], pair[1])
		}
	}
	return openapi3filter.ValidateRequest(context.Background(),
		&openapi3filter.RequestValidationInput{Request: clone, PathParams: params, Route: route, Options: f.opts})
}

// isCTL reports a control character other than HTAB: HTTP forbids them in
// a header field's value (RFC 9110, section 5.5) whatever the document's
// schema admits, so a request holding one is invalid, and its answer must
// still be documented.
func isCTL(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f }

// exchange sends r, checks the answer and learns from it.
func (f *fuzzer) exchange(r *request) (answer, error) {
	req, err := r.httpRequest("http://"+f.tgt.addr, f.tokenFor(r))
	if err != nil {
		return answer{}, err
	}
	validErr := f.verdict(r, req)
	req.Body = io.NopCloser(bytes.NewReader(r.body))
	if !r.hasBody {
		req.Body, req.ContentLength = nil, 0
	}
	f.sent++
	a, err := send(f.tgt.addr, req)
	if err != nil {
		f.record(r, a, finding{op: r.op.id, check: checkNoAnswer, cause: err.Error()})
		return a, err
	}
	if a.status < 300 {
		f.ok[r.op.id]++
	}
	for _, fd := range f.checkExchange(r, req, a, validErr) {
		f.record(r, a, fd)
	}
	f.learn(r, a)
	return a, nil
}

// tokenFor is the access token r carries: a stateful round's own, the
// admin's on an admin operation, else the user's.
func (f *fuzzer) tokenFor(r *request) string {
	switch {
	case r.token != "":
		return r.token
	case r.op.admin && r.auth == authValid, r.who == whoAdmin:
		return f.st.adminAccess
	}
	return f.st.access
}

func (f *fuzzer) record(r *request, a answer, fd finding) {
	fd.report = f.describe(r, a)
	k := [3]string{fd.op, fd.check, fd.cause}
	f.found[k] = append(f.found[k], fd)
}

// report fails the test on every finding not in the known list and logs
// the known ones, with one reproducible example each.
func (f *fuzzer) report(seed uint64, cases int) {
	keys := make([][3]string, 0, len(f.found))
	for k := range f.found {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return strings.Join(keys[i][:], " ") < strings.Join(keys[j][:], " ") })
	for _, k := range keys {
		fds := f.found[k]
		msg := fmt.Sprintf("%s: %s: %s (%d times; seed %d, %d cases), e.g.\n%s", k[0], k[1], k[2], len(fds), seed, cases, fds[0].report)
		if gap := knownGap(fds[0]); gap != "" {
			f.t.Logf("KNOWN (%s) %s", gap, msg)
			continue
		}
		f.t.Errorf("%s", msg)
	}
	f.t.Logf("%d requests sent, %d distinct findings, %d full stateful rounds, %d admin rounds, %d self-service rounds, %d admin entry rounds; 2xx answers by operation: %v",
		f.sent, len(keys), f.rounds, f.adminRounds, f.selfRounds, f.adminEntryRounds, f.ok)
}

// reached fails the test when the run did not test what it claims: every
// operation but /metrics (whose access depends on the configuration)
// answered 2xx at least once, and a stateful round went from create to
// delete.
func (f *fuzzer) reached() {
	for _, o := range f.list {
		if f.ok[o.id] == 0 && o.id != "getMetrics" {
			f.t.Errorf("%s never answered 2xx: the fuzz does not get past its checks", o.id)
		}
	}
	if f.rounds == 0 {
		f.t.Error("no stateful round went from create to delete")
	}
	if f.adminRounds == 0 || f.selfRounds == 0 || f.adminEntryRounds == 0 {
		f.t.Errorf("%d admin rounds went from create to delete, %d self-service rounds changed a password, %d admin entry rounds went from read to delete: want some of each",
			f.adminRounds, f.selfRounds, f.adminEntryRounds)
	}
}

// TestAPIConformsToItsDocument is the fuzz: the fuzzer's admin made with
// the set-up link (firstAdmin), then stateless cases drawn for every
// operation, valid and invalid, with a stateful round (login,
// refresh, create, read, replace, patch, delete, logout) every 40 cases
// and an admin round (adminRound, with the self-service round) every 200.
// It runs the server on SQLite and on PostgreSQL, with the same seed and
// checks (and by default half the cases on PostgreSQL, whose round trips
// cost more; -apifuzz.cases sets both): bad input must never be a 5xx on
// either database.
// (The outage pass, TestAnswersDuringAnOutageAreDocumented, stays on
// SQLite: it holds SQLite's write lock.)
func TestAPIConformsToItsDocument(t *testing.T) {
	t.Parallel()
	t.Run("SQLite", func(t *testing.T) {
		t.Parallel()
		fuzzTarget(t, startTarget(t), budget(1000))
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		t.Parallel()
		fuzzTarget(t, startTarget(t, onPostgres(t)), budget(500))
	})
}

// fuzzTarget runs cases against tgt and reports.
func fuzzTarget(t *testing.T, tgt *target, cases int) {
	seed := *seedFlag
	f := newFuzzer(t, tgt, seed)
	f.firstAdmin()
	f.statefulRound(true)
	f.adminRound()
	for i := range cases {
		if i%40 == 39 {
			f.statefulRound(i%120 == 119)
		}
		if i%200 == 99 {
			f.adminRound()
		}
		op := f.list[f.gen.r.IntN(len(f.list))]
		_, _ = f.exchange(f.newCase(op, f.gen.chance(3)))
	}
	f.report(seed, cases)
	f.reached()
}
