package cli

import (
	"context"
	"fmt"
)

var migrateCommand = Command{
	Name:    "migrate",
	Summary: "apply pending schema migrations and exit",
	Uses:    UsesStorage,
	Run: func(ctx context.Context, env *Env) error {
		// Starting the core opens the store, which migrates it.
		if _, err := env.Services(ctx); err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, "migrations applied")
		return nil
	},
}
