package apifuzz_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
)

// learn keeps the state current: a token pair answered by login or
// refresh becomes the fuzzer's user's (the previous refresh token is spent
// either way), or the admin's, or stays the stateful round's (who); a
// logout ends it, created entries join the pool of ids the cases draw
// from and deleted ones leave it; so do throwaway users; the audit
// trail's cursors are kept for the before parameter.
func (f *fuzzer) learn(r *request, a answer) {
	switch {
	case a.status == http.StatusCreated && slices.Contains([]string{"login", "refresh", "tokenRefresh"}, r.op.id):
		var pair struct{ AccessToken, RefreshToken string }
		if json.Unmarshal(a.body, &pair) == nil && pair.AccessToken != "" {
			f.red.add(pair.AccessToken, "<an access token>")
			f.red.add(pair.RefreshToken, "<a refresh token>")
			switch r.who {
			case whoUser:
				f.st.access, f.st.refresh = pair.AccessToken, pair.RefreshToken
			case whoAdmin:
				f.st.adminAccess, f.st.adminRefresh = pair.AccessToken, pair.RefreshToken
			}
		}
	case a.status == http.StatusCreated && r.op.id == "adminAddUser":
		var u struct{ ID string }
		if json.Unmarshal(a.body, &u) == nil && u.ID != "" {
			f.st.users = append(f.st.users, u.ID)
			if len(f.st.users) > 32 {
				f.st.users = f.st.users[1:]
			}
		}
	case a.status == http.StatusNoContent && r.op.id == "adminDeleteUser":
		f.st.users = slices.DeleteFunc(f.st.users, func(id string) bool { return id == r.path["id"] })
	case a.status == http.StatusOK && r.op.id == "adminAudit":
		var page struct{ Next *string }
		if json.Unmarshal(a.body, &page) == nil && page.Next != nil && !slices.Contains(f.st.cursors, *page.Next) {
			f.st.cursors = append(f.st.cursors, *page.Next)
			if len(f.st.cursors) > 8 {
				f.st.cursors = f.st.cursors[1:]
			}
		}
	case a.status == http.StatusNoContent && r.op.id == "logout" && r.auth == authValid && r.who == whoUser:
		f.st.access, f.st.refresh = "", ""
		f.login()
	case a.status < 300 && (r.op.id == "createCacheEntry" || r.op.id == "replaceCacheEntry") && r.path["assignment"] == "user":
		var e struct{ ID string }
		if json.Unmarshal(a.body, &e) == nil && e.ID != "" && !slices.Contains(f.st.ids, e.ID) {
			f.st.ids = append(f.st.ids, e.ID)
			if len(f.st.ids) > 32 {
				f.st.ids = f.st.ids[1:]
			}
		}
	case a.status == http.StatusOK && (r.op.id == "deleteCacheEntry" || r.op.id == "adminDeleteCacheEntry"):
		f.st.ids = slices.DeleteFunc(f.st.ids, func(id string) bool { return id == r.path["id"] })
	}
}

// step is a request of the stateful pass: the user's token, the default
// assignment, no optional parameter.
func (f *fuzzer) step(opID, id string, body any) *request {
	r := &request{op: f.ops[opID], path: map[string]string{"assignment": "user", "id": id}, auth: authValid}
	if !r.op.bearer {
		r.auth = authNone
	}
	if body != nil {
		r.body, r.contentType, r.hasBody = mustJSON(body), "application/json", true
	}
	return r
}

// expect sends a step and reports it under check when the status is not
// one of want.
func (f *fuzzer) expect(check string, r *request, want ...int) (answer, bool) {
	a, err := f.exchange(r)
	if err != nil {
		return a, false
	}
	if !slices.Contains(want, a.status) {
		f.record(r, a, finding{op: r.op.id, check: check, cause: fmt.Sprintf("%d, want %v", a.status, want)})
		return a, false
	}
	return a, true
}

func (f *fuzzer) login() {
	f.expect(checkStatefulSteps, f.step("login", "", map[string]string{"username": fuzzUsername, "password": fuzzPassword}), 201)
}

// drawBody draws a body valid for opID's schema, aimed at the user. A
// drawn expiry becomes an hour: the round follows the entry through its
// next steps, which a drawn "3 ms" (or, rounded up, "1e-7 ms": 1 ns)
// would let expire in between; the random cases still draw any expiry.
func (f *fuzzer) drawBody(opID string) map[string]any {
	v, _ := f.gen.value(f.ops[opID].op.RequestBody.Value.Content.Get("application/json").Schema.Value)
	obj, _ := v.(map[string]any)
	if a, ok := obj["assignee"].(map[string]any); ok {
		a["id"] = f.st.userID
	}
	if e, ok := obj["expiresIn"].(string); ok && e != "" {
		obj["expiresIn"] = "1h"
	}
	return obj
}

// entryBody is a fixed valid entry for the user, with a fresh key of
// letters and digits (a drawn string may hold a NUL, which a key may not).
func (f *fuzzer) entryBody() map[string]any {
	return map[string]any{"key": f.plain(8), "type": "t", "data": "x", "assignee": map[string]any{"id": f.st.userID}}
}

// statefulRound follows created resources: log in (when logged out),
// refresh with the answered refresh token, create an entry and read,
// replace, patch and delete it by the answered id, read it again (404);
// with logout, log out and try the spent refresh token (401).
func (f *fuzzer) statefulRound(logout bool) {
	if f.st.access == "" {
		f.login()
	}
	refreshOp := []string{"refresh", "tokenRefresh"}[f.gen.r.IntN(2)]
	f.expect(checkStatefulSteps, f.step(refreshOp, "", map[string]string{"refreshToken": f.st.refresh}), 201)
	id := ""
	for range 5 {
		a, err := f.exchange(f.step("createCacheEntry", "", f.drawBody("createCacheEntry")))
		var e struct{ ID string }
		if err == nil && a.status == http.StatusCreated && json.Unmarshal(a.body, &e) == nil {
			id = e.ID
			break
		}
	}
	if id != "" {
		f.expect(checkAvailability, f.step("getCacheEntry", id, nil), 200)
		f.expect(checkStatefulSteps, f.step("replaceCacheEntry", id, f.drawBody("replaceCacheEntry")), 200, 400, 409)
		f.expect(checkStatefulSteps, f.step("patchCacheEntry", id, f.drawBody("patchCacheEntry")), 200, 400, 409)
		if _, ok := f.expect(checkStatefulSteps, f.step("deleteCacheEntry", id, nil), 200); ok {
			f.rounds++
			f.expect(checkUseAfterFree, f.step("getCacheEntry", id, nil), 404)
			f.expect(checkUseAfterFree, f.step("deleteCacheEntry", id, nil), 404)
		}
	}
	if !logout {
		return
	}
	spent := f.st.refresh
	f.expect(checkStatefulSteps, f.step("logout", "", nil), 204) // learn logs in again
	f.expect(checkUseAfterFree, f.step(refreshOp, "", map[string]string{"refreshToken": spent}), 401)
}
