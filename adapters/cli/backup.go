package cli

import (
	"context"
	"flag"
	"fmt"
)

var backupCommand = Command{
	Name:     "backup",
	Synopsis: "--out FILE",
	Summary:  "copy a running SQLite database consistently to a new file",
	Uses:     UsesStorage,
	Setup: func(fs *flag.FlagSet) RunFunc {
		out := fs.String("out", "", "the new `FILE` (must not exist)")
		return func(ctx context.Context, env *Env) error {
			if *out == "" {
				return usageErrorf("backup needs --out FILE")
			}
			st, err := env.Storage(ctx)
			if err != nil {
				return err
			}
			if err := st.Backup(ctx, *out); err != nil {
				return fmt.Errorf("backup: %w", err)
			}
			fmt.Fprintf(env.Stdout, "backup written to %s\n", *out)
			return nil
		}
	},
}
