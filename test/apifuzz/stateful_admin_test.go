package apifuzz_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// adminLogin signs the fuzzer's admin in; its tokens serve the admin
// operations.
func (f *fuzzer) adminLogin() {
	r := f.step("login", "", map[string]string{"username": adminUsername, "password": adminPassword})
	r.who = whoAdmin
	f.expect(checkStatefulSteps, r, 201)
}

// aside makes r a step of a throwaway user, whose access token it
// carries: learn leaves the fuzzer's tokens alone.
func aside(r *request, token string) *request {
	r.who, r.token = whoAside, token
	return r
}

// loginAs signs a throwaway user in and returns its token pair; want is
// the status the step must answer.
func (f *fuzzer) loginAs(username, password string, want int) (access, refresh string) {
	r := aside(f.step("login", "", map[string]string{"username": username, "password": password}), "")
	a, ok := f.expect(checkStatefulSteps, r, want)
	var pair struct{ AccessToken, RefreshToken string }
	if !ok || want != http.StatusCreated || json.Unmarshal(a.body, &pair) != nil {
		return "", ""
	}
	f.red.add(pair.AccessToken, "<an access token>")
	f.red.add(pair.RefreshToken, "<a refresh token>")
	return pair.AccessToken, pair.RefreshToken
}

// spent checks that a refresh token of an ended session is refused.
func (f *fuzzer) spent(refresh string) {
	if refresh != "" {
		f.expect(checkUseAfterFree, aside(f.step("refresh", "", map[string]string{"refreshToken": refresh}), ""), 401)
	}
}

// plain is a random string of n letters and digits.
func (f *fuzzer) plain(n int) string {
	b := make([]rune, n)
	for i := range b {
		b[i] = plainRunes[f.gen.r.IntN(62)]
	}
	return string(b)
}

// sessionID is the sid claim of an access token: the session it belongs
// to (docs/admin.md, "Types"). The token is the server's, so only its
// payload is read.
func sessionID(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct{ Sid string }
	if err != nil || json.Unmarshal(b, &claims) != nil {
		return ""
	}
	return claims.Sid
}

// fail records a step whose answer was documented but wrong.
func (f *fuzzer) fail(check string, r *request, a answer, format string, args ...any) {
	f.record(r, a, finding{op: r.op.id, check: check, cause: fmt.Sprintf(format, args...)})
}

type sessionList struct {
	Data []struct {
		ID      string
		Current *bool
	}
}

// selfServiceRound follows a throwaway user (created by the admin) through
// the self-service routes (docs/admin.md, "Self-service"): two logins,
// its sessions listed with the current one marked, the other signed out
// (its refresh refused), its password changed with the right current
// password (the new one logs in, the old one no longer does). It returns
// the user's current password and a live token pair.
func (f *fuzzer) selfServiceRound(name, password string) (string, string, string) {
	acc1, ref1 := f.loginAs(name, password, 201)
	acc2, ref2 := f.loginAs(name, password, 201)
	if acc1 == "" || acc2 == "" {
		return password, acc1, ref1
	}
	r := aside(f.step("mySessions", "", nil), acc1)
	a, ok := f.expect(checkStatefulSteps, r, 200)
	var list sessionList
	if !ok || json.Unmarshal(a.body, &list) != nil {
		return password, acc1, ref1
	}
	other, current := sessionID(acc2), 0
	for _, s := range list.Data {
		if s.Current != nil && *s.Current {
			current++
			if s.ID != sessionID(acc1) {
				f.fail(checkStatefulSteps, r, a, "the session marked current is not the caller's")
			}
		}
	}
	if len(list.Data) != 2 || current != 1 || !slices.ContainsFunc(list.Data, func(s struct {
		ID      string
		Current *bool
	}) bool {
		return s.ID == other
	}) {
		f.fail(checkStatefulSteps, r, a, "%d sessions, %d current; want 2, 1 current", len(list.Data), current)
	}
	if _, ok := f.expect(checkStatefulSteps, aside(f.step("revokeMySession", other, nil), acc1), 204); ok {
		f.spent(ref2)
		f.expect(checkUseAfterFree, aside(f.step("revokeMySession", other, nil), acc1), 204, 404)
	}
	next := "pw-" + f.plain(12)
	f.red.add(next, "<a throwaway user's password>")
	r = aside(f.step("changePassword", "", map[string]string{"currentPassword": password, "newPassword": next}), acc1)
	if _, ok := f.expect(checkStatefulSteps, r, 204); !ok {
		return password, acc1, ref1
	}
	acc3, _ := f.loginAs(name, next, 201)
	f.loginAs(name, password, 401)
	if acc3 != "" {
		f.selfRounds++
	}
	return next, acc1, ref1
}

