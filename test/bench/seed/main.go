// Command seed prepares databases for the load benchmark (test/bench/run). It
// is a tool, not part of the service:
//
//	seed entries --database URL --assignee ID [--rows N] [--table user_cache] [--ids-out FILE] [--ids-max N]
//	seed createdb URL   creates a fresh PostgreSQL database beside URL's and prints its URL
//	seed dropdb URL     drops the database URL names
//	seed refreshtable URL   prints the rows and bytes of the refresh table
//
// entries writes N cache entries owned by one user straight into a
// migrated database through bunstore's repository (the same INSERT the
// service runs), in transactions of --batch rows, while the server is
// stopped: seeding a million entries through HTTP would take longer than
// the benchmark itself. It prints how long that took.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
}

// run dispatches on the subcommand in args[0].
func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("want a subcommand: entries, createdb, dropdb or refreshtable")
	}
	switch args[0] {
	case "entries":
		return seedEntries(ctx, args[1:])
	case "createdb":
		if len(args) != 2 {
			return fmt.Errorf("usage: seed createdb POSTGRES_URL")
		}
		url, err := createDatabase(ctx, args[1])
		if err != nil {
			return err
		}
		fmt.Println(url)
		return nil
	case "dropdb":
		if len(args) != 2 {
			return fmt.Errorf("usage: seed dropdb POSTGRES_URL")
		}
		return dropDatabase(ctx, args[1])
	case "refreshtable":
		if len(args) != 2 {
			return fmt.Errorf("usage: seed refreshtable DATABASE_URL")
		}
		return refreshTable(ctx, args[1])
	}
	return fmt.Errorf("unknown subcommand %q: want entries, createdb, dropdb or refreshtable", args[0])
}
