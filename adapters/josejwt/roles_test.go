package josejwt_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// An admin's access tokens carry roles: ["admin"] for clients
// (docs/admin.md); other access tokens and every refresh token carry no
// roles claim at all.
func TestAccessTokensOfAnAdminCarryTheAdminRole(t *testing.T) {
	t.Parallel()
	for _, e := range bothModes(t, nil) {
		for _, c := range []struct {
			kind  domain.TokenKind
			admin bool
			want  string
		}{
			{domain.AccessToken, true, "[admin]"},
			{domain.AccessToken, false, "<nil>"},
			{domain.RefreshToken, true, "<nil>"},
		} {
			in := e.claims(c.kind, 15*time.Minute)
			in.Admin = c.admin
			got := fmt.Sprint(segment(t, e.issue(t, in), 1)["roles"])
			if got != c.want {
				t.Errorf("%s token, admin %v: roles %s, want %s", c.kind, c.admin, got, c.want)
			}
		}
	}
}
