package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	// The pgx driver registers itself as "pgx".
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/cachegate/cachegate/test/pgtest"
)

// Issue 3: two cachegate processes on one PostgreSQL database. They are
// started at the same moment, so both migrate the empty database at once.
// Every subtest spreads its requests over both; in the end both stop
// cleanly and neither logged a warning or an error.
func TestTwoReplicasShareOnePostgreSQLDatabase(t *testing.T) {
	t.Parallel()
	dbURL := pgtest.New(t)
	cfg := serverConfig{YAML: publicYAML, Args: []string{"--database", dbURL,
		// Short sweeps in small batches, so both sweepers work on
		// the same rows at the same time.
		"--sweep-interval", "100ms", "--sweep-batch", "20"}}
	a, b := launch(t, cfg), launch(t, cfg)
	for _, s := range []*server{a, b} {
		if err := s.waitReady(); err != nil {
			t.Fatalf("start a replica: %v", err)
		}
	}
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(t *testing.T, query string) int {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var n int
		if err := db.QueryRowContext(ctx, query).Scan(&n); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return n
	}
	replicas := []*server{a, b}
	client := newClient()

	t.Run("concurrent starts apply each migration once", func(t *testing.T) {
		all := count(t, "SELECT count(*) FROM cachegate_migrations")
		distinct := count(t, "SELECT count(DISTINCT name) FROM cachegate_migrations")
		if all == 0 || all != distinct {
			t.Errorf("cachegate_migrations holds %d rows for %d migrations", all, distinct)
		}
	})

	t.Run("together", func(t *testing.T) {
		t.Run("an entry created through one replica is read, replaced and deleted through the other", func(t *testing.T) {
			t.Parallel()
			who := newUUID()
			created := mustSend(t, client, http.MethodPost, a.URL+"/cache/user",
				body("k", "t", who, `{"v":1}`, `null`)).want(t, http.StatusCreated)
			id := created.entry(t).ID
			read := mustSend(t, client, http.MethodGet, b.URL+"/cache/user/"+id, nil).want(t, http.StatusOK)
			if diff, err := sameFields(created.Body, read.Body); err != nil || len(diff) > 0 {
				t.Errorf("read through the other replica differs in %v (%v)", diff, err)
			}
			replaced := mustSend(t, client, http.MethodPut, b.URL+"/cache/user/"+id,
				body("k", "t", who, `{"v":2}`, `null`), "If-Match", `"1"`).want(t, http.StatusOK).entry(t)
			if replaced.Version != 2 {
				t.Errorf("version %d after the replace, want 2", replaced.Version)
			}
			mustSend(t, client, http.MethodPut, a.URL+"/cache/user/"+id,
				body("k", "t", who, `{"v":3}`, `null`), "If-Match", `"1"`).want(t, http.StatusPreconditionFailed)
			if got := mustSend(t, client, http.MethodGet, a.URL+"/cache/user/"+id, nil).want(t, http.StatusOK).entry(t); got.Version != 2 || string(got.Data) != `{"v":2}` {
				t.Errorf("the first replica reads version %d data %s, want 2 {\"v\":2}", got.Version, got.Data)
			}
			mustSend(t, client, http.MethodDelete, b.URL+"/cache/user/"+id, nil, "If-Match", `"2"`).want(t, http.StatusOK)
			for _, s := range replicas {
				mustSend(t, client, http.MethodGet, s.URL+"/cache/user/"+id, nil).want(t, http.StatusNotFound)
			}
			mustSend(t, client, http.MethodPost, a.URL+"/cache/user",
				body("k", "t", who, `{"v":4}`, `null`)).want(t, http.StatusCreated)
		})

		t.Run("40 concurrent duplicate POSTs over both replicas give one 201 and 39 409", func(t *testing.T) {
			t.Parallel()
			who := newUUID()
			statuses := race(40, func(i int) (reply, error) {
				return send(client, http.MethodPost, replicas[i%2].URL+"/cache/user",
					body("dup", "t", who, strconv.Itoa(i), `null`))
			})
			created, conflicts := 0, 0
			for i, r := range statuses {
				switch {
				case r.err != nil:
					t.Errorf("request %d: %v", i, r.err)
				case r.Status == http.StatusCreated:
					created++
				case r.Status == http.StatusConflict && r.errorCode() == "CACHE_ENTITY_ALREADY_EXISTS":
					conflicts++
				default:
					t.Errorf("request %d answered %d: %s", i, r.Status, short(r.Body))
				}
			}
			if created != 1 || conflicts != 39 {
				t.Errorf("%d created and %d conflicts, want 1 and 39", created, conflicts)
			}
			var list []entry
			r := mustSend(t, client, http.MethodGet, b.URL+"/cache/user?assignee.id="+who, nil).want(t, http.StatusOK)
			if err := json.Unmarshal(r.Body, &list); err != nil || len(list) != 1 {
				t.Errorf("%d entries listed (%v), want 1", len(list), err)
			}
		})

		t.Run("20 concurrent PUTs with one If-Match over both replicas give one 200 and 19 412", func(t *testing.T) {
			t.Parallel()
			who := newUUID()
			id := mustSend(t, client, http.MethodPost, a.URL+"/cache/user",
				body("k", "t", who, `-1`, `null`)).want(t, http.StatusCreated).entry(t).ID
			statuses := race(20, func(i int) (reply, error) {
				return send(client, http.MethodPut, replicas[i%2].URL+"/cache/user/"+id,
					body("k", "t", who, strconv.Itoa(i), `null`), "If-Match", `"1"`)
			})
			winner, stale := -1, 0
			for i, r := range statuses {
				switch {
				case r.err != nil:
					t.Errorf("request %d: %v", i, r.err)
				case r.Status == http.StatusOK && winner < 0:
					winner = i
				case r.Status == http.StatusPreconditionFailed:
					stale++
				default:
					t.Errorf("request %d answered %d: %s", i, r.Status, short(r.Body))
				}
			}
			if winner < 0 || stale != 19 {
				t.Fatalf("winner %d and %d stale answers, want one winner and 19", winner, stale)
			}
			got := mustSend(t, client, http.MethodGet, b.URL+"/cache/user/"+id, nil).want(t, http.StatusOK).entry(t)
			if got.Version != 2 || string(got.Data) != strconv.Itoa(winner) {
				t.Errorf("stored version %d data %s, want 2 and the winner's %d", got.Version, got.Data, winner)
			}
		})

		t.Run("both sweepers together remove every expired row and keep the rest", func(t *testing.T) {
			t.Parallel()
			const expiring, kept = 400, 20
			who := newUUID()
			statuses := parallel(expiring+kept, 16, func(i int) (reply, error) {
				exp := `"1s"`
				if i < kept {
					exp = `"1h"`
				}
				return send(client, http.MethodPost, replicas[i%2].URL+"/cache/org",
					body(fmt.Sprintf("k%d", i), "t", who, `1`, exp))
			})
			for i, r := range statuses {
				if r.err != nil || r.Status != http.StatusCreated {
					t.Fatalf("POST %d: %v %d %s", i, r.err, r.Status, short(r.Body))
				}
			}
			// Only the sweepers remove rows of this table: the
			// entries' keys are all distinct, so no create clears
			// dead rows in its way.
			deadline := time.Now().Add(30 * time.Second)
			for count(t, "SELECT count(*) FROM org_cache") != kept {
				if time.Now().After(deadline) {
					t.Fatalf("org_cache still holds %d rows (%d with an expiry in the past), want %d",
						count(t, "SELECT count(*) FROM org_cache"),
						count(t, "SELECT count(*) FROM org_cache WHERE expires_at <= now()"), kept)
				}
				time.Sleep(100 * time.Millisecond)
			}
			for i, r := range statuses[:kept] {
				if r.Status == http.StatusCreated {
					id := r.entry(t).ID
					mustSend(t, client, http.MethodGet, replicas[(i+1)%2].URL+"/cache/org/"+id, nil).want(t, http.StatusOK)
				}
			}
		})
	})

	for _, s := range replicas {
		if code := s.stop(t); code != 0 {
			t.Errorf("a replica exited with status %d after SIGTERM, want 0", code)
		}
	}
	for i, s := range replicas {
		for _, level := range []string{"level=ERROR", "level=WARN"} {
			for _, line := range s.log.lines(level) {
				t.Errorf("replica %d logged: %s", i, line)
			}
		}
	}
}

// outcome is one answer of a race, or the error that stood in its way.
type outcome struct {
	reply
	err error
}

// race runs n requests at once: each goroutine is ready before any sends.
func race(n int, do func(i int) (reply, error)) []outcome {
	out := make([]outcome, n)
	start := make(chan struct{})
	var ready, done sync.WaitGroup
	for i := range n {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			out[i].reply, out[i].err = do(i)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
	return out
}

// parallel runs n requests on workers goroutines.
func parallel(n, workers int, do func(i int) (reply, error)) []outcome {
	out := make([]outcome, n)
	next := make(chan int)
	var done sync.WaitGroup
	for range workers {
		done.Add(1)
		go func() {
			defer done.Done()
			for i := range next {
				out[i].reply, out[i].err = do(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	done.Wait()
	return out
}
