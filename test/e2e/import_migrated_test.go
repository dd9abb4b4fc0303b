package e2e

import (
	"strings"
	"testing"

	"github.com/cachegate/cachegate/test/pgtest"
)

// Issue 26: `import` into a database that only `migrate` prepared works,
// and afterwards exactly one key signs: the archive's. `migrate` creates
// no signing key (README, "Commands"), but a database may hold one before
// the import (a server started on it once, or `keys rotate`): that key is
// retired (README, "Export and import"), and `--merge` never leaves two
// signing keys either.
func TestImportAfterMigrateLeavesOneSigningKey(t *testing.T) {
	t.Parallel()
	// keyedSite is a migrated site with one user and one signing key.
	keyedSite := func(db string) archiveSite {
		s := newArchiveSite(t, db)
		if r := s.cli(t, "", "migrate"); r.Code != 0 {
			t.Fatalf("migrate: %d %s", r.Code, r.Stderr)
		}
		if r := s.cli(t, "", "keys", "rotate", "--now"); r.Code != 0 {
			t.Fatalf("keys rotate --now: %d %s", r.Code, r.Stderr)
		}
		return s
	}
	src := keyedSite("")
	src.cliAddUser(t, "alice", "correct horse")
	exported := src.export(t, "src.jsonl")
	srcKey := siteSigningKey(t, src)
	other := keyedSite("")
	otherExport := other.export(t, "other.jsonl")
	otherKey := siteSigningKey(t, other)

	for _, c := range []struct{ name, db string }{{"SQLite", ""}, {"PostgreSQL", pgtest.New(t)}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			bare := newArchiveSite(t, c.db)
			if r := bare.cli(t, "", "migrate"); r.Code != 0 {
				t.Fatalf("migrate: %d %s", r.Code, r.Stderr)
			}
			if r := bare.importFile(t, exported); r.Code != 0 {
				t.Fatalf("import after migrate: status %d: %s", r.Code, r.Stderr)
			}
			if got := siteSigningKey(t, bare); got != srcKey {
				t.Errorf("after the import %s signs, want the archive's key %s", got, srcKey)
			}
		})
		t.Run(c.name+" with a key of its own", func(t *testing.T) {
			t.Parallel()
			db := c.db
			if db != "" {
				db = pgtest.New(t)
			}
			site := keyedSite(db)
			own := siteSigningKey(t, site)
			if r := site.importFile(t, exported); r.Code != 0 {
				t.Fatalf("import after migrate: status %d: %s", r.Code, r.Stderr)
			}
			if got := siteSigningKey(t, site); got != srcKey {
				t.Errorf("after the import %s signs, want the archive's key %s", got, srcKey)
			}
			if st := siteKeys(t, site)[own]; st != "retired" {
				t.Errorf("the site's own key is %q after the import, want retired", st)
			}
			if r := site.importFile(t, exported); r.Code != 1 || !strings.Contains(r.Stderr, "--merge") {
				t.Errorf("a second import without --merge: status %d, stderr %q; want the refusal", r.Code, r.Stderr)
			}
			if r := site.importFile(t, exported, "--merge"); r.Code != 0 {
				t.Fatalf("merge of the same archive: status %d: %s", r.Code, r.Stderr)
			}
			if got := siteSigningKey(t, site); got != srcKey {
				t.Errorf("after merging the same archive %s signs, want %s", got, srcKey)
			}
			if r := site.importFile(t, otherExport, "--merge"); r.Code != 0 {
				t.Fatalf("merge of another archive: status %d: %s", r.Code, r.Stderr)
			}
			if got := siteSigningKey(t, site); got != otherKey {
				t.Errorf("after merging another archive %s signs, want its key %s", got, otherKey)
			}
		})
	}
}

// siteKeys runs `cachegate keys list` and returns each key's state.
func siteKeys(t *testing.T, s archiveSite) map[string]string {
	t.Helper()
	r := s.cli(t, "", "keys", "list")
	if r.Code != 0 {
		t.Fatalf("keys list: status %d, stderr %q", r.Code, r.Stderr)
	}
	out := map[string]string{}
	for _, row := range strings.Split(strings.TrimSpace(r.Stdout), "\n")[1:] {
		if f := strings.Fields(row); len(f) >= 2 {
			out[f[0]] = f[1]
		}
	}
	return out
}

// siteSigningKey returns the one signing key; more or fewer fail t.
func siteSigningKey(t *testing.T, s archiveSite) string {
	t.Helper()
	var signing []string
	for kid, st := range siteKeys(t, s) {
		if st == "signing" {
			signing = append(signing, kid)
		}
	}
	if len(signing) != 1 {
		t.Fatalf("%d signing keys %v, want exactly one", len(signing), signing)
	}
	return signing[0]
}
