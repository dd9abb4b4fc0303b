package e2e

import (
	"strings"
	"testing"

	"github.com/cachegate/cachegate/test/pgtest"
)

// Issue 26: `import` into a database that only `migrate` prepared works,
// and afterwards exactly one key signs: the archive's current key. The
// key `migrate` generated is retired (README, "Export and import"), and
// `--merge` never leaves two current keys either.
func TestImportAfterMigrateLeavesOneSigningKey(t *testing.T) {
	t.Parallel()
	src := newArchiveSite(t, "")
	src.cliAddUser(t, "alice", "correct horse")
	if r := src.cli(t, "", "migrate"); r.Code != 0 {
		t.Fatalf("migrate the source: %d %s", r.Code, r.Stderr)
	}
	exported := src.export(t, "src.jsonl")
	srcKey := siteCurrentKey(t, src)
	other := newArchiveSite(t, "")
	if r := other.cli(t, "", "migrate"); r.Code != 0 {
		t.Fatalf("migrate another source: %d %s", r.Code, r.Stderr)
	}
	otherExport := other.export(t, "other.jsonl")
	otherKey := siteCurrentKey(t, other)

	for _, c := range []struct{ name, db string }{{"SQLite", ""}, {"PostgreSQL", pgtest.New(t)}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			site := newArchiveSite(t, c.db)
			if r := site.cli(t, "", "migrate"); r.Code != 0 {
				t.Fatalf("migrate: %d %s", r.Code, r.Stderr)
			}
			migrated := siteCurrentKey(t, site)
			if r := site.importFile(t, exported); r.Code != 0 {
				t.Fatalf("import after migrate: status %d: %s", r.Code, r.Stderr)
			}
			if got := siteCurrentKey(t, site); got != srcKey {
				t.Errorf("after the import %s signs, want the archive's key %s", got, srcKey)
			}
			if st := siteKeys(t, site)[migrated]; st != "retired" {
				t.Errorf("the key migrate made is %q after the import, want retired", st)
			}
			if r := site.importFile(t, exported); r.Code != 1 || !strings.Contains(r.Stderr, "--merge") {
				t.Errorf("a second import without --merge: status %d, stderr %q; want the refusal", r.Code, r.Stderr)
			}
			if r := site.importFile(t, exported, "--merge"); r.Code != 0 {
				t.Fatalf("merge of the same archive: status %d: %s", r.Code, r.Stderr)
			}
			if got := siteCurrentKey(t, site); got != srcKey {
				t.Errorf("after merging the same archive %s signs, want %s", got, srcKey)
			}
			if r := site.importFile(t, otherExport, "--merge"); r.Code != 0 {
				t.Fatalf("merge of another archive: status %d: %s", r.Code, r.Stderr)
			}
			if got := siteCurrentKey(t, site); got != otherKey {
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

// siteCurrentKey returns the one current key; more or fewer fail t.
func siteCurrentKey(t *testing.T, s archiveSite) string {
	t.Helper()
	var current []string
	for kid, st := range siteKeys(t, s) {
		if st == "current" {
			current = append(current, kid)
		}
	}
	if len(current) != 1 {
		t.Fatalf("%d current signing keys %v, want exactly one", len(current), current)
	}
	return current[0]
}
