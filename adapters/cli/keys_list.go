package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"
)

var keysListCommand = Command{
	Name: "keys list",
	Summary: "list the token signing keys: id, state (published: in the JWKS, not signing yet; signing; " +
		"retired: verifying until its tokens expire; revoked) and dates",
	Uses: UsesStorage | UsesKeys,
	Run: withServices(func(ctx context.Context, env *Env, s Services) error {
		keys, err := s.Keys.List(ctx)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(w, "KID\tSTATE\tCREATED\tSIGNS-FROM\tRETIRED\tREVOKED")
		for _, k := range keys {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.State, k.DateCreated.Format(time.RFC3339),
				k.Activation().Format(time.RFC3339), optionalTime(k.RetiredAt), optionalTime(k.RevokedAt))
		}
		return w.Flush()
	}),
}

// optionalTime formats t in RFC 3339, or "-" when unset.
func optionalTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.RFC3339)
}
