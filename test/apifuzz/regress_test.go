package apifuzz_test

import (
	"testing"
)

// The admin API's findings of the fuzz, asked again on purpose so that
// no seed is needed to see them fixed: each answer must be the status
// given, and pass every check of the fuzz.
func TestTheAdminFindingsStayFixed(t *testing.T) {
	t.Parallel()
	f := newFuzzer(t, startTarget(t), *seedFlag)
	f.login()
	f.adminLogin()
	raw := func(opID, id, body string) *request {
		r := f.step(opID, id, nil)
		r.body, r.contentType, r.hasBody = []byte(body), "application/json", true
		return r
	}
	audit := func(name, value string) *request {
		r := f.step("adminAudit", "", nil)
		r.query = [][2]string{{name, value}}
		return r
	}
	for _, tc := range []struct {
		name string
		r    *request
		want int
	}{
		// A NUL reached SQLite inside the statement (500): the route
		// refuses it now, as its document says (and the store would
		// select nothing).
		{"an audit address with a NUL is refused", audit("address", "a\x00b"), 400},
		{"an audit username with a NUL is refused", audit("user", "a\x00b"), 400},
		// null was taken for false or for absent (201, 200): no member
		// of the admin bodies is nullable.
		{"a null admin flag is refused", raw("adminAddUser", "", `{"username":"nullflag","password":"long enough","admin":null}`), 400},
		{"a null patch body is refused", raw("adminPatchUser", f.tgt.userID, `null`), 400},
		{"a null patch member is refused", raw("adminPatchUser", f.tgt.userID, `{"active":null}`), 400},
		{"a null rotate body is refused", raw("adminRotateKey", "", `null`), 400},
		{"a null current password is refused", raw("changePassword", "", `{"currentPassword":null,"newPassword":"long enough"}`), 400},
	} {
		if _, ok := f.expect(checkStatefulSteps, tc.r, tc.want); !ok {
			t.Errorf("%s: not answered %d", tc.name, tc.want)
		}
	}
	f.report(*seedFlag, 0)
}
