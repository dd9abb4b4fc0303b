package background_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

const alice = "0b9f0e4c-6a51-4d6a-9d54-1f6b7a1c2d3e"

func newClock() *system.ManualClock {
	return system.NewManualClock(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
}

// seqIDs makes deterministic, ordered UUIDs.
type seqIDs struct{ n atomic.Uint64 }

func (s *seqIDs) NewID() string {
	return fmt.Sprintf("00000000-0000-7000-8000-%012x", s.n.Add(1))
}

type cacheEnv struct {
	uc    *application.CacheOperations
	api   *application.Cache
	clock *system.ManualClock
}

// newCacheEnv builds the cache use cases on one in-memory assignment.
func newCacheEnv(t testing.TB, policy domain.Policy) cacheEnv {
	t.Helper()
	stores, err := application.NewAssignments(
		application.Assignment{Name: "user", EntityKey: "userCache", Repo: memstore.NewCacheRepository(), Policy: policy},
	)
	if err != nil {
		t.Fatal(err)
	}
	clock := newClock()
	uc, err := application.NewCacheOperations(application.CacheConfig{Assignments: stores, Clock: clock, IDs: &seqIDs{}})
	if err != nil {
		t.Fatal(err)
	}
	return cacheEnv{uc: uc, api: application.NewCache(uc), clock: clock}
}

func str(s string) *string { return &s }

func input(key, assignee string) application.CacheInput {
	return application.CacheInput{Key: key, Type: "settings", AssigneeID: assignee, Data: []byte(`{"theme":"dark"}`)}
}