// adminRound is the admin API's stateful round (docs/admin.md): refresh
// the admin's pair; create a user, read it, find it with a query-language
// filter; the self-service round on it; list its sessions (and find its
// live one among every user's) and revoke one, disable it (its sessions
// end) and enable it, set its password, revoke all its sessions, read its
// audit trail page by page (following next) and by type and time; list,
// rotate (published ahead) and revoke the new key (never one that signed
// the fuzzer's tokens); list every assignee's entries; follow an entry of
// the fuzzer's user through the admin entry routes (adminEntryRound);
// delete the user (then 404); and a user who is not an admin is refused
// (403).
func (f *fuzzer) adminRound() {
	if f.st.adminAccess == "" {
		f.adminLogin()
	}
	r := f.step("tokenRefresh", "", map[string]string{"refreshToken": f.st.adminRefresh})
	r.who = whoAdmin
	if _, ok := f.expect(checkStatefulSteps, r, 201); !ok {
		f.adminLogin()
	}
	start := time.Now().Add(-time.Minute).UTC()
	name, pw := "fz-"+f.plain(10), "pw-"+f.plain(12)
	f.red.add(pw, "<a throwaway user's password>")
	a, ok := f.expect(checkStatefulSteps, f.step("adminAddUser", "", map[string]any{"username": name, "password": pw}), 201)
	var u struct {
		ID, Username  string
		Active, Admin bool
	}
	if !ok || json.Unmarshal(a.body, &u) != nil || u.ID == "" {
		return
	}
	if r := f.step("adminGetUser", u.ID, nil); true {
		if a, ok := f.expect(checkAvailability, r, 200); ok {
			var got struct{ Username string }
			if json.Unmarshal(a.body, &got) != nil || got.Username != name {
				f.fail(checkAvailability, r, a, "another user answered")
			}
		}
	}
	r = f.step("adminListUsers", "", nil)
	r.query = [][2]string{{"filter", "username||$eq||" + name}, {"or", "id||$eq||" + u.ID}, {"sort", "dateCreated,DESC"}}
	if a, ok := f.expect(checkStatefulSteps, r, 200); ok {
		var page struct{ Total, Count int }
		if json.Unmarshal(a.body, &page) != nil || page.Total != 1 || page.Count != 1 {
			f.fail(checkStatefulSteps, r, a, "the filter on the new user's username selected %d users, want 1", page.Total)
		}
	}

	pw, acc, ref := f.selfServiceRound(name, pw)

	r = f.step("adminUserSessions", u.ID, nil)
	if a, ok := f.expect(checkStatefulSteps, r, 200); ok {
		var list sessionList
		if json.Unmarshal(a.body, &list) != nil || !slices.ContainsFunc(list.Data, func(s struct {
			ID      string
			Current *bool
		}) bool {
			return s.ID == sessionID(acc) && s.Current == nil
		}) {
			f.fail(checkStatefulSteps, r, a, "the user's live session is not listed (or is marked current)")
		}
	}
	f.allSessionsListed(acc, name)
	acc4, ref4 := f.loginAs(name, pw, 201)
	if sid := sessionID(acc4); sid != "" {
		r := f.step("adminRevokeSession", "", nil)
		r.path = map[string]string{"sid": sid}
		if _, ok := f.expect(checkStatefulSteps, r, 204); ok {
			f.spent(ref4)
		}
	}
	r = f.step("adminPatchUser", u.ID, map[string]any{"active": false})
	if a, ok := f.expect(checkStatefulSteps, r, 200); ok {
		var got struct{ Active bool }
		if json.Unmarshal(a.body, &got) != nil || got.Active {
			f.fail(checkStatefulSteps, r, a, "still active after active: false")
		}
		f.spent(ref) // disabling ends every session
	}
	f.expect(checkStatefulSteps, f.step("adminPatchUser", u.ID, map[string]any{"active": true}), 200)
	next := "pw-" + f.plain(12)
	f.red.add(next, "<a throwaway user's password>")
	if _, ok := f.expect(checkStatefulSteps, f.step("adminSetPassword", u.ID, map[string]any{"password": next}), 204); ok {
		f.loginAs(name, pw, 401)
		_, ref5 := f.loginAs(name, next, 201)
		if _, ok := f.expect(checkStatefulSteps, f.step("adminRevokeUserSessions", u.ID, nil), 204); ok {
			f.spent(ref5)
		}
	}
	f.auditRound(name, start)
	f.keyRound()
	r = f.step("adminListCacheEntries", "", nil)
	r.query = [][2]string{{"filter", "assignee.id||$eq||" + f.st.userID}, {"limit", "5"}}
	f.expect(checkStatefulSteps, r, 200)
	f.adminEntryRound()
	if _, ok := f.expect(checkStatefulSteps, f.step("adminDeleteUser", u.ID, nil), 204); ok {
		f.adminRounds++
		f.expect(checkUseAfterFree, f.step("adminGetUser", u.ID, nil), 404)
		f.expect(checkUseAfterFree, f.step("adminDeleteUser", u.ID, nil), 404)
		f.loginAs(name, next, 401)
	}
	r = f.step("adminListUsers", "", nil)
	r.auth = authNonAdmin
	f.expect(checkAuth, r, 403)
}

