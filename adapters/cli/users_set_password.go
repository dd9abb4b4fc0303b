package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cachegate/cachegate/domain"
)

var usersSetPasswordCommand = Command{
	Name:     "users set-password",
	Synopsis: "NAME --password-stdin",
	Summary:  "replace a user's password",
	Uses:     UsesStorage | UsesPasswords,
	Args:     1,
	Setup: func(fs *flag.FlagSet) RunFunc {
		passwordStdin := fs.Bool("password-stdin", false, "read the password from the first line of standard input")
		return func(ctx context.Context, env *Env) error {
			if !*passwordStdin {
				return usageErrorf("users set-password needs --password-stdin")
			}
			pw, err := readPassword(env.Stdin)
			if err != nil {
				return err
			}
			s, err := env.Services(ctx)
			if err != nil {
				return err
			}
			name := env.Args[0]
			u, err := s.Users.ByUsername(ctx, name)
			if err != nil {
				return err
			}
			if err := s.Users.ResetPassword(ctx, domain.System(), u.ID, pw); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "password of %s changed\n", name)
			return nil
		}
	},
}

// readPassword reads the first line of r, without its line ending.
func readPassword(r io.Reader) (string, error) {
	line, err := bufio.NewReader(io.LimitReader(r, domain.MaxPasswordBytes+2)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the password from standard input: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("no password on standard input")
	}
	return line, nil
}
