package ginhttp_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// TestAnIdempotencyKeyIsScopedToItsAssignment posts one body with one
// Idempotency-Key to two assignments, as a user and anonymously: each
// assignment creates an entry of its own (README, "Idempotent retries"),
// which a retry there answers. A replay of the other assignment's entry
// would answer 201 too, so the ids and bodies are compared.
func TestAnIdempotencyKeyIsScopedToItsAssignment(t *testing.T) {
	t.Parallel()
	records := &sharedRecords{}
	stores, err := application.NewAssignments(
		application.Assignment{Name: "user", EntityKey: "userCache", Repo: records.repo(), Policy: domain.PolicyPublic},
		application.Assignment{Name: "org", EntityKey: "orgCache", Repo: records.repo(), Policy: domain.PolicyPublic},
	)
	if err != nil {
		t.Fatal(err)
	}
	uc, err := application.NewCacheOperations(application.CacheConfig{Assignments: stores, Clock: newFakeClock(), IDs: system.UUIDv7{}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ginhttp.New(ginhttp.Options{Cache: uc, Authenticator: fakeAuth{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)

	for _, c := range []struct {
		name string
		auth []string
	}{
		{"a user", []string{"Authorization", "Bearer good-" + alice}},
		{"anonymous", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := `{"key":"k-` + c.name + `","type":"t","data":{"v":1},"assignee":{"id":"` + alice + `"}}`
			post := func(a string) (id, answer string) {
				t.Helper()
				status, _, got := do(t, http.MethodPost, ts.URL+"/cache/"+a, body, append([]string{"Idempotency-Key", `"same"`}, c.auth...)...)
				var e struct{ ID string }
				if status != http.StatusCreated || json.Unmarshal([]byte(got), &e) != nil || e.ID == "" {
					t.Fatalf("POST /cache/%s: %d %s", a, status, got)
				}
				return e.ID, got
			}
			userID, _ := post("user")
			orgID, orgAnswer := post("org")
			if orgID == userID {
				t.Fatalf("the POST to org answered user's entry %s instead of creating its own", userID)
			}
			if status, _, got := do(t, http.MethodGet, ts.URL+"/cache/org/"+orgID, "", c.auth...); status != http.StatusOK || got != orgAnswer {
				t.Errorf("GET org's entry: %d %s, want 200 %s", status, got, orgAnswer)
			}
			if id, answer := post("org"); id != orgID || answer != orgAnswer {
				t.Errorf("the retry in org answered %s, want %s", answer, orgAnswer)
			}
		})
	}
}

// sharedRecords keeps the idempotency records of several repositories in
// one place, as the SQL stores keep them in one table per database
// (docs/storage.md), where memstore keeps them per repository: a scope
// that left out the assignment would meet another assignment's record.
type sharedRecords struct {
	mu   sync.Mutex
	recs map[[2]string]ports.IdempotencyRecord
}

// repo returns a new repository whose idempotency records are in s.
func (s *sharedRecords) repo() ports.CacheRepository {
	return recordsIn{memstore.NewCacheRepository(), s}
}

type recordsIn struct {
	*memstore.CacheRepository
	s *sharedRecords
}

// For keeps the records: memory bounds no caller.
func (r recordsIn) For(domain.Caller) ports.CacheRepository { return r }

func (r recordsIn) CreateIdempotent(ctx context.Context, e domain.Entry, now time.Time, q domain.Quota, rec ports.IdempotencyRecord) error {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	k := [2]string{rec.Scope, rec.Key}
	if old, ok := r.s.recs[k]; ok && old.ExpiresAt.After(now) {
		return domain.ErrIdempotencyKeyInProgress
	}
	if err := r.Create(ctx, e, now, q); err != nil {
		return err
	}
	if r.s.recs == nil {
		r.s.recs = map[[2]string]ports.IdempotencyRecord{}
	}
	r.s.recs[k] = rec
	return nil
}

func (r recordsIn) IdempotencyRecord(_ context.Context, scope, key string, now time.Time) (ports.IdempotencyRecord, bool, error) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	rec, ok := r.s.recs[[2]string{scope, key}]
	return rec, ok && rec.ExpiresAt.After(now), nil
}
