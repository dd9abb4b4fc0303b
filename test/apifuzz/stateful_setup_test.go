package apifuzz_test

import "encoding/json"

// firstAdmin makes the fuzzer's admin as a newcomer makes the first one
// (docs/admin.md, "The first admin"): the set-up link's token with the
// admin's username and password, 201 User, active and an admin. The link
// is then spent: its token again is 403 SETUP_LINK_USED. Without the
// admin the run cannot go on.
func (f *fuzzer) firstAdmin() {
	r := f.step("setUpFirstAdmin", "", map[string]string{"token": f.tgt.setupToken, "username": adminUsername, "password": adminPassword})
	a, ok := f.expect(checkStatefulSteps, r, 201)
	var u struct {
		ID, Username  string
		Active, Admin bool
	}
	if !ok || json.Unmarshal(a.body, &u) != nil || u.ID == "" {
		f.report(*seedFlag, 0)
		f.t.Fatal("the set-up link did not make the fuzzer's admin")
	}
	if u.Username != adminUsername || !u.Active || !u.Admin {
		f.fail(checkStatefulSteps, r, a, "the set-up link made %q, active %t, admin %t; want %q, an active admin", u.Username, u.Active, u.Admin, adminUsername)
	}
	f.st.adminID = u.ID
	pw := "pw-" + f.plain(12)
	f.red.add(pw, "<a throwaway user's password>")
	r = f.step("setUpFirstAdmin", "", map[string]string{"token": f.tgt.setupToken, "username": "fz-" + f.plain(10), "password": pw})
	if a, ok := f.expect(checkUseAfterFree, r, 403); ok && errorCode(a) != "SETUP_LINK_USED" {
		f.fail(checkUseAfterFree, r, a, "the spent link's token again is %s, want SETUP_LINK_USED", errorCode(a))
	}
}
