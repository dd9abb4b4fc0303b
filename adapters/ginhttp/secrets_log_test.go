package ginhttp_test

import (
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/adapters/ginhttp"
)

// TestRequestLogsNeverHoldTokens pins, in the package that writes the
// access and error lines, that no line holds a bearer token, whether it
// came in the Authorization header, as the events route's access_token
// parameter (README.md, "Change feed") or in any other query parameter,
// good or refused, at debug level.
func TestRequestLogsNeverHoldTokens(t *testing.T) {
	t.Parallel()
	logs := &lockedBuffer{}
	f := newFixture(t, func(o *ginhttp.Options) {
		o.Authenticator, o.EnableGuards = fakeAuth{}, true
		o.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	base := f.listen(t)
	good := "good-" + alice
	const refused = "refused-Tok3n.with.segments"
	const inQuery = "query-Tok3n.abc.def"
	for _, r := range []struct {
		path, auth string
		want       int
	}{
		{"/cache/mine?assignee.id=" + alice + "&token=" + inQuery, good, http.StatusBadRequest},
		{"/cache/mine?assignee.id=" + alice, good, http.StatusOK},
		{"/cache/mine", refused, http.StatusUnauthorized},
		{"/cache/mine/events?access_token=" + refused, "", http.StatusUnauthorized},
		{"/cache/mine?access_token=" + inQuery, "", http.StatusUnauthorized},
	} {
		var hdr []string
		if r.auth != "" {
			hdr = []string{"Authorization", "Bearer " + r.auth}
		}
		if code, _, body := do(t, http.MethodGet, base+r.path, "", hdr...); code != r.want {
			t.Fatalf("GET %s: %d, want %d: %s", r.path, code, r.want, body)
		}
	}
	out := logs.String()
	if strings.Count(out, `"msg":"request"`) < 5 {
		t.Fatalf("the log does not show the five requests; the test would prove nothing:\n%.2000s", out)
	}
	for name, secret := range map[string]string{"the good token": good, "the refused token": refused, "the token in the query": inQuery} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds %s", name)
		}
	}
	if strings.Contains(strings.ToLower(out), "bearer ") {
		t.Error("the log holds an Authorization header")
	}
}
