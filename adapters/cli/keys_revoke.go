package cli

import (
	"context"
	"fmt"

	"github.com/cachegate/cachegate/domain"
)

var keysRevokeCommand = Command{
	Name:     "keys revoke",
	Synopsis: "KID",
	Summary: "revoke a signing key: every server refuses its tokens within a second (a new key is made current first when KID signs; a published KID is only withdrawn); " +
		`"--" before KID stays accepted (no generated kid begins with "-")`,
	Uses: UsesStorage | UsesKeys,
	Args: 1,
	Run: withServices(func(ctx context.Context, env *Env, s Services) error {
		kid := env.Args[0]
		if err := s.Keys.Revoke(ctx, domain.System(), kid); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "signing key %s revoked; servers refuse its tokens within a second\n", kid)
		return nil
	}),
}
