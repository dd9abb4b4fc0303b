package josejwt

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Defaults and limits of Options.
const (
	DefaultIssuer   = "cachegate"
	DefaultAudience = "cachegate"
	// DefaultClientID is the client_id claim of access tokens (RFC 9068).
	DefaultClientID       = "cachegate"
	DefaultLeeway         = 5 * time.Second
	MaxLeeway             = 5 * time.Second
	DefaultMaxTokenTTL    = 30 * domain.Day
	DefaultAccessTokenTTL = 15 * time.Minute
	// DefaultKeyReload is how often the keys are read again in full
	// (erasing the private halves of retired keys on the way). A change
	// to the stored keys reaches a process sooner: KeepLoaded looks for
	// one every KeyPoll.
	DefaultKeyReload       = 30 * time.Second
	DefaultVerifyCacheSize = 10000
	// DefaultKeyPublishAhead is twice the JWKS route's Cache-Control
	// max-age (domain.KeySetMaxAge): a client caching the key set for its
	// max-age, or refetching it on an unknown kid, holds a rotated key
	// before the first token it signs (README.md, "Signing keys"). A
	// shorter positive KeyPublishAhead than domain.KeySetMaxAge is
	// refused.
	DefaultKeyPublishAhead = 2 * domain.KeySetMaxAge
	// KeyPoll is how often KeepLoaded reads the stored keys to find a
	// change (a key published, revoked, added) made by another process,
	// reloading them only then: every process lists a published key, and
	// refuses a revoked one, within a second (README.md, "Signing keys").
	KeyPoll = 500 * time.Millisecond
	// MinHS256SecretLen is the shortest HS256 secret accepted, in bytes.
	MinHS256SecretLen = 32
	// MaxTokenLen bounds the tokens the verifier parses; longer input is
	// rejected before any decoding.
	MaxTokenLen = 8 << 10
)

// Options configures Tokens. Zero values take the defaults above.
type Options struct {
	// Issuer is the iss claim written and required.
	Issuer string
	// Audience is the aud claim of access tokens, written and required.
	// Refresh tokens carry Audience + ":refresh" (RefreshAudience), so a
	// generic verifier never takes one for an access token.
	Audience string
	// ClientID is the client_id claim of access tokens (RFC 9068 2.2).
	ClientID string
	// KeyPublishAhead is how long a key made by Rotate is published (in
	// the JWKS, verifying) before it signs, unless Rotate is asked to
	// sign at once: zero means DefaultKeyPublishAhead, a negative value
	// none; a positive value is at least domain.KeySetMaxAge.
	KeyPublishAhead time.Duration
	// Leeway is the clock skew tolerated when checking exp and iat: zero
	// means DefaultLeeway, a negative value means none. At most MaxLeeway.
	Leeway time.Duration
	// MaxTokenTTL is the longest lifetime the application gives a token
	// (its refresh-token TTL). A retired key keeps verifying refresh
	// tokens for MaxTokenTTL plus Leeway after its retirement (so
	// sessions survive a rotation), then PruneKeys may delete it.
	MaxTokenTTL time.Duration
	// AccessTokenTTL is the lifetime of access tokens: a retired key
	// verifies access tokens, and stays in the JWKS, only for
	// AccessTokenTTL plus Leeway after its retirement, and the verifier
	// refuses an access token whose exp - iat is longer (so it must be
	// the lifetime the application gives them, application.TokenDeps).
	AccessTokenTTL time.Duration
	// KeyEncryptionSecret, when set (at least MinKeyEncryptionSecretLen
	// bytes), seals the private halves of stored keys with AES-256-GCM
	// under a key derived by HKDF-SHA256 (sealing.go has the layout).
	// When the keys that sign are stored in clear, a new sealed key
	// signs at once instead, and they retire with their private halves
	// erased (reloadLocked); a sealed key without the secret, or with
	// another, fails New.
	KeyEncryptionSecret []byte
	// HS256Secret switches to HS256 signing with this secret (at least
	// MinHS256SecretLen bytes). Keys is then not used, the JWKS is empty
	// and Rotate fails. The kid is derived from a hash of the secret.
	HS256Secret []byte
	// Keys stores the EdDSA signing keys; required unless HS256Secret is
	// set.
	Keys ports.KeyStore
	// Clock tells the time; required.
	Clock ports.Clock
	// KeyReload is how often the keys are re-read from Keys, so a rotation
	// made by another process is picked up. The reload is lazy: the first
	// call after the interval does it. KeepLoaded, which a server runs,
	// also reloads them as soon as it finds them changed (KeyPoll).
	KeyReload time.Duration
	// VerifyCacheSize bounds the cache of verified access tokens: zero
	// means DefaultVerifyCacheSize, a negative value disables the cache.
	VerifyCacheSize int
	// Logger receives warnings about failed key reloads; nil discards them.
	Logger *slog.Logger
	// KeysRevoked, when set, is called after a reload finds a key revoked
	// that the previous keys did not (so open streams re-check their
	// tokens' keys at once; bootstrap wires it to
	// application.AuthChanges). It must not block.
	KeysRevoked func()
}

