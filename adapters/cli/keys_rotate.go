package cli

import (
	"context"
	"fmt"
)

var keysRotateCommand = Command{
	Name:    "keys rotate",
	Summary: "make a new token signing key current",
	Uses:    UsesStorage | UsesKeys,
	Run: func(ctx context.Context, env *Env) error {
		s, err := env.Services(ctx)
		if err != nil {
			return err
		}
		kid, err := s.Keys.Rotate(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "new signing key %s is current; the previous key verifies access tokens for their lifetime and refresh tokens for theirs\n", kid)
		return nil
	},
}
