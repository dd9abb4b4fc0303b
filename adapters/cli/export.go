package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cachegate/cachegate/application"
)

var exportCommand = Command{
	Name:     "export",
	Synopsis: "[--out FILE]",
	Summary:  "write users, signing keys, sessions and live entries as JSON Lines",
	Uses:     UsesStorage,
	Setup: func(fs *flag.FlagSet) RunFunc {
		out := fs.String("out", "", "write to `FILE` (created with mode 0600, replaced only once complete) instead of standard output")
		return func(ctx context.Context, env *Env) error {
			st, err := env.Storage(ctx)
			if err != nil {
				return err
			}
			if *out == "" {
				return export(ctx, st.Archive, env.Stdout, env.Stderr)
			}
			return exportToFile(ctx, st.Archive, *out, env.Stderr)
		}
	},
}

// exportToFile writes the export to a temporary file beside path, mode
// 0600 (it holds password hashes and private signing keys), and renames it
// to path once complete and synced: path never holds half an export.
func exportToFile(ctx context.Context, a *application.Archive, path string, stderr io.Writer) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after the rename there is nothing left to remove
	defer f.Close()      // on an early return; after the Close below it does nothing
	if err := f.Chmod(0o600); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := export(ctx, a, f, stderr); err != nil {
		return err
	}
	for _, step := range []func() error{f.Sync, f.Close, func() error { return os.Rename(tmp, path) }} {
		if err := step(); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	return nil
}

func export(ctx context.Context, a *application.Archive, w io.Writer, stderr io.Writer) error {
	cw := &countingWriter{w: w}
	aw, err := newArchiveWriter(cw, time.Now())
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	p := newProgress(stderr, "export", 0)
	n := 0
	counts, err := a.Export(ctx, func(r application.ArchiveRecord) error {
		n++
		p.update(n, cw.n)
		return aw.record(r)
	})
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := aw.end(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	p.done(n, cw.n)
	fmt.Fprintf(stderr, "exported %d users, %d signing keys, %d refresh families, %d entries\n",
		counts.Users, counts.SigningKeys, counts.Refresh, counts.Entries)
	return nil
}
