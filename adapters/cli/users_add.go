package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

var usersAddCommand = Command{
	Name:     "users add",
	Synopsis: "--username NAME --password-stdin [--inactive] [--admin]",
	Summary:  "create a user and print its id",
	Uses:     UsesStorage | UsesPasswords,
	Setup: func(fs *flag.FlagSet) RunFunc {
		username := fs.String("username", "", "the new user's `NAME`")
		passwordStdin := fs.Bool("password-stdin", false, "read the password from the first line of standard input")
		inactive := fs.Bool("inactive", false, "create the user disabled")
		admin := fs.Bool("admin", false, "make the user an admin (the admin API, docs/admin.md)")
		return func(ctx context.Context, env *Env) error {
			if *username == "" || !*passwordStdin {
				return usageErrorf("users add needs --username NAME and --password-stdin")
			}
			pw, err := readPassword(env.Stdin)
			if err != nil {
				return err
			}
			s, err := env.Services(ctx)
			if err != nil {
				return err
			}
			u, err := s.Users.Add(ctx, domain.System(), application.AddUserInput{Username: *username, Password: pw, Active: !*inactive, Admin: *admin})
			if err != nil {
				return err
			}
			fmt.Fprintln(env.Stdout, u.ID)
			return nil
		}
	},
}
