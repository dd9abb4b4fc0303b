package josejwt_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

func FuzzVerifyAccessToken(f *testing.F) {
	envs := bothModes(f, nil)
	valid, validRefresh := make(map[string]bool), make(map[string]bool)
	for _, e := range envs {
		tok := e.issue(f, e.claims(domain.AccessToken, 10*time.Minute))
		valid[tok] = true
		parts := strings.Split(tok, ".")
		f.Add(tok)
		f.Add(tok[:len(tok)-1])
		f.Add(tok + "A")
		f.Add(parts[0] + "." + parts[1] + ".")
		f.Add(parts[0] + ".." + parts[2])
		refresh := e.issue(f, e.claims(domain.RefreshToken, time.Hour))
		validRefresh[refresh] = true
		f.Add(refresh)
	}
	for _, s := range []string{"", ".", "..", "...", "a.b.c", "{}", `{"payload":"e30","signatures":[]}`, "eyJhbGciOiJub25lIn0.e30."} {
		f.Add(s)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, s string) {
		for _, e := range envs {
			c, err := e.tok.Verifier().AccessToken(ctx, s)
			switch {
			case err == nil && !valid[s]:
				t.Fatalf("%s: accepted a token never issued: %+v", e.name, c)
			case err != nil && !errors.Is(err, domain.ErrUnauthenticated):
				t.Fatalf("%s: err = %v, want ErrUnauthenticated", e.name, err)
			case err != nil && len(s) > 8 && strings.Contains(err.Error(), s):
				t.Fatalf("%s: the error quotes the token", e.name)
			}
			if _, err := e.tok.Verifier().RefreshToken(ctx, s); err == nil && !validRefresh[s] {
				t.Fatalf("%s: accepted an access token or garbage as a refresh token", e.name)
			}
		}
	})
}
