package application_test

import (
	"context"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// callerRecorder is a memstore repository that records the caller each
// Get runs for.
type callerRecorder struct {
	*memstore.CacheRepository
	callers []string
}

func (r *callerRecorder) Get(ctx context.Context, id string, now time.Time) (domain.Entry, error) {
	r.callers = append(r.callers, ports.Caller(ctx))
	return r.CacheRepository.Get(ctx, id, now)
}

func (r *callerRecorder) GetByKey(ctx context.Context, k domain.NaturalKey, now time.Time) (domain.Entry, error) {
	r.callers = append(r.callers, ports.Caller(ctx))
	return r.CacheRepository.GetByKey(ctx, k, now)
}

// The Go API called AsActor of a user names that user as the caller whose
// database work storage bounds; the system actor names none, and a caller
// the context already names is kept.
func TestTheGoAPINamesItsActorAsTheCaller(t *testing.T) {
	t.Parallel()
	repo := &callerRecorder{CacheRepository: memstore.NewCacheRepository()}
	stores, err := application.NewAssignments(application.Assignment{Name: "user", EntityKey: "userCache", Repo: repo,
		Policy: domain.PolicyOwner})
	if err != nil {
		t.Fatal(err)
	}
	uc, err := application.NewCacheOperations(application.CacheConfig{Assignments: stores, Clock: newClock(), IDs: &seqIDs{}})
	if err != nil {
		t.Fatal(err)
	}
	api := application.NewCache(uc)
	ref := application.CacheRef{Key: "k", Type: "t", AssigneeID: alice}
	_, _ = api.Get(t.Context(), "user", ref, application.AsActor(user(alice)))
	_, _ = api.Get(t.Context(), "user", ref)
	_, _ = api.Get(ports.WithCaller(t.Context(), "address:192.0.2.1"), "user", ref, application.AsActor(user(alice)))
	want := []string{"user:" + alice, "", "address:192.0.2.1"}
	if len(repo.callers) != len(want) {
		t.Fatalf("repository saw callers %q, want %q", repo.callers, want)
	}
	for i := range want {
		if repo.callers[i] != want[i] {
			t.Errorf("call %d ran for caller %q, want %q", i, repo.callers[i], want[i])
		}
	}
}
