package apifuzz_test

import (
	"encoding/base64"
	"testing"
)

// The admin API's findings of the fuzz, asked again on purpose so that
// no seed is needed to see them fixed: each answer must be the status
// given, and pass every check of the fuzz, on SQLite and on PostgreSQL.
func TestTheAdminFindingsStayFixed(t *testing.T) {
	t.Parallel()
	t.Run("SQLite", func(t *testing.T) {
		t.Parallel()
		adminFindingsStayFixed(t, startTarget(t))
	})
	t.Run("PostgreSQL", func(t *testing.T) {
		t.Parallel()
		adminFindingsStayFixed(t, startTarget(t, onPostgres(t)))
	})
}

func adminFindingsStayFixed(t *testing.T, tgt *target) {
	f := newFuzzer(t, tgt, *seedFlag)
	f.firstAdmin()
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
		// since and until are date-times of the list query language
		// (docs/admin.md, "Audit trail"): one the document admits but
		// that is in 1 BC once in UTC (0000-12-31T00:01:00Z) is refused,
		// as the lists refuse it. A cursor of a time before AD 1 reached
		// PostgreSQL as the literal "0000-12-31 …", which it refuses
		// (500; 200 on SQLite): every event is after it.
		{"an audit since in 1 BC in UTC is refused", audit("since", "0001-01-01T00:00:00+23:59"), 400},
		{"an audit until in 1 BC in UTC is refused", audit("until", "0001-01-01T00:00:00+23:59"), 400},
		{"an audit cursor in 1 BC is taken", audit("before", cursor("-62135596800000001")), 200},
		{"an audit cursor before 4713 BC is taken", audit("before", cursor("-9223372036854775808")), 200},
	} {
		if _, ok := f.expect(checkStatefulSteps, tc.r, tc.want); !ok {
			t.Errorf("%s: not answered %d", tc.name, tc.want)
		}
	}
	f.report(*seedFlag, 0)
}

// cursor is an audit cursor of the time micros microseconds after the Unix
// epoch, made as the server makes them (adapters/ginhttp/admin_audit.go).
func cursor(micros string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(micros + ".0190a000-0000-7000-8000-00000000f00d"))
}
