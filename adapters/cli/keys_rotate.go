package cli

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

var keysRotateCommand = Command{
	Name:     "keys rotate",
	Synopsis: "[--now]",
	Summary: "add a new token signing key: published in the JWKS at once, signing after --key-publish-ahead " +
		"(with --now: at once)",
	Uses: UsesStorage | UsesKeys,
	Setup: func(fs *flag.FlagSet) RunFunc {
		now := fs.Bool("now", false, "sign with the new key at once (emergencies: clients that cached the JWKS refuse its tokens until they fetch it again)")
		return withServices(func(ctx context.Context, env *Env, s Services) error {
			k, err := s.Keys.Rotate(ctx, domain.System(), application.RotateKeyInput{Now: *now})
			if err != nil {
				return err
			}
			if *now {
				fmt.Fprintf(env.Stdout, "new signing key %s is current; the previous key verifies access tokens for their lifetime and refresh tokens for theirs\n", k.ID)
				return nil
			}
			fmt.Fprintf(env.Stdout, "new signing key %s is published; servers sign with it from %s, the previous key until then; "+
				"the previous key then verifies access tokens for their lifetime and refresh tokens for theirs\n",
				k.ID, k.SignsFrom.UTC().Format(time.RFC3339))
			return nil
		})
	},
}
