package cli

import (
	"context"
	"fmt"

	"github.com/cachegate/cachegate/application"
)

var (
	usersAdminGrantCommand = setAdminCommand("grant", true,
		"make a user an admin (the admin API, docs/admin.md)")
	usersAdminRevokeCommand = setAdminCommand("revoke", false,
		"take the admin role from a user; every replica refuses its admin requests within a second")
)

// setAdminCommand is `users admin grant NAME` or `users admin revoke NAME`.
func setAdminCommand(verb string, admin bool, summary string) Command {
	return Command{
		Name:     "users admin " + verb,
		Synopsis: "NAME",
		Summary:  summary,
		Uses:     UsesStorage,
		Args:     1,
		Run: func(ctx context.Context, env *Env) error {
			s, err := env.Services(ctx)
			if err != nil {
				return err
			}
			name := env.Args[0]
			if err := s.patchUser(ctx, name, application.UserPatch{Admin: &admin}); err != nil {
				return err
			}
			if admin {
				fmt.Fprintf(env.Stdout, "user %s is an admin\n", name)
			} else {
				fmt.Fprintf(env.Stdout, "user %s is no longer an admin\n", name)
			}
			return nil
		},
	}
}
