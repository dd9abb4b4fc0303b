package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/test/pgtest"
)

// Issue 13: `cachegate export` and `cachegate import` move a database
// between SQLite and PostgreSQL without logging anyone out.

// archiveYAML has an owner-guarded entity and an authenticated one, so
// entries of two tables move, and tokens are needed to read them; reuse
// of a refresh token is never forgiven, so reuse detection shows.
const archiveYAML = `auth:
  refreshReuseGrace: "0"
cache:
  entities:
    userCache: {}
    orgCache: {table: org_entries}
  settings:
    assignments:
      user: {entityKey: userCache, policy: owner}
      org: {entityKey: orgCache, policy: authenticated}
`

// archiveSite is one database with the configuration above.
type archiveSite struct {
	dir, db string
}

func (s archiveSite) cli(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	return runCLI(t, s.dir, stdin, nil, append(args, "--database", s.db, "--config", filepath.Join(s.dir, "cachegate.yaml"))...)
}

func (s archiveSite) serve(t *testing.T) *server {
	t.Helper()
	return startServer(t, serverConfig{Dir: s.dir, YAML: archiveYAML, Args: []string{"--database", s.db}})
}

func newArchiveSite(t *testing.T, db string) archiveSite {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cachegate.yaml"), []byte(archiveYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	if db == "" {
		db = "sqlite:" + filepath.Join(dir, "cachegate.db")
	}
	return archiveSite{dir: dir, db: db}
}

func (s archiveSite) export(t *testing.T, name string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), name)
	r := s.cli(t, "", "export", "--out", out)
	if r.Code != 0 {
		t.Fatalf("export: status %d: %s", r.Code, r.Stderr)
	}
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("export file mode %v, want 0600", st.Mode().Perm())
	}
	return out
}

func (s archiveSite) importFile(t *testing.T, file string, args ...string) cliResult {
	t.Helper()
	return s.cli(t, "", append([]string{"import", "--in", file}, args...)...)
}

// records returns the lines of an export after its header.
func records(t *testing.T, file string) []string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if !strings.HasPrefix(lines[0], `{"format":"cachegate-export","version":2,`) {
		t.Fatalf("header %q", lines[0])
	}
	return lines[1:]
}

