package apifuzz_test

import (
	"encoding/json"
	"net/http"
	"slices"
)

// adminEntryRound follows an entry of the fuzzer's user through the admin
// entry routes (docs/admin.md): the user creates it; the admin reads it
// (its ETag), replaces it with If-Match of that version (a new version),
// is refused the stale version (412, nothing changes) and deletes it with
// If-Match of the new one; then the entry is gone for the user and the
// admin alike (404).
func (f *fuzzer) adminEntryRound() {
	a, ok := f.expect(checkStatefulSteps, f.step("createCacheEntry", "", f.entryBody()), 201)
	var e struct{ ID string }
	if !ok || json.Unmarshal(a.body, &e) != nil || e.ID == "" {
		return
	}
	r := f.step("adminGetCacheEntry", e.ID, nil)
	a, ok = f.expect(checkAvailability, r, 200)
	if !ok {
		return
	}
	if json.Unmarshal(a.body, &e) != nil || e.ID != r.path["id"] {
		f.fail(checkAvailability, r, a, "another entry answered")
	}
	first := a.header.Get("ETag")
	r = ifMatch(f.step("adminReplaceCacheEntry", e.ID, f.entryBody()), first)
	a, ok = f.expect(checkStatefulSteps, r, 200)
	if !ok {
		return
	}
	second := a.header.Get("ETag")
	if second == first {
		f.fail(checkStatefulSteps, r, a, "the replaced entry kept its version %s", first)
	}
	f.expect(checkStatefulSteps, ifMatch(f.step("adminReplaceCacheEntry", e.ID, f.entryBody()), first), 412)
	f.expect(checkStatefulSteps, ifMatch(f.step("adminDeleteCacheEntry", e.ID, nil), first), 412)
	if _, ok := f.expect(checkStatefulSteps, ifMatch(f.step("adminDeleteCacheEntry", e.ID, nil), second), 200); !ok {
		return
	}
	f.adminEntryRounds++
	f.expect(checkUseAfterFree, f.step("getCacheEntry", e.ID, nil), 404)
	f.expect(checkUseAfterFree, f.step("adminGetCacheEntry", e.ID, nil), 404)
	f.expect(checkUseAfterFree, f.step("adminReplaceCacheEntry", e.ID, f.entryBody()), 404)
	f.expect(checkUseAfterFree, f.step("adminDeleteCacheEntry", e.ID, nil), 404)
}

// ifMatch makes r carry If-Match: etag.
func ifMatch(r *request, etag string) *request {
	r.header = append(r.header, [2]string{"If-Match", etag})
	return r
}

// allSessionsListed checks that every user's session list holds the
// session of the access token acc, of the user named name.
func (f *fuzzer) allSessionsListed(acc, name string) {
	sid := sessionID(acc)
	if sid == "" {
		return
	}
	r := f.step("adminAllSessions", "", nil)
	r.query = [][2]string{{"limit", "1000"}}
	a, ok := f.expect(checkStatefulSteps, r, http.StatusOK)
	if !ok {
		return
	}
	var list struct {
		Data []struct{ ID, Username string }
	}
	if json.Unmarshal(a.body, &list) != nil || !slices.Contains(list.Data, struct{ ID, Username string }{sid, name}) {
		f.fail(checkStatefulSteps, r, a, "the throwaway user's live session is not listed with its username")
	}
}
