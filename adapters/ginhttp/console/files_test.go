package console

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// consoleSources reads the console's files from the source tree (not
// its Go file, which serves them).
func consoleSources(t *testing.T) map[string]string {
	t.Helper()
	paths, err := filepath.Glob("*")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no console files: %v", err)
	}
	out := map[string]string{}
	for _, p := range paths {
		if strings.HasSuffix(p, ".go") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = string(b)
	}
	return out
}

// The CSP forbids inline script and style; these patterns would be
// blocked (or, for innerHTML, would let an API answer inject markup).
var consoleForbidden = map[string]*regexp.Regexp{
	"an inline script":              regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`),
	"a style attribute or element":  regexp.MustCompile(`(?i)\sstyle\s*=|<style`),
	"an inline event handler":       regexp.MustCompile(`(?i)<[^>]+\son[a-z]+\s*=`),
	"innerHTML or outerHTML":        regexp.MustCompile(`\b(?:inner|outer)HTML\b|insertAdjacentHTML|document\.write`),
	"eval or new Function":          regexp.MustCompile(`\beval\s*\(|new\s+Function\s*\(`),
	"a style set from script":       regexp.MustCompile(`\.style\.|setAttribute\(\s*['"]style`),
	"an absolute URL (no CDN)":      regexp.MustCompile(`(?i)(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}/`),
	"a javascript: or data: script": regexp.MustCompile(`(?i)javascript:|data:text/javascript`),
}

// scriptTag finds script elements; each must load a file (src=).
var scriptTag = regexp.MustCompile(`(?i)<script\b[^>]*>`)

// scriptWithoutSrc returns the first script tag that has no src.
func scriptWithoutSrc(text string) string {
	for _, tag := range scriptTag.FindAllString(text, -1) {
		if !strings.Contains(tag, " src=") {
			return tag
		}
	}
	return ""
}

func TestConsoleSourcesKeepToTheirContentSecurityPolicy(t *testing.T) {
	t.Parallel()
	for name, text := range consoleSources(t) {
		for what, re := range consoleForbidden {
			if loc := re.FindStringIndex(text); loc != nil {
				t.Errorf("%s holds %s: %q", name, what, text[loc[0]:min(loc[1]+20, len(text))])
			}
		}
		if tag := scriptWithoutSrc(text); tag != "" {
			t.Errorf("%s holds a script without src: %q", name, tag)
		}
	}
}

func TestConsoleForbiddenPatternsCatchWhatTheyName(t *testing.T) {
	t.Parallel()
	for what, sample := range map[string]string{
		"an inline script":              `<script>alert(1)</script>`,
		"a style attribute or element":  `<p style="color:red">`,
		"an inline event handler":       `<button onclick="go()">`,
		"innerHTML or outerHTML":        `el.innerHTML = x`,
		"eval or new Function":          `eval(x)`,
		"a style set from script":       `el.style.color = 'red'`,
		"an absolute URL (no CDN)":      `import x from "https://cdn.example.com/x.js"`,
		"a javascript: or data: script": `<a href="javascript:go()">`,
	} {
		if !consoleForbidden[what].MatchString(sample) {
			t.Errorf("the check for %s misses %q", what, sample)
		}
	}
	if scriptWithoutSrc(`<script type="module"></script>`) == "" {
		t.Errorf("the script check misses a script without src")
	}
	if tag := scriptWithoutSrc(`<script type="module" src="app.js"></script>`); tag != "" {
		t.Errorf("the script check refuses a script with src: %q", tag)
	}
}

func TestConsoleModulesImportOnlyEmbeddedModules(t *testing.T) {
	t.Parallel()
	files := consoleSources(t)
	imports := regexp.MustCompile(`(?m)^\s*import\s[^'"]*['"]([^'"]+)['"]`)
	found := 0
	for name, text := range files {
		for _, m := range imports.FindAllStringSubmatch(text, -1) {
			found++
			target, ok := strings.CutPrefix(m[1], "./")
			if !ok || files[target] == "" {
				t.Errorf("%s imports %q, not a module of the console", name, m[1])
			}
		}
	}
	if found == 0 {
		t.Fatal("found no import at all: the check reads nothing")
	}
}
