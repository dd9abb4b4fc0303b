package application_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

const (
	alice = "0b9f0e4c-6a51-4d6a-9d54-1f6b7a1c2d3e"
	bob   = "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"
)

type cacheEnv struct {
	uc    *application.CacheOperations
	api   *application.Cache
	clock *system.ManualClock
}

func newCacheEnv(t testing.TB, policy domain.Policy, defaultTTL time.Duration) cacheEnv {
	t.Helper()
	stores, err := application.NewAssignments(
		application.Assignment{Name: "user", EntityKey: "userCache", Repo: memstore.NewCacheRepository(),
			Policy: policy, DefaultExpiresIn: defaultTTL},
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

// list streams the page in selects into a slice.
func (env cacheEnv) list(ctx context.Context, in application.ListCachesInput) (entries []domain.Entry, total int, err error) {
	out, err := env.uc.List.Stream(ctx, in, func(e domain.Entry) error {
		entries = append(entries, e)
		return nil
	})
	return entries, out.Total, err
}

func str(s string) *string { return &s }

func input(key, assignee string) application.CacheInput {
	return application.CacheInput{Key: key, Type: "settings", AssigneeID: assignee, Data: []byte(`{"theme":"dark"}`)}
}

func user(id string) domain.Actor { return domain.AsPrincipal(domain.Principal{ID: id}) }

func TestCreateCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("a new entry has version 1, both dates now and the given expiry", func(t *testing.T) {
		t.Parallel()
		env := newCacheEnv(t, domain.PolicyOwner, 0)
		in := input("k", alice)
		in.ExpiresIn = str("1h")
		e, err := env.api.Create(ctx, "user", in)
		if err != nil {
			t.Fatal(err)
		}
		now := env.clock.Now()
		if e.Version != 1 || !e.DateCreated.Equal(now) || !e.DateUpdated.Equal(now) || e.DateDeleted != nil {
			t.Fatalf("unexpected entry %+v", e)
		}
		if e.ExpiresAt == nil || !e.ExpiresAt.Equal(now.Add(time.Hour)) {
			t.Fatalf("expiry = %v, want %v", e.ExpiresAt, now.Add(time.Hour))
		}
	})

	t.Run("expiresIn null takes the store's default, and no default means no expiry", func(t *testing.T) {
		t.Parallel()
		withDefault := newCacheEnv(t, domain.PolicyOwner, 2*time.Hour)
		e, err := withDefault.api.Create(ctx, "user", input("k", alice))
		if err != nil || e.ExpiresAt == nil || !e.ExpiresAt.Equal(withDefault.clock.Now().Add(2*time.Hour)) {
			t.Fatalf("default expiry: %+v, %v", e.ExpiresAt, err)
		}
		without := newCacheEnv(t, domain.PolicyOwner, 0)
		e, err = without.api.Create(ctx, "user", input("k", alice))
		if err != nil || e.ExpiresAt != nil {
			t.Fatalf("no default: %+v, %v", e.ExpiresAt, err)
		}
	})

	t.Run("a duplicate natural key is a conflict", func(t *testing.T) {
		t.Parallel()
		env := newCacheEnv(t, domain.PolicyOwner, 0)
		if _, err := env.api.Create(ctx, "user", input("k", alice)); err != nil {
			t.Fatal(err)
		}
		_, err := env.api.Create(ctx, "user", input("k", alice))
		if !errors.Is(err, domain.ErrCacheEntityAlreadyExists) {
			t.Fatalf("err = %v, want ErrCacheEntityAlreadyExists", err)
		}
		if _, err := env.api.Create(ctx, "user", input("k", bob)); err != nil {
			t.Fatalf("another assignee's same key: %v", err)
		}
	})

	t.Run("an unknown assignment is its own error", func(t *testing.T) {
		t.Parallel()
		env := newCacheEnv(t, domain.PolicyOwner, 0)
		_, err := env.api.Create(ctx, "nope", input("k", alice))
		if !errors.Is(err, domain.ErrUnknownAssignment) {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("the entity key names the assignment too", func(t *testing.T) {
		t.Parallel()
		env := newCacheEnv(t, domain.PolicyOwner, 0)
		if _, err := env.api.Create(ctx, "userCache", input("k", alice)); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("every invalid field is named", func(t *testing.T) {
		t.Parallel()
		env := newCacheEnv(t, domain.PolicyOwner, 0)
		long := make([]byte, 256)
		for i := range long {
			long[i] = 'x'
		}
		_, err := env.api.Create(ctx, "user", application.CacheInput{Key: "", Type: string(long),
			AssigneeID: "not-a-uuid", Data: []byte(`{`), ExpiresIn: str("10")})
		var de *domain.Error
		if !errors.As(err, &de) || de.Kind != domain.KindInvalid {
			t.Fatalf("err = %v, want a validation error", err)
		}
		fields := map[string]bool{}
		for _, d := range de.Details {
			fields[d.Field] = true
		}
		for _, f := range []string{"key", "type", "assignee.id", "data", "expiresIn"} {
			if !fields[f] {
				t.Errorf("field %s not named in %v", f, de.Details)
			}
		}
	})

	t.Run("an owner may not create for another assignee", func(t *testing.T) {
		t.Parallel()
		env := newCacheEnv(t, domain.PolicyOwner, 0)
		_, err := env.api.Create(ctx, "user", input("k", bob), application.AsActor(user(alice)))
		if !errors.Is(err, domain.ErrForbidden) {
			t.Fatalf("err = %v, want ErrForbidden", err)
		}
		if _, err := env.api.Create(ctx, "user", input("k", alice), application.AsActor(user(alice))); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("an anonymous caller is refused unless the policy is public", func(t *testing.T) {
		t.Parallel()
		for _, p := range []domain.Policy{domain.PolicyOwner, domain.PolicyAuthenticated} {
			env := newCacheEnv(t, p, 0)
			_, err := env.api.Create(ctx, "user", input("k", alice), application.AsActor(domain.Anonymous()))
			if !errors.Is(err, domain.ErrUnauthenticated) {
				t.Fatalf("%v: err = %v", p, err)
			}
		}
		env := newCacheEnv(t, domain.PolicyPublic, 0)
		if _, err := env.api.Create(ctx, "user", input("k", alice), application.AsActor(domain.Anonymous())); err != nil {
			t.Fatal(err)
		}
	})
}

func TestExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := newCacheEnv(t, domain.PolicyOwner, 0)
	in := input("k", alice)
	in.ExpiresIn = str("10s")
	e, err := env.api.Create(ctx, "user", in)
	if err != nil {
		t.Fatal(err)
	}
	ref := application.CacheRef{Key: "k", Type: "settings", AssigneeID: alice}

	env.clock.Advance(10*time.Second - time.Microsecond)
	if _, err := env.api.Get(ctx, "user", ref); err != nil {
		t.Fatalf("just before expiry: %v", err)
	}
	env.clock.Advance(time.Microsecond)
	if _, err := env.api.Get(ctx, "user", ref); !errors.Is(err, domain.ErrCacheNotFound) {
		t.Fatalf("at the expiry instant: err = %v, want not found", err)
	}
	if _, err := env.uc.Get.Execute(ctx, application.GetCacheInput{Assignment: "user", ID: e.ID}); !errors.Is(err, domain.ErrCacheNotFound) {
		t.Fatalf("by id at expiry: %v", err)
	}
	list, err := env.api.GetAssignedCaches(ctx, "user", alice)
	if err != nil || len(list) != 0 {
		t.Fatalf("list after expiry: %v, %v", list, err)
	}
	if _, err := env.api.Create(ctx, "user", input("k", alice)); err != nil {
		t.Fatalf("an expired entry must not block its natural key: %v", err)
	}
}

func TestReplaceCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	id := "0190a000-0000-7000-8000-000000000001"

	t.Run("an unused id is created, then replaced with version 2", func(t *testing.T) {
		t.Parallel()
		env := newCacheEnv(t, domain.PolicyOwner, 0)
		e, created, err := env.uc.Replace.Execute(ctx, application.ReplaceCacheInput{Assignment: "user", ID: id, Cache: input("k", alice)})
		if err != nil || !created || e.ID != id || e.Version != 1 {
			t.Fatalf("create: %+v %v %v", e, created, err)
		}
		env.clock.Advance(time.Second)
		in := input("k2", alice)
		in.Data = []byte(`"v2"`)
		e, created, err = env.uc.Replace.Execute(ctx, application.ReplaceCacheInput{Assignment: "user", ID: id, Cache: in})
		if err != nil || created || e.Version != 2 || e.Key != "k2" || string(e.Data) != `"v2"` {
			t.Fatalf("replace: %+v %v %v", e, created, err)
		}
		if !e.DateUpdated.After(e.DateCreated) {
			t.Fatalf("dateUpdated did not move: %+v", e)
		}
	})

	t.Run("If-Match with a stale version or no entry fails the precondition", func(t *testing.T) {
		t.Parallel()
		env := newCacheEnv(t, domain.PolicyOwner, 0)
		v := 1
		_, _, err := env.uc.Replace.Execute(ctx, application.ReplaceCacheInput{Assignment: "user", ID: id,
			Cache: input("k", alice), Pre: application.Preconditions{IfMatch: &v}})
		if !errors.Is(err, domain.ErrVersionMismatch) {
			t.Fatalf("no entry: %v", err)
		}
		if _, _, err := env.uc.Replace.Execute(ctx, application.ReplaceCacheInput{Assignment: "user", ID: id, Cache: input("k", alice)}); err != nil {
			t.Fatal(err)
		}
		stale := 7
		_, _, err = env.uc.Replace.Execute(ctx, application.ReplaceCacheInput{Assignment: "user", ID: id,
			Cache: input("k", alice), Pre: application.Preconditions{IfMatch: &stale}})
		if !errors.Is(err, domain.ErrVersionMismatch) {
			t.Fatalf("stale: %v", err)
		}
		e, _, err := env.uc.Replace.Execute(ctx, application.ReplaceCacheInput{Assignment: "user", ID: id,
			Cache: input("k", alice), Pre: application.Preconditions{IfMatch: &v}})
		if err != nil || e.Version != 2 {
			t.Fatalf("matching: %+v %v", e, err)
		}
	})

	t.Run("If-None-Match star only creates", func(t *testing.T) {
		t.Parallel()
		env := newCacheEnv(t, domain.PolicyOwner, 0)
		pre := application.Preconditions{IfNoneMatchAny: true}
		if _, created, err := env.uc.Replace.Execute(ctx, application.ReplaceCacheInput{Assignment: "user", ID: id, Cache: input("k", alice), Pre: pre}); err != nil || !created {
			t.Fatalf("first: %v", err)
		}
		_, _, err := env.uc.Replace.Execute(ctx, application.ReplaceCacheInput{Assignment: "user", ID: id, Cache: input("k", alice), Pre: pre})
		if !errors.Is(err, domain.ErrEntryExists) {
			t.Fatalf("second: %v", err)
		}
	})

	t.Run("replacing onto another entry's natural key is a conflict", func(t *testing.T) {
		t.Parallel()
		env := newCacheEnv(t, domain.PolicyOwner, 0)
		if _, err := env.api.Create(ctx, "user", input("taken", alice)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := env.uc.Replace.Execute(ctx, application.ReplaceCacheInput{Assignment: "user", ID: id, Cache: input("k", alice)}); err != nil {
			t.Fatal(err)
		}
		_, _, err := env.uc.Replace.Execute(ctx, application.ReplaceCacheInput{Assignment: "user", ID: id, Cache: input("taken", alice)})
		if !errors.Is(err, domain.ErrCacheEntityAlreadyExists) {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("another owner's entry is invisible, not replaceable", func(t *testing.T) {
		t.Parallel()
		env := newCacheEnv(t, domain.PolicyOwner, 0)
		if _, _, err := env.uc.Replace.Execute(ctx, application.ReplaceCacheInput{Assignment: "user", ID: id, Actor: user(alice), Cache: input("k", alice)}); err != nil {
			t.Fatal(err)
		}
		_, _, err := env.uc.Replace.Execute(ctx, application.ReplaceCacheInput{Assignment: "user", ID: id, Actor: user(bob), Cache: input("k", bob)})
		if !errors.Is(err, domain.ErrCacheNotFound) {
			t.Fatalf("err = %v, want not found", err)
		}
	})
}

func TestPatchCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := newCacheEnv(t, domain.PolicyOwner, 0)
	in := input("k", alice)
	in.ExpiresIn = str("1h")
	e, err := env.api.Create(ctx, "user", in)
	if err != nil {
		t.Fatal(err)
	}
	env.clock.Advance(time.Minute)
	p, err := env.uc.Patch.Execute(ctx, application.PatchCacheInput{Assignment: "user", ID: e.ID,
		Patch: application.CachePatch{Data: []byte(`[1, 2]`)}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != 2 || string(p.Data) != `[1, 2]` || p.Key != "k" || !p.ExpiresAt.Equal(*e.ExpiresAt) {
		t.Fatalf("patch changed more than data: %+v", p)
	}
	p, err = env.uc.Patch.Execute(ctx, application.PatchCacheInput{Assignment: "user", ID: e.ID,
		Patch: application.CachePatch{ExpiresInSet: true}})
	if err != nil || p.ExpiresAt != nil {
		t.Fatalf("expiresIn null without a default clears the expiry: %+v %v", p.ExpiresAt, err)
	}
	_, err = env.uc.Patch.Execute(ctx, application.PatchCacheInput{Assignment: "user", ID: "f00", Patch: application.CachePatch{}})
	if !errors.Is(err, domain.ErrCacheNotFound) {
		t.Fatalf("malformed id: %v", err)
	}
	_, err = env.uc.Patch.Execute(ctx, application.PatchCacheInput{Assignment: "user", ID: e.ID, Actor: user(alice),
		Patch: application.CachePatch{AssigneeID: str(bob)}})
	if !errors.Is(err, domain.ErrForbidden) {
		t.Fatalf("moving to another owner: %v", err)
	}
}

func TestUpdateDeleteClear(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := newCacheEnv(t, domain.PolicyOwner, 0)
	for _, k := range []string{"a", "b", "c"} {
		if _, err := env.api.Create(ctx, "user", input(k, alice)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := env.api.Create(ctx, "user", input("a", bob)); err != nil {
		t.Fatal(err)
	}
	upd := input("a", alice)
	upd.Data = []byte(`"new"`)
	e, err := env.api.Update(ctx, "user", upd)
	if err != nil || e.Version != 2 || string(e.Data) != `"new"` {
		t.Fatalf("update: %+v %v", e, err)
	}
	if _, err := env.api.Update(ctx, "user", upd, application.IfVersion(1)); !errors.Is(err, domain.ErrVersionMismatch) {
		t.Fatalf("stale update: %v", err)
	}
	missing := input("zzz", alice)
	if _, err := env.api.Update(ctx, "user", missing); !errors.Is(err, domain.ErrCacheNotFound) {
		t.Fatalf("update missing: %v", err)
	}
	ref := application.CacheRef{Key: "b", Type: "settings", AssigneeID: alice}
	if err := env.api.Delete(ctx, "user", ref); err != nil {
		t.Fatal(err)
	}
	if _, err := env.api.Get(ctx, "user", ref); !errors.Is(err, domain.ErrCacheNotFound) {
		t.Fatalf("get deleted: %v", err)
	}
	if err := env.api.Delete(ctx, "user", ref); !errors.Is(err, domain.ErrCacheNotFound) {
		t.Fatalf("delete twice: %v", err)
	}
	n, err := env.api.Clear(ctx, "user", alice)
	if err != nil || n != 2 {
		t.Fatalf("clear: %d %v", n, err)
	}
	left, err := env.api.GetAssignedCaches(ctx, "user", bob)
	if err != nil || len(left) != 1 {
		t.Fatalf("bob's entries after clearing alice: %v %v", left, err)
	}
}

func TestListCachesOwnerSeesOnlyOwnEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := newCacheEnv(t, domain.PolicyOwner, 0)
	for _, a := range []string{alice, alice, bob} {
		if _, err := env.api.Create(ctx, "user", input(a[:4]+env.clock.Now().String(), a)); err != nil {
			t.Fatal(err)
		}
		env.clock.Advance(time.Second)
	}
	entries, total, err := env.list(ctx, application.ListCachesInput{Assignment: "user", Actor: user(alice), CountTotal: true})
	if err != nil || len(entries) != 2 || total != 2 {
		t.Fatalf("alice's list: %d entries, total %d, %v", len(entries), total, err)
	}
	entries, _, err = env.list(ctx, application.ListCachesInput{Assignment: "user", Actor: user(alice), AssigneeID: bob})
	if err != nil || len(entries) != 0 {
		t.Fatalf("alice filtering for bob: %v %v", entries, err)
	}
	entries, _, err = env.list(ctx, application.ListCachesInput{Assignment: "user", Sort: []domain.SortKey{{Field: domain.FieldDateCreated, Desc: true}}, Limit: 1})
	if err != nil || len(entries) != 1 || entries[0].AssigneeID != bob {
		t.Fatalf("system list newest first: %v %v", entries, err)
	}
	if _, _, err := env.list(ctx, application.ListCachesInput{Assignment: "user", Limit: 1001}); domain.KindOf(err) != domain.KindInvalid {
		t.Fatalf("limit 1001: %v", err)
	}
	// The policy is ANDed outside the caller's filter: an OR naming bob, or
	// a $ne that would match everybody else, never reaches bob's entries.
	ne, err := domain.NewCondition("filter", domain.FieldAssigneeID, domain.OpNe, false, []string{alice})
	if err != nil {
		t.Fatal(err)
	}
	is, err := domain.NewCondition("or", domain.FieldAssigneeID, domain.OpEq, false, []string{bob})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []domain.Filter{domain.Where(ne), domain.AnyOf(domain.Where(is), domain.Where(ne))} {
		entries, _, err = env.list(ctx, application.ListCachesInput{Assignment: "user", Actor: user(alice), Filter: f})
		if err != nil || len(entries) != 0 {
			t.Fatalf("alice widening with %+v: %v %v", f, entries, err)
		}
	}
	found, err := env.api.Find(ctx, "user", domain.AnyOf(domain.Where(is)), nil, application.AsActor(user(alice)))
	if err != nil || len(found) != 0 {
		t.Fatalf("Find as alice for bob: %v %v", found, err)
	}
	found, err = env.api.Find(ctx, "user", domain.AnyOf(domain.Where(is)), nil)
	if err != nil || len(found) != 1 {
		t.Fatalf("Find as the system for bob: %v %v", found, err)
	}
}
