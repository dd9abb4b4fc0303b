package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// root is the repository, seen from this package.
const root = "../.."

// documents are the files whose links and section references are checked.
func documents(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md (%v)", err)
	}
	files := []string{"README.md", "ARCHITECTURE.md", "test/bench/README.md"}
	for _, d := range docs {
		rel, _ := filepath.Rel(root, d)
		files = append(files, filepath.ToSlash(rel))
	}
	return files
}

var (
	fence      = regexp.MustCompile("(?ms)^ *```.*?^ *```")
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
	heading    = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)
	mdLink     = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	sectionRef = regexp.MustCompile(`((?:[\w-]+/)*[\w-]+\.md|README)(?:'s)?,?\s+\(?"([^"]+)"`)
)

// prose is text without its fenced code blocks: a "# comment" there is
// not a heading, and a "](x)" not a link.
func prose(text string) string { return fence.ReplaceAllString(text, "") }

// slug is GitHub's anchor of a heading: lower case, punctuation but "-"
// and "_" dropped, spaces as "-".
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(codeSpan.ReplaceAllStringFunc(h, func(s string) string { return strings.Trim(s, "`") })) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// doc is one document's headings and anchors.
type doc struct {
	headings []string
	anchors  map[string]bool
}

type library map[string]*doc

// get reads the document at path (relative to the repository), or nil
// when there is none.
func (l library) get(t *testing.T, path string) *doc {
	t.Helper()
	if d, ok := l[path]; ok {
		return d
	}
	text, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		l[path] = nil
		return nil
	}
	d := &doc{anchors: map[string]bool{}}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(prose(string(text)), -1) {
		d.headings = append(d.headings, m[1])
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			d.anchors[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			d.anchors[s] = true
		}
		seen[s]++
	}
	l[path] = d
	return d
}

// hasSection reports whether d has a heading named sec, or one that
// starts with sec and goes on with ":" or " (" ("Listing" for "Listing:
// the query language").
func (d *doc) hasSection(sec string) bool {
	for _, h := range d.headings {
		if h == sec || strings.HasPrefix(h, sec+":") || strings.HasPrefix(h, sec+" (") {
			return true
		}
	}
	return false
}

// lineOf is the line number of offset i in text.
func lineOf(text string, i int) int { return strings.Count(text[:i], "\n") + 1 }

func TestEveryLinkOfTheDocumentsResolves(t *testing.T) {
	t.Parallel()
	lib := library{}
	checked := 0
	for _, file := range documents(t) {
		raw, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		// Code spans go too, but keep their length, so that line numbers hold.
		text := codeSpan.ReplaceAllStringFunc(prose(string(raw)), func(s string) string { return strings.Repeat(" ", len(s)) })
		for _, m := range mdLink.FindAllStringSubmatchIndex(text, -1) {
			target := text[m[2]:m[3]]
			if regexp.MustCompile(`^[a-z]+:`).MatchString(target) {
				continue // a URL: not the repository's to keep
			}
			checked++
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
			}
			if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
				t.Errorf("%s:%d: the link %q leads to no file (%s)", file, lineOf(text, m[0]), target, dest)
				continue
			}
			if anchor == "" || !strings.HasSuffix(dest, ".md") {
				continue
			}
			if d := lib.get(t, dest); d == nil || !d.anchors[anchor] {
				t.Errorf("%s:%d: the link %q names no heading of %s", file, lineOf(text, m[0]), target, dest)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d links checked: is the link pattern still right?", checked)
	}
}

// A section cited in prose, as in (docs/api.md, "Conventions") or the
// README's "Embedding", is a heading of that document.
func TestEverySectionTheDocumentsCiteExists(t *testing.T) {
	t.Parallel()
	lib := library{}
	checked := 0
	for _, file := range documents(t) {
		raw, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		for _, m := range sectionRef.FindAllStringSubmatchIndex(text, -1) {
			name, sec := text[m[2]:m[3]], strings.Join(strings.Fields(text[m[4]:m[5]]), " ")
			if name == "README" {
				name = "README.md"
			}
			d := lib.get(t, name)
			if d == nil {
				// Relative to the citing document (test/bench/README.md
				// citing its neighbours).
				name = filepath.ToSlash(filepath.Join(filepath.Dir(file), name))
				d = lib.get(t, name)
			}
			checked++
			switch {
			case d == nil:
				t.Errorf("%s:%d: cites %q in %s, which does not exist", file, lineOf(text, m[0]), sec, text[m[2]:m[3]])
			case !d.hasSection(sec):
				t.Errorf("%s:%d: cites %q, which is no heading of %s", file, lineOf(text, m[0]), sec, name)
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d section references checked: is the pattern still right?", checked)
	}
}

func TestSlugIsGitHubs(t *testing.T) {
	t.Parallel()
	for h, want := range map[string]string{
		"Listing: the CRUD query language": "listing-the-crud-query-language",
		"Tracing (OpenTelemetry)":          "tracing-opentelemetry",
		"Coming from Rockets":              "coming-from-rockets",
		"Change feed: `feedload`":          "change-feed-feedload",
		"PUT and refresh: chaining state":  "put-and-refresh-chaining-state",
		"Signing keys at rest":             "signing-keys-at-rest",
		"The change log's cost on writes":  "the-change-logs-cost-on-writes",
		"Deployment in detail: a, b and c": "deployment-in-detail-a-b-and-c",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}
