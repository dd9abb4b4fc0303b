package contract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// cacheT0 is the time the cache contract starts from: UTC, microsecond
// precision, so stores return it unchanged.
var cacheT0 = time.Date(2030, 5, 6, 7, 8, 9, 123456000, time.UTC)

// cacheID returns the i-th entry id of the suite, a UUIDv7-shaped string.
func cacheID(i int) string { return fmt.Sprintf("0190a5c0-0000-7000-8000-%012d", i) }

// cacheAssignee returns the i-th assignee id of the suite.
func cacheAssignee(i int) string { return fmt.Sprintf("a55194ee-0000-4000-8000-%012d", i) }

// cacheEntry returns a live entry with id cacheID(i), key "key-<i>", type
// "type", assignee cacheAssignee(0), version 1, created and updated at
// cacheT0 and never expiring.
func cacheEntry(i int) domain.Entry {
	return domain.Entry{
		ID:          cacheID(i),
		Key:         fmt.Sprintf("key-%d", i),
		Type:        "type",
		AssigneeID:  cacheAssignee(0),
		Data:        []byte(fmt.Sprintf(`{"n":%d}`, i)),
		Version:     1,
		DateCreated: cacheT0,
		DateUpdated: cacheT0,
	}
}

// cacheAt returns a pointer to t, for ExpiresAt and DateDeleted.
func cacheAt(t time.Time) *time.Time { return &t }

// cacheCreate creates e at now and fails t if that fails.
func cacheCreate(t *testing.T, r ports.CacheRepository, e domain.Entry, now time.Time) {
	t.Helper()
	if err := r.Create(t.Context(), e, now, domain.Quota{}); err != nil {
		t.Fatalf("Create(%s) = %v", e.ID, err)
	}
}

// cacheGet returns the live entry id at now and fails t if there is none.
func cacheGet(t *testing.T, r ports.CacheRepository, id string, now time.Time) domain.Entry {
	t.Helper()
	e, err := r.Get(t.Context(), id, now)
	if err != nil {
		t.Fatalf("Get(%s) = %v", id, err)
	}
	return e
}

// cacheWantGone fails t unless no read finds e at now.
func cacheWantGone(t *testing.T, r ports.CacheRepository, e domain.Entry, now time.Time) {
	t.Helper()
	if _, err := r.Get(t.Context(), e.ID, now); !errors.Is(err, domain.ErrCacheNotFound) {
		t.Errorf("Get(%s) at %v = %v, want ErrCacheNotFound", e.ID, now, err)
	}
	if _, err := r.GetByKey(t.Context(), e.NaturalKey(), now); !errors.Is(err, domain.ErrCacheNotFound) {
		t.Errorf("GetByKey(%v) at %v = %v, want ErrCacheNotFound", e.NaturalKey(), now, err)
	}
	res, err := ListAll(t.Context(), r, ports.ListQuery{Owner: e.AssigneeID, Limit: 1000}, now)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	for _, got := range res.Entries {
		if got.ID == e.ID {
			t.Errorf("List at %v includes %s", now, e.ID)
		}
	}
}

// cacheWantErr fails t unless err is target.
func cacheWantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s = %v, want %v", what, err, target)
	}
}

// cacheWantEntry fails t unless got equals want field by field: Data byte
// for byte, times equal and in UTC, nil times nil.
func cacheWantEntry(t *testing.T, got, want domain.Entry) {
	t.Helper()
	if got.ID != want.ID || got.Key != want.Key || got.Type != want.Type || got.AssigneeID != want.AssigneeID ||
		got.Version != want.Version {
		t.Errorf("entry = %s\nwant    %s", cacheFormat(got), cacheFormat(want))
		return
	}
	if !bytes.Equal(got.Data, want.Data) {
		t.Errorf("entry %s data = %q, want %q", want.ID, cacheShort(got.Data), cacheShort(want.Data))
	}
	cacheWantTime(t, want.ID+" DateCreated", &got.DateCreated, &want.DateCreated)
	cacheWantTime(t, want.ID+" DateUpdated", &got.DateUpdated, &want.DateUpdated)
	cacheWantTime(t, want.ID+" DateDeleted", got.DateDeleted, want.DateDeleted)
	cacheWantTime(t, want.ID+" ExpiresAt", got.ExpiresAt, want.ExpiresAt)
}

func cacheWantTime(t *testing.T, field string, got, want *time.Time) {
	t.Helper()
	switch {
	case got == nil && want == nil:
	case got == nil || want == nil:
		t.Errorf("%s = %v, want %v", field, cachePtr(got), cachePtr(want))
	case !got.Equal(*want):
		t.Errorf("%s = %v, want %v", field, got, want)
	case got.Location() != time.UTC:
		t.Errorf("%s is in %v, want UTC", field, got.Location())
	}
}

func cachePtr(t *time.Time) string {
	if t == nil {
		return "nil"
	}
	return t.String()
}

func cacheShort(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + fmt.Sprintf("…(%d bytes)", len(b))
	}
	return string(b)
}

func cacheFormat(e domain.Entry) string {
	return fmt.Sprintf("{id %s key %q type %q assignee %s version %d}", e.ID, e.Key, e.Type, e.AssigneeID, e.Version)
}

// cacheIDs returns the ids of entries, in order.
func cacheIDs(entries []domain.Entry) []string {
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.ID
	}
	return ids
}

// cacheWantIDs fails t unless entries have exactly the ids want, in order.
func cacheWantIDs(t *testing.T, what string, entries []domain.Entry, want []string) {
	t.Helper()
	if got := cacheIDs(entries); !slices.Equal(got, want) {
		t.Errorf("%s ids:\n got %s\nwant %s", what, strings.Join(got, " "), strings.Join(want, " "))
	}
}

// Listed is a whole list: its entries and what the store reported.
type Listed struct {
	Entries []domain.Entry
	Total   int
}

// ListAll runs r.List and gathers what it yields.
func ListAll(ctx context.Context, r ports.CacheRepository, q ports.ListQuery, now time.Time) (Listed, error) {
	out := Listed{Entries: []domain.Entry{}}
	res, err := r.List(ctx, q, now, func(e domain.Entry) error {
		out.Entries = append(out.Entries, e)
		return nil
	})
	out.Total = res.Total
	return out, err
}
