package arch

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/cachegate/cachegate"

// layer names the part of the house a package directory (relative to the
// module root, slash-separated) belongs to, and for an adapter its name.
func layer(dir string) (name, adapter string) {
	first, rest, _ := strings.Cut(dir, "/")
	switch first {
	case "domain", "ports", "application", "bootstrap", "cmd", "test":
		return first, ""
	case "adapters":
		a, _, _ := strings.Cut(rest, "/")
		return "adapters", a
	}
	return "", ""
}

// violation says why the package in dir may not import path, or "" when
// it may. The table is ARCHITECTURE.md's.
func violation(dir, path string) string {
	stdlib := !strings.Contains(strings.SplitN(path, "/", 2)[0], ".")
	inModule := path == module || strings.HasPrefix(path, module+"/")
	target := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
	to, toAdapter := layer(target)
	from, fromAdapter := layer(dir)
	switch from {
	case "domain":
		if !stdlib && !(inModule && to == "domain") {
			return "domain imports the standard library only"
		}
	case "ports":
		if !stdlib && !(inModule && (to == "domain" || to == "ports")) {
			return "ports imports domain and the standard library only"
		}
	case "application":
		if !stdlib && !(inModule && (to == "domain" || to == "ports" || to == "application")) {
			return "application imports domain, ports and the standard library only"
		}
	case "adapters":
		if inModule {
			switch to {
			case "bootstrap", "cmd", "test":
				return "an adapter never imports " + to
			case "adapters":
				if toAdapter != fromAdapter {
					return "one adapter never imports another"
				}
			}
		}
	case "bootstrap":
		if inModule && (to == "cmd" || to == "test") {
			return "bootstrap never imports " + to
		}
	case "cmd":
		if !stdlib && !(inModule && to == "bootstrap" && target == "bootstrap") {
			return "cmd imports bootstrap and the standard library only"
		}
	}
	return ""
}

// TestDependencyRule reads the imports of every non-test Go file of the
// module, whatever its build constraints, and checks each against the rule.
func TestDependencyRule(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	fset := token.NewFileSet()
	var problems []string
	files := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// A nested module (go.mod of its own) and hidden or
			// generated folders are not part of this module.
			name := d.Name()
			if p != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "out") {
				return filepath.SkipDir
			}
			if p != root {
				if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if why := violation(rel, path); why != "" {
				problems = append(problems, rel+"/"+filepath.Base(p)+" imports "+path+": "+why)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read only %d Go files under %s; is this the module root?", files, root)
	}
	sort.Strings(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

// TestViolation pins the table itself: each rule refuses what it must.
func TestViolation(t *testing.T) {
	t.Parallel()
	cases := []struct {
		dir, path string
		bad       bool
	}{
		{"domain", "time", false},
		{"domain", "github.com/google/uuid", true},
		{"domain", module + "/ports", true},
		{"ports", module + "/domain", false},
		{"ports", module + "/application", true},
		{"application", module + "/ports", false},
		{"application", module + "/adapters/memstore", true},
		{"application", "github.com/gin-gonic/gin", true},
		{"application/background", module + "/application", false},
		{"application/background", module + "/ports", false},
		{"application/background", module + "/adapters/bunstore", true},
		{"application/background", "go.uber.org/fx", true},
		{"adapters/ginhttp", "github.com/gin-gonic/gin", false},
		{"adapters/ginhttp", module + "/application", false},
		{"adapters/ginhttp", module + "/adapters/bunstore", true},
		{"adapters/bunstore/internal/x", module + "/adapters/bunstore", false},
		{"adapters/cli", module + "/bootstrap", true},
		{"adapters/cli", module + "/test/pgtest", true},
		{"bootstrap/authfx", module + "/adapters/josejwt", false},
		{"bootstrap", module + "/cmd/cachegate", true},
		{"bootstrap", module + "/test/contract", true},
		{"cmd/cachegate", module + "/bootstrap", false},
		{"cmd/cachegate", module + "/bootstrap/config", true},
		{"cmd/cachegate", module + "/adapters/ginhttp", true},
		{"cmd/cachegate", "os", false},
		{"test/e2e", module + "/adapters/bunstore", false},
	}
	for _, c := range cases {
		if got := violation(c.dir, c.path) != ""; got != c.bad {
			t.Errorf("violation(%q, %q) = %v, want %v", c.dir, c.path, got, c.bad)
		}
	}
}