// auditRound reads the throwaway user's audit trail two events a page,
// following next to the end (no event twice, the round's admin events
// all there, of the same types as the command line's), then only its
// user.disabled and user.enabled events since the round began: one each.
func (f *fuzzer) auditRound(name string, since time.Time) {
	seen := map[string]bool{}
	types := map[string]int{}
	before := ""
	for page := 0; page < 50; page++ {
		r := f.step("adminAudit", "", nil)
		r.query = [][2]string{{"user", name}, {"limit", "2"}}
		if before != "" {
			r.query = append(r.query, [2]string{"before", before})
		}
		a, ok := f.expect(checkStatefulSteps, r, 200)
		var p struct {
			Data []struct{ ID, Type, Username string }
			Next *string
		}
		if !ok || json.Unmarshal(a.body, &p) != nil {
			return
		}
		for _, e := range p.Data {
			if seen[e.ID] {
				f.fail(checkStatefulSteps, r, a, "an event on two pages")
			}
			seen[e.ID] = true
			types[e.Type]++
		}
		if p.Next == nil {
			break
		}
		before = *p.Next
	}
	for _, want := range []string{"user.added", "user.disabled", "user.enabled", "user.password_changed",
		"session.revoked", "login.succeeded"} {
		if types[want] == 0 {
			f.record(f.step("adminAudit", "", nil), answer{header: http.Header{}}, finding{op: "adminAudit", check: checkStatefulSteps,
				cause: "the throwaway user's trail, read page by page, lacks " + want})
		}
	}
	for _, typ := range []string{"user.disabled", "user.enabled"} {
		r := f.step("adminAudit", "", nil)
		r.query = [][2]string{{"type", typ}, {"user", name}, {"since", since.Format(time.RFC3339)}, {"limit", "1000"}}
		if a, ok := f.expect(checkStatefulSteps, r, 200); ok {
			var p struct{ Data []struct{ Type string } }
			if json.Unmarshal(a.body, &p) != nil || len(p.Data) != 1 {
				f.fail(checkStatefulSteps, r, a, "%d %s events, want 1", len(p.Data), typ)
			}
		}
	}
}

// keyRound lists the signing keys, rotates with the publish-ahead (the
// new key is published, not signing) and revokes that new key: it signed
// nothing, so the fuzzer's tokens stay good.
func (f *fuzzer) keyRound() {
	f.expect(checkStatefulSteps, f.step("adminListKeys", "", nil), 200)
	r := f.step("adminRotateKey", "", nil)
	a, ok := f.expect(checkStatefulSteps, r, 201)
	var k struct{ Kid, State string }
	if !ok || json.Unmarshal(a.body, &k) != nil || k.Kid == "" {
		return
	}
	if k.State != "published" {
		f.fail(checkStatefulSteps, r, a, "a key rotated without now is %s, want published", k.State)
	}
	r = f.step("adminListKeys", "", nil)
	if a, ok := f.expect(checkStatefulSteps, r, 200); ok {
		var list struct{ Data []struct{ Kid, State string } }
		_ = json.Unmarshal(a.body, &list)
		if !slices.ContainsFunc(list.Data, func(x struct{ Kid, State string }) bool { return x.Kid == k.Kid && x.State == "published" }) {
			f.fail(checkAvailability, r, a, "the rotated key is not listed as published")
		}
	}
	r = f.step("adminRevokeKey", "", nil)
	r.path = map[string]string{"kid": k.Kid}
	f.expect(checkStatefulSteps, r, 204)
}
