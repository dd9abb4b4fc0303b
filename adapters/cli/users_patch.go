package cli

import (
	"context"
	"fmt"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

var (
	usersDisableCommand = patchUserCommand("users disable",
		"disable a user and revoke every refresh family of it",
		application.UserPatch{Active: ptr(false)}, "user %s disabled\n")
	usersEnableCommand = patchUserCommand("users enable", "enable a disabled user",
		application.UserPatch{Active: ptr(true)}, "user %s enabled\n")
	usersAdminGrantCommand = patchUserCommand("users admin grant",
		"make a user an admin (the admin API, docs/admin.md)",
		application.UserPatch{Admin: ptr(true)}, "user %s is an admin\n")
	usersAdminRevokeCommand = patchUserCommand("users admin revoke",
		"take the admin role from a user; every replica refuses its admin requests within a second",
		application.UserPatch{Admin: ptr(false)}, "user %s is no longer an admin\n")
)

// patchUserCommand is a command `NAME` that applies patch to the user
// NAME as the system actor and prints done, formatted with the name.
func patchUserCommand(name, summary string, patch application.UserPatch, done string) Command {
	return Command{
		Name:     name,
		Synopsis: "NAME",
		Summary:  summary,
		Uses:     UsesStorage,
		Args:     1,
		Run: withServices(func(ctx context.Context, env *Env, s Services) error {
			u, err := s.Users.ByUsername(ctx, env.Args[0])
			if err != nil {
				return err
			}
			if _, err := s.Users.Patch(ctx, domain.System(), u.ID, patch); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, done, env.Args[0])
			return nil
		}),
	}
}

func ptr[T any](v T) *T { return &v }
