package e2e

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Issue 25: `keys rotate` publishes the new key before it signs, `keys
// rotate --now` signs at once, and `keys list` shows each key's state.
func TestKeysRotatePublishesAheadAndKeysListShowsTheStates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b := &authBinary{dir: dir, dbURL: "sqlite:" + filepath.Join(dir, "keys.db")}
	rotate := func(args ...string) string {
		t.Helper()
		r := b.cli(t, "", append([]string{"keys", "rotate"}, args...)...)
		m := rotatedAnyKid.FindStringSubmatch(r.Stdout)
		if r.Code != 0 || m == nil {
			t.Fatalf("keys rotate %s: status %d, stdout %q, stderr %q", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		}
		return m[1]
	}
	first := rotate("--now") // the first command creates a key; --now replaces it at once
	if got := keysList(t, b); len(got) != 2 || got[0] != first+" signing" || !strings.HasSuffix(got[1], " retired") {
		t.Fatalf("keys list after keys rotate --now = %q, want %s signing and a retired key", got, first)
	}
	published := rotate()
	want := []string{published + " published", first + " signing"}
	if got := keysList(t, b); len(got) != 3 || !slices.Equal(got[:2], want) {
		t.Errorf("keys list after keys rotate = %q, want %q first", got, want)
	}
	now := rotate("--now")
	want = []string{now + " signing", published + " retired", first + " retired"}
	if got := keysList(t, b); len(got) != 4 || !slices.Equal(got[:3], want) {
		t.Errorf("keys list after keys rotate --now = %q, want %q first", got, want)
	}
}
