package arch

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outsideDocs are documents that live beside the repository, not in it
// (the specification it was built from and the contract that refined it).
// A reader who clones the repository has neither, so no file of the
// repository may send them there: code comments, scripts, the OpenAPI
// document and the docs cite the repository's own documents instead
// (docs/api.md, README.md, ARCHITECTURE.md, docs/*.md; README.md says
// where each kind of reference lives). The names are built here so that
// this file does not mention them itself.
var outsideDocs = []string{"CONTRACT" + ".md", "SPEC" + ".md"}

// skippedDirs are not the repository's own text: Git's store, npm's
// installed packages, fixtures.
var skippedDirs = map[string]bool{".git": true, "node_modules": true, "testdata": true}

// maxScanned bounds the files read: anything larger is a build output or a
// database left by a run, not a document.
const maxScanned = 4 << 20

func TestNoFileCitesADocumentOutsideTheRepository(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root is not at %s: %v", root, err)
	}
	scanned := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skippedDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() > maxScanned {
			return nil
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		scanned++
		rel, _ := filepath.Rel(root, path)
		for n, line := range bytes.Split(text, []byte("\n")) {
			for _, name := range outsideDocs {
				if bytes.Contains(line, []byte(name)) {
					t.Errorf("%s:%d cites %s, which is not in the repository; cite docs/api.md, README.md, ARCHITECTURE.md or docs/*.md instead: %s",
						filepath.ToSlash(rel), n+1, name, strings.TrimSpace(string(line)))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The walk must have seen the repository, not an empty directory.
	if scanned < 100 {
		t.Fatalf("scanned %d files under %s; expected the whole repository", scanned, root)
	}
}
