package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/cachegate/cachegate/application"
)

var usersAddCommand = Command{
	Name:     "users add",
	Synopsis: "--username NAME --password-stdin [--inactive]",
	Summary:  "create a user and print its id",
	Uses:     UsesStorage | UsesPasswords,
	Setup: func(fs *flag.FlagSet) RunFunc {
		username := fs.String("username", "", "the new user's `NAME`")
		passwordStdin := fs.Bool("password-stdin", false, "read the password from the first line of standard input")
		inactive := fs.Bool("inactive", false, "create the user disabled")
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
			u, err := s.Users.Add(ctx, application.AddUserInput{Username: *username, Password: pw, Active: !*inactive})
			if err != nil {
				return err
			}
			fmt.Fprintln(env.Stdout, u.ID)
			return nil
		}
	},
}
