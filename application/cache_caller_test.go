package application_test

import (
	"testing"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// callerRecorder is a memstore repository that records the caller each
// use case binds it to.
type callerRecorder struct {
	*memstore.CacheRepository
	callers []domain.Caller
}

func (r *callerRecorder) For(c domain.Caller) ports.CacheRepository {
	r.callers = append(r.callers, c)
	return r.CacheRepository
}

// The Go API called AsActor of a user binds the store to that user, the
// caller whose database work storage bounds, as an HTTP request of hers
// would, with nothing in the context; the system actor binds none, and an
// anonymous actor its client's address.
func TestTheGoAPINamesItsActorAsTheCaller(t *testing.T) {
	t.Parallel()
	repo := &callerRecorder{CacheRepository: memstore.NewCacheRepository()}
	stores, err := application.NewAssignments(application.Assignment{Name: "user", EntityKey: "userCache", Repo: repo,
		Policy: domain.PolicyPublic})
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
	_, _ = api.Get(t.Context(), "user", ref, application.AsActor(domain.Anonymous().From(domain.Client{Address: "192.0.2.1"})))
	want := []domain.Caller{{User: alice}, {}, {Address: "192.0.2.1"}}
	if len(repo.callers) != len(want) {
		t.Fatalf("repository bound to callers %+v, want %+v", repo.callers, want)
	}
	for i := range want {
		if repo.callers[i] != want[i] {
			t.Errorf("call %d ran for caller %+v, want %+v", i, repo.callers[i], want[i])
		}
	}
}
