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

// FuzzReadRefreshToken holds the unchecked read to its port's promise
// (ports.RefreshTokenReader): it refuses only what RefreshToken refuses
// too, and reads what RefreshToken verifies as the same claims with the
// token's digest. Refresh answers 401 at once on a refused read, so a
// read stricter than the verifier would refuse a good token, and one
// that accepted garbage is harmless only because the store matches the
// digest.
func FuzzReadRefreshToken(f *testing.F) {
	envs := bothModes(f, nil)
	for _, e := range envs {
		tok := e.issue(f, e.claims(domain.RefreshToken, time.Hour))
		parts := strings.Split(tok, ".")
		f.Add(tok)
		f.Add(parts[0] + "." + parts[1] + ".")
		f.Add(parts[0] + "." + parts[1] + ".AAAA")
		f.Add(e.issue(f, e.claims(domain.AccessToken, time.Minute)))
	}
	for _, s := range []string{"", "a.b.c", "eyJhbGciOiJub25lIn0.e30."} {
		f.Add(s)
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, s string) {
		for _, e := range envs {
			read, rerr := e.tok.Verifier().ReadRefreshToken(ctx, s)
			verified, verr := e.tok.Verifier().RefreshToken(ctx, s)
			switch {
			case rerr != nil && !errors.Is(rerr, domain.ErrUnauthenticated):
				t.Fatalf("%s: read err = %v, want ErrUnauthenticated", e.name, rerr)
			case rerr != nil && verr == nil:
				t.Fatalf("%s: the read refused a token the verifier accepts: %v", e.name, rerr)
			case verr == nil:
				verified.Digest = domain.TokenDigest(s)
				if read != verified {
					t.Fatalf("%s: read %+v, want the verified claims with the digest %+v", e.name, read, verified)
				}
			case rerr == nil && read.Digest != domain.TokenDigest(s):
				t.Fatalf("%s: a read without the token's digest", e.name)
			}
		}
	})
}