// withDefaults returns o with zero values replaced by defaults, or every
// problem found, joined.
func (o Options) withDefaults() (Options, error) {
	o.Issuer = cmp.Or(o.Issuer, DefaultIssuer)
	o.Audience = cmp.Or(o.Audience, DefaultAudience)
	o.ClientID = cmp.Or(o.ClientID, DefaultClientID)
	switch {
	case o.KeyPublishAhead == 0:
		o.KeyPublishAhead = DefaultKeyPublishAhead
	case o.KeyPublishAhead < 0:
		o.KeyPublishAhead = 0
	}
	switch {
	case o.Leeway == 0:
		o.Leeway = DefaultLeeway
	case o.Leeway < 0:
		o.Leeway = 0
	}
	o.MaxTokenTTL = cmp.Or(o.MaxTokenTTL, DefaultMaxTokenTTL)
	o.AccessTokenTTL = cmp.Or(o.AccessTokenTTL, DefaultAccessTokenTTL)
	o.KeyReload = cmp.Or(o.KeyReload, DefaultKeyReload)
	o.VerifyCacheSize = cmp.Or(o.VerifyCacheSize, DefaultVerifyCacheSize)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	var errs []error
	if o.Leeway > MaxLeeway {
		errs = append(errs, fmt.Errorf("token leeway %v is above the maximum of %v", o.Leeway, MaxLeeway))
	}
	if o.MaxTokenTTL < 0 {
		errs = append(errs, errors.New("max token TTL must be positive"))
	}
	if o.KeyPublishAhead > 0 && o.KeyPublishAhead < domain.KeySetMaxAge {
		errs = append(errs, fmt.Errorf("key publish-ahead %v is below the key set's max-age of %v "+
			"(a client caching the JWKS could meet a token of the new key before it knows the key); 0 signs at once",
			o.KeyPublishAhead, domain.KeySetMaxAge))
	}
	if o.KeyReload < 0 {
		errs = append(errs, errors.New("key reload interval must be positive"))
	}
	if o.HS256Secret != nil && len(o.HS256Secret) < MinHS256SecretLen {
		errs = append(errs, fmt.Errorf("HS256 secret must be at least %d bytes", MinHS256SecretLen))
	}
	if o.KeyEncryptionSecret != nil && len(o.KeyEncryptionSecret) < MinKeyEncryptionSecretLen {
		errs = append(errs, fmt.Errorf("key encryption secret must be at least %d bytes", MinKeyEncryptionSecretLen))
	}
	if o.AccessTokenTTL < 0 {
		errs = append(errs, errors.New("access token TTL must be positive"))
	}
	if o.HS256Secret == nil && o.Keys == nil {
		errs = append(errs, errors.New("a key store is required for EdDSA signing"))
	}
	if o.Clock == nil {
		errs = append(errs, errors.New("a clock is required"))
	}
	if err := errors.Join(errs...); err != nil {
		return Options{}, fmt.Errorf("josejwt options: %w", err)
	}
	return o, nil
}
