package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"
)

var usersListCommand = Command{
	Name:    "users list",
	Summary: "list the users",
	Uses:    UsesStorage,
	Run: withServices(func(ctx context.Context, env *Env, s Services) error {
		users, err := s.Users.All(ctx)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tUSERNAME\tACTIVE\tADMIN\tCREATED")
		for _, u := range users {
			// Usernames are escaped (escapeText): one stored before control
			// characters were refused must not act on the terminal.
			fmt.Fprintf(w, "%s\t%s\t%t\t%t\t%s\n", escapeText(u.ID), escapeText(u.Username), u.Active, u.Admin, u.DateCreated.Format(time.RFC3339))
		}
		return w.Flush()
	}),
}
