package josejwt_test

import (
	"context"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/domain"
)

func benchEnvs(b *testing.B, cacheSize int) []*env {
	return bothModes(b, func(o *josejwt.Options) { o.VerifyCacheSize = cacheSize })
}

func BenchmarkSign(b *testing.B) {
	ctx := context.Background()
	for _, e := range benchEnvs(b, 0) {
		c := e.claims(domain.AccessToken, 15*time.Minute)
		b.Run(e.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.tok.Issuer().AccessToken(ctx, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVerify measures access-token verification of one repeated
// token, the guard's common case, with the verify cache and without.
func BenchmarkVerify(b *testing.B) {
	ctx := context.Background()
	for _, mode := range []struct {
		name string
		size int
	}{{"cache", 0}, {"nocache", -1}} {
		for _, e := range benchEnvs(b, mode.size) {
			tok := e.issue(b, e.claims(domain.AccessToken, 15*time.Minute))
			b.Run(e.name+"/"+mode.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := e.tok.Verifier().AccessToken(ctx, tok); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(e.name+"/"+mode.name+"/parallel", func(b *testing.B) {
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := e.tok.Verifier().AccessToken(ctx, tok); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}

// BenchmarkVerifyGarbage measures how cheaply junk is refused.
func BenchmarkVerifyGarbage(b *testing.B) {
	ctx := context.Background()
	e := newEdDSA(b, nil)
	b.ReportAllocs()
	for b.Loop() {
		_, _ = e.tok.Verifier().AccessToken(ctx, "eyJhbGciOiJFZERTQSJ9.e30.c2ln")
	}
}

// BenchmarkReadRefreshToken measures the unchecked read a refresh starts
// with (ports.RefreshTokenReader).
func BenchmarkReadRefreshToken(b *testing.B) {
	ctx := context.Background()
	for _, e := range benchEnvs(b, 0) {
		tok := e.issue(b, e.claims(domain.RefreshToken, time.Hour))
		b.Run(e.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.tok.Verifier().ReadRefreshToken(ctx, tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
