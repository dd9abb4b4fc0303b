package e2e

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

// Usernames holding control characters are refused by `users add`, and
// `users list` prints one stored before that rule with its control
// characters escaped as `audit` escapes them (README.md, "Commands").
func TestUsersRefusesAndEscapesControlCharactersInUsernames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const password = "first-Secret-9431"
	if r := runCLI(t, dir, password+"\n", nil, "users", "add", "--username", "alice", "--password-stdin"); r.Code != 0 {
		t.Fatalf("users add alice: %d %s", r.Code, r.Stderr)
	}
	for _, name := range []string{"ctl\nname", "esc\x1b[2J", "csi\u009b2J"} {
		r := runCLI(t, dir, password+"\n", nil, "users", "add", "--username", name, "--password-stdin")
		if r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, "username: must not contain control characters") {
			t.Errorf("users add %q: status %d, stdout %q, stderr %q; want 1 and the username refused", name, r.Code, r.Stdout, r.Stderr)
		}
	}

	// Rows stored before the rule: copies of alice's row under bad names.
	db, err := sql.Open("sqlite", filepath.Join(dir, "cachegate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i, name := range []string{"ctl\nname", "esc\x1b[2J"} {
		for _, q := range []string{
			"CREATE TEMP TABLE copy AS SELECT * FROM users WHERE username = 'alice'",
			"UPDATE copy SET id = '0190a000-0000-7000-8000-00000000000" + string(rune('1'+i)) + "', username = ?, username_norm = ?",
			"INSERT INTO users SELECT * FROM copy",
			"DROP TABLE copy",
		} {
			args := []any{}
			if strings.HasPrefix(q, "UPDATE") {
				args = []any{name, name}
			}
			if _, err := db.Exec(q, args...); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	r := runCLI(t, dir, "", nil, "users", "list")
	if r.Code != 0 {
		t.Fatalf("users list: %d %s", r.Code, r.Stderr)
	}
	if strings.ContainsAny(r.Stdout, "\x1b\u009b") || strings.Count(r.Stdout, "\n") != 4 {
		t.Errorf("users list printed a control character or broke a line:\n%q", r.Stdout)
	}
	for _, want := range []string{`ctl\nname`, `esc\x1b[2J`} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("users list lacks %s escaped as %q:\n%s", want, want, r.Stdout)
		}
	}
}