func TestExportImportSQLiteToPostgreSQLToSQLiteKeepsRowsSessionsAndETags(t *testing.T) {
	t.Parallel()
	src := newArchiveSite(t, "")
	alice := src.cliAddUser(t, "alice", "correct horse")
	s := src.serve(t)
	c := newClient()

	// Before the move: a session that has refreshed once (so it holds a
	// used token), entries of both tables, one deleted, some expiring
	// before the import.
	first := loginAt(t, c, s.URL, "alice", "correct horse")
	p := refreshPair(t, c, s.URL, first.Refresh)
	auth := []string{"Authorization", "Bearer " + p.Access}
	type kept struct{ url, etag, body string }
	var live []kept
	var expiring []string
	for i := range 30 {
		assignment, exp := "user", "null"
		if i%3 == 1 {
			assignment = "org"
		}
		if i%5 == 4 {
			exp = `"2s"`
		}
		data := fmt.Sprintf(`{"n": %d, "text": "caf\u00e9 <b>&</b>", "nested": [1, 2.50, null]}`, i)
		r := mustSend(t, c, http.MethodPost, s.URL+"/cache/"+assignment, body(fmt.Sprintf("k%d", i), "t", alice, data, exp), auth...).want(t, http.StatusCreated)
		url := s.URL + "/cache/" + assignment + "/" + r.entry(t).ID
		if i%7 == 6 {
			mustSend(t, c, http.MethodDelete, url, nil, auth...).want(t, http.StatusOK)
			continue
		}
		if i%4 == 0 { // a version above 1
			mustSend(t, c, http.MethodPatch, url, []byte(`{"data":{"patched":true}}`), auth...).want(t, http.StatusOK)
		}
		if exp != "null" {
			expiring = append(expiring, strings.TrimPrefix(url, s.URL))
			continue
		}
		g := mustSend(t, c, http.MethodGet, url, nil, auth...).want(t, http.StatusOK)
		live = append(live, kept{url: strings.TrimPrefix(url, s.URL), etag: g.Header.Get("ETag"), body: string(g.Body)})
	}
	sqliteExport := src.export(t, "from-sqlite.jsonl")
	time.Sleep(2500 * time.Millisecond) // the expiring entries expire before the import

	// SQLite → PostgreSQL → SQLite.
	pg := newArchiveSite(t, pgtest.New(t))
	if r := pg.importFile(t, sqliteExport); r.Code != 0 {
		t.Fatalf("import into PostgreSQL: status %d: %s", r.Code, r.Stderr)
	}
	pgExport := pg.export(t, "from-postgres.jsonl")
	back := newArchiveSite(t, "")
	if r := back.importFile(t, pgExport); r.Code != 0 {
		t.Fatalf("import back into SQLite: status %d: %s", r.Code, r.Stderr)
	}
	backExport := back.export(t, "back-in-sqlite.jsonl")
	if a, b := records(t, pgExport), records(t, backExport); strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("SQLite → PostgreSQL → SQLite changed rows:\n%s\nvs\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	// What PostgreSQL holds is the SQLite export less the expired entries.
	var want []string
	for _, line := range records(t, sqliteExport) {
		skip := false
		for _, e := range expiring {
			skip = skip || strings.Contains(line, `"id":"`+e[strings.LastIndexByte(e, '/')+1:]+`"`)
		}
		if !skip && !strings.HasPrefix(line, `{"kind":"end"`) {
			want = append(want, line)
		}
	}
	got := records(t, pgExport)
	if strings.Join(want, "\n") != strings.Join(got[:len(got)-1], "\n") {
		t.Errorf("PostgreSQL holds other rows than the SQLite export less %d expired entries:\n%s\nvs\n%s",
			len(expiring), strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
	if n := strings.Count(strings.Join(got, "\n"), `"kind":"entry"`); n != len(live) {
		t.Errorf("%d entries moved, want the %d live ones", n, len(live))
	}

	// On PostgreSQL: the tokens issued before the move work, ETags and
	// bodies are unchanged, expired entries are gone, reuse detection held.
	s.stop(t)
	ps := pg.serve(t)
	for _, k := range live {
		r := mustSend(t, c, http.MethodGet, ps.URL+k.url, nil, auth...)
		if r.Status != http.StatusOK || r.Header.Get("ETag") != k.etag || string(r.Body) != k.body {
			t.Errorf("GET %s after the move: %d ETag %s %s; want 200 ETag %s %s", k.url, r.Status, r.Header.Get("ETag"), short(r.Body), k.etag, k.body)
		}
	}
	for _, e := range expiring {
		if r := mustSend(t, c, http.MethodGet, ps.URL+e, nil, auth...); r.Status != http.StatusNotFound {
			t.Errorf("expired entry %s after the move: %d, want 404", e, r.Status)
		}
	}
	next := refreshPair(t, c, ps.URL, p.Refresh)
	mustSend(t, c, http.MethodGet, ps.URL+"/cache/user", nil, "Authorization", "Bearer "+next.Access).want(t, http.StatusOK)
	b, _ := json.Marshal(map[string]string{"refreshToken": first.Refresh})
	if r := mustSend(t, c, http.MethodPost, ps.URL+"/auth/refresh", b); r.Status != http.StatusUnauthorized {
		t.Errorf("a refresh token used before the move answered %d, want 401 (reuse detection)", r.Status)
	}
	loginAt(t, c, ps.URL, "alice", "correct horse") // the password hash moved
}

func TestImportRefusesWhatWouldLeaveTheTargetHalfDone(t *testing.T) {
	t.Parallel()
	src := newArchiveSite(t, "")
	alice := src.cliAddUser(t, "alice", "correct horse")
	s := src.serve(t)
	c := newClient()
	p := loginAt(t, c, s.URL, "alice", "correct horse")
	for i := range 5 {
		mustSend(t, c, http.MethodPost, s.URL+"/cache/user", body(fmt.Sprintf("k%d", i), "t", alice, `"v"`, "null"),
			"Authorization", "Bearer "+p.Access).want(t, http.StatusCreated)
	}
	good := src.export(t, "good.jsonl")
	lines := records(t, good)
	header := strings.Split(readFile(t, good), "\n")[0]

	t.Run("a corrupt line is refused with its number and nothing is imported", func(t *testing.T) {
		t.Parallel()
		bad := append([]string{header}, lines...)
		bad[5] = bad[5][:len(bad[5])/2] // line 6, cut in the middle
		file := writeLines(t, bad)
		target := newArchiveSite(t, "")
		r := target.importFile(t, file)
		if r.Code != 1 || !strings.Contains(r.Stderr, "line 6") || !strings.Contains(r.Stderr, "nothing was imported") {
			t.Fatalf("import of a corrupt file: status %d, stderr %q; want 1 naming line 6", r.Code, r.Stderr)
		}
		// Untouched: the good file goes into it without --merge.
		if r := target.importFile(t, good); r.Code != 0 {
			t.Fatalf("the target was not left empty: %d %s", r.Code, r.Stderr)
		}
	})
	// refused imports f and wants status 1 and every one of wants on
	// standard error; the target is left empty.
	refused := func(t *testing.T, f []string, wants ...string) {
		t.Helper()
		target := newArchiveSite(t, "")
		r := target.importFile(t, writeLines(t, append([]string{header}, f...)))
		for _, want := range append(wants, "nothing was imported") {
			if r.Code != 1 || !strings.Contains(r.Stderr, want) {
				t.Fatalf("import: status %d, stderr %.500q; want 1 and %q", r.Code, r.Stderr, want)
			}
		}
		if r := target.importFile(t, good); r.Code != 0 {
			t.Fatalf("the target was not left empty: %d %s", r.Code, r.Stderr)
		}
	}
	entry := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, `{"kind":"entry"`) })
	withData := func(data string) []string {
		f := slices.Clone(lines)
		f[entry] = strings.Replace(f[entry], `"data":"v"`, `"data":`+data, 1)
		if f[entry] == lines[entry] {
			t.Fatalf("no data to replace in %s", lines[entry])
		}
		return f
	}
	t.Run("an entry whose data is over --data-bytes is refused with its line number", func(t *testing.T) {
		t.Parallel()
		big := `"` + strings.Repeat("x", 256<<10) + `"`
		refused(t, withData(big), fmt.Sprintf("line %d: entry: ", entry+2), "data: is larger than the limit of 262144 bytes")
	})
	t.Run("a line longer than any record can take is refused by its number, unread", func(t *testing.T) {
		t.Parallel()
		huge := `"` + strings.Repeat("x", 8<<20) + `"`
		refused(t, withData(huge), fmt.Sprintf("line %d: longer than", entry+2), "--data-bytes")
	})
	t.Run("a user whose username holds a control character is refused with its line number", func(t *testing.T) {
		t.Parallel()
		f := slices.Clone(lines)
		f[0] = strings.Replace(f[0], `"username":"alice"`, `"username":"esc\u001b[2J"`, 1)
		if f[0] == lines[0] || !strings.HasPrefix(f[0], `{"kind":"user"`) {
			t.Fatalf("line 2 is not alice: %s", lines[0])
		}
		refused(t, f, "line 2: user: ", "username: must not contain control characters")
	})
	t.Run("a truncated file is refused", func(t *testing.T) {
		t.Parallel()
		file := writeLines(t, append([]string{header}, lines[:len(lines)-1]...))
		target := newArchiveSite(t, "")
		r := target.importFile(t, file)
		if r.Code != 1 || !strings.Contains(r.Stderr, "truncated") {
			t.Fatalf("import of a truncated file: status %d, stderr %q", r.Code, r.Stderr)
		}
		if r := target.importFile(t, good); r.Code != 0 {
			t.Fatalf("the target was not left empty: %d %s", r.Code, r.Stderr)
		}
	})
	t.Run("a file that is not an export is refused at its first line", func(t *testing.T) {
		t.Parallel()
		file := writeLines(t, []string{`{"hello":"world"}`})
		r := newArchiveSite(t, "").importFile(t, file)
		if r.Code != 1 || !strings.Contains(r.Stderr, "line 1") {
			t.Fatalf("status %d, stderr %q", r.Code, r.Stderr)
		}
	})
	t.Run("a database that is not empty is refused without --merge", func(t *testing.T) {
		t.Parallel()
		r := src.importFile(t, good)
		if r.Code != 1 || !strings.Contains(r.Stderr, "--merge") {
			t.Fatalf("import into the source itself: status %d, stderr %q", r.Code, r.Stderr)
		}
		r = src.importFile(t, good, "--merge")
		if r.Code != 0 || !strings.Contains(r.Stderr, "imported 0 users, 0 signing keys, 0 refresh families, 0 entries") {
			t.Fatalf("--merge of what is already there: status %d, stderr %q", r.Code, r.Stderr)
		}
	})
}

func (s archiveSite) cliAddUser(t *testing.T, username, password string) string {
	t.Helper()
	r := s.cli(t, password+"\n", "users", "add", "--username", username, "--password-stdin")
	if r.Code != 0 {
		t.Fatalf("users add: %d %s", r.Code, r.Stderr)
	}
	return strings.TrimSpace(r.Stdout)
}

// refreshPair exchanges a refresh token; it must succeed.
func refreshPair(t *testing.T, c *http.Client, base, refresh string) pair {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"refreshToken": refresh})
	r := mustSend(t, c, http.MethodPost, base+"/auth/refresh", b).want(t, http.StatusCreated)
	var p pair
	if err := json.Unmarshal(r.Body, &p); err != nil || p.Access == "" {
		t.Fatalf("refresh answered no pair: %v", err)
	}
	return p
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeLines(t *testing.T, lines []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "export.jsonl")
	var b bytes.Buffer
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
