package cli

import (
	"context"
	"fmt"

	"github.com/cachegate/cachegate/application"
)

var (
	usersDisableCommand = setActiveCommand("disable", false,
		"disable a user and revoke every refresh family of it")
	usersEnableCommand = setActiveCommand("enable", true, "enable a disabled user")
)

// setActiveCommand is `users disable NAME` or `users enable NAME`.
func setActiveCommand(verb string, active bool, summary string) Command {
	return Command{
		Name:     "users " + verb,
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
			if err := s.patchUser(ctx, name, application.UserPatch{Active: &active}); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "user %s %sd\n", name, verb)
			return nil
		},
	}
}
