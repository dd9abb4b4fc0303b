package e2e

import (
	"strings"
	"testing"
)

// TestAFailedTestsServerLogHoldsNoSetUpToken: the server log a failed
// test prints keeps the set-up line but not the link's token.
func TestAFailedTestsServerLogHoldsNoSetUpToken(t *testing.T) {
	t.Parallel()
	const token = "XSZcSDNdRGxBszMcGt1py73C5cOpnMZ_5wdYabD9H0E"
	l := newLogBuffer()
	_, _ = l.Write([]byte(`level=INFO msg="or open this one-time set-up link" link="http://127.0.0.1:1/console/setup#token=` + token + `" expires=x` + "\n"))
	view, _ := l.failureView()
	if strings.Contains(view, token) || !strings.Contains(view, "one-time set-up link") {
		t.Fatalf("failure view = %q, want the line without its token", view)
	}
}
