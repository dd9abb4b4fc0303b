package contract

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/cachegate/cachegate/domain"
)

// webQuotaTests pin the answers of docs/api.md's "Quotas" over
// HTTP, on the target's QuotaAssignment: 403 CACHE_QUOTA_EXCEEDED for
// POST, PUT and PATCH past a quota, with what is stored left as it was,
// a place given back by DELETE, and one winner among parallel POSTs for
// the last place.
func webQuotaTests(t *testing.T, s *webSuite) {
	if s.target.QuotaAssignment == "" {
		return
	}
	q := &webSuite{target: s.target, client: s.client, a: s.target.QuotaAssignment}
	max, maxBytes := int(s.target.Quota.MaxEntries), int(s.target.Quota.MaxBytes)
	// Each small entry counts its change too (domain.ChangeBytes): room
	// for max of them, a deleted one and its changes, with some to spare.
	if need := (max + 3) * 2 * domain.RetainedRowBytes; max < 2 || maxBytes < need {
		t.Fatalf("the quota %+v is too small for the suite: at least 2 entries and %d bytes", s.target.Quota, need)
	}
	// fill creates n small entries of assignee and returns them.
	fill := func(t *testing.T, assignee string, n int) []webEntry {
		t.Helper()
		var out []webEntry
		for i := range n {
			out = append(out, q.create(t, fmt.Sprintf("k%d", i), "t", assignee, fmt.Sprintf(`{"n":%d}`, i), "null"))
		}
		return out
	}
	// wantKept checks that assignee still has exactly es, as they were.
	wantKept := func(t *testing.T, assignee string, es []webEntry) {
		t.Helper()
		got := q.listOf(t, "?assignee.id="+assignee)
		if len(got) != len(es) {
			t.Fatalf("the assignee has %d entries, want %d", len(got), len(es))
		}
		for _, e := range es {
			r := q.do(t, http.MethodGet, q.item(e.ID), nil).entry(t, http.StatusOK)
			if r.Version != e.Version || !bytes.Equal(r.Data, e.Data) || r.Key != e.Key {
				t.Errorf("entry %s is now version %d %s, want version %d %s", e.ID, r.Version, r.Data, e.Version, e.Data)
			}
		}
	}

	t.Run("a POST past maxEntries is 403 CACHE_QUOTA_EXCEEDED and stores nothing", func(t *testing.T) {
		t.Parallel()
		a := webUUID()
		kept := fill(t, a, max)
		env := q.do(t, http.MethodPost, q.coll(), webBody("over", "t", a, `"x"`, "null")).fail(t, http.StatusForbidden, "CACHE_QUOTA_EXCEEDED")
		if !strings.Contains(env.Message, fmt.Sprint(max)) {
			t.Errorf("message %q does not name the limit %d", env.Message, max)
		}
		for _, says := range []string{"deleted and expired", "change feed", "idempotency record", "free up"} {
			if !strings.Contains(env.Message, says) {
				t.Errorf("message %q does not say what counts and when it frees up (%q)", env.Message, says)
			}
		}
		wantKept(t, a, kept)
		// Another assignee has a quota of its own.
		fill(t, webUUID(), 1)
	})

	t.Run("a PUT creating past the quota is 403 and one replacing within it is 200", func(t *testing.T) {
		t.Parallel()
		a := webUUID()
		kept := fill(t, a, max)
		id := webUUID()
		q.do(t, http.MethodPut, q.item(id), webBody("new", "t", a, `"x"`, "null")).fail(t, http.StatusForbidden, "CACHE_QUOTA_EXCEEDED")
		q.do(t, http.MethodGet, q.item(id), nil).fail(t, http.StatusNotFound, "CACHE_ENTITY_NOT_FOUND")
		wantKept(t, a, kept)
		e := q.do(t, http.MethodPut, q.item(kept[0].ID), webBody(kept[0].Key, "t", a, `{"n":9}`, "null")).entry(t, http.StatusOK)
		if e.Version != 2 {
			t.Errorf("replaced entry has version %d, want 2", e.Version)
		}
	})

	t.Run("a PATCH growing data past maxBytes is 403 and the entry stays as it was", func(t *testing.T) {
		t.Parallel()
		a := webUUID()
		kept := fill(t, a, 2)
		big := `"` + strings.Repeat("x", maxBytes) + `"`
		q.do(t, http.MethodPatch, q.item(kept[0].ID), []byte(`{"data":`+big+`}`)).fail(t, http.StatusForbidden, "CACHE_QUOTA_EXCEEDED")
		q.do(t, http.MethodPut, q.item(kept[1].ID), webBody(kept[1].Key, "t", a, big, "null")).fail(t, http.StatusForbidden, "CACHE_QUOTA_EXCEEDED")
		wantKept(t, a, kept)
		e := q.do(t, http.MethodPatch, q.item(kept[0].ID), []byte(`{"data":1}`)).entry(t, http.StatusOK)
		if string(e.Data) != "1" {
			t.Errorf("a shrinking PATCH stored %s, want 1", e.Data)
		}
	})

	t.Run("a DELETE gives the place back", func(t *testing.T) {
		t.Parallel()
		a := webUUID()
		kept := fill(t, a, max)
		q.do(t, http.MethodDelete, q.item(kept[0].ID), nil).entry(t, http.StatusOK)
		q.create(t, "again", "t", a, `"x"`, "null")
		q.do(t, http.MethodPost, q.coll(), webBody("over", "t", a, `"x"`, "null")).fail(t, http.StatusForbidden, "CACHE_QUOTA_EXCEEDED")
	})

	t.Run("of parallel POSTs for the last place exactly one is 201, the others 403", func(t *testing.T) {
		t.Parallel()
		a := webUUID()
		fill(t, a, max-1)
		const n = 12
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				statuses[i] = q.do(t, http.MethodPost, q.coll(), webBody(fmt.Sprintf("race%d", i), "t", a, `"x"`, "null")).Status
			})
		}
		wg.Wait()
		created := 0
		for i, st := range statuses {
			switch st {
			case http.StatusCreated:
				created++
			case http.StatusForbidden:
			default:
				t.Errorf("POST %d answered %d, want 201 or 403", i, st)
			}
		}
		if created != 1 {
			t.Errorf("%d POSTs were created, want exactly 1 (statuses %v)", created, statuses)
		}
		if got := len(q.listOf(t, "?assignee.id="+a)); got != max {
			t.Errorf("the assignee has %d entries, want %d", got, max)
		}
	})
}
