package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/cachegate/cachegate/application"
)

var importCommand = Command{
	Name:     "import",
	Synopsis: "[--in FILE] [--merge]",
	Summary:  "load an export into this database, all or nothing",
	Uses:     UsesStorage | UsesData,
	Setup: func(fs *flag.FlagSet) RunFunc {
		in := fs.String("in", "", "read `FILE` instead of standard input")
		merge := fs.Bool("merge", false, "allow a database that is not empty; rows already stored win")
		return func(ctx context.Context, env *Env) error {
			r, total := env.Stdin, int64(0)
			if *in != "" {
				f, err := os.Open(*in)
				if err != nil {
					return fmt.Errorf("import: %w", err)
				}
				defer f.Close()
				if st, err := f.Stat(); err == nil {
					total = st.Size()
				}
				r = f
			}
			// Read the header before touching the database: a file that
			// is not an export is refused at once.
			cr := &countingReader{r: r}
			ar, err := newArchiveReader(cr)
			if err != nil {
				return fmt.Errorf("import: %w", err)
			}
			st, err := env.Storage(ctx)
			if err != nil {
				return err
			}
			ar.limitData(st.Archive.MaxData())
			p := newProgress(env.Stderr, "import", total)
			n := 0
			counts, err := st.Archive.Import(ctx, application.ImportInput{Merge: *merge, Next: func() (application.ArchiveRecord, error) {
				rec, err := ar.Next()
				if err == nil {
					n++
					p.update(n, cr.n)
				}
				return rec, err
			}})
			if errors.Is(err, application.ErrTargetNotEmpty) {
				return fmt.Errorf("import: %w", err)
			}
			if err != nil {
				return fmt.Errorf("import: nothing was imported: %w", err)
			}
			p.done(n, cr.n)
			fmt.Fprintf(env.Stderr, "imported %d users, %d signing keys, %d refresh families, %d entries; %d records left behind (expired or already stored)\n",
				counts.Users, counts.SigningKeys, counts.Refresh, counts.Entries, counts.Skipped)
			return nil
		}
	},
}
