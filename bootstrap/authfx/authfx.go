// Package authfx is the fx module of authentication: local login, the
// token guard, refresh and logout (docs/api.md, "Authentication"), registered
// globally with ForRoot (options given directly) or ForRootAsync (options
// built by an injected constructor).
//
// Every replaceable service (README, "Embedding") is a port in the graph:
// ports.UserLookup, UserValidator, PasswordValidator, PasswordHasher,
// TokenIssuer, TokenVerifier and TokenValidator. An integrator swaps one
// through its field in Options or with fx.Decorate on the port type.
//
// Requires: ports.UserRepository, ports.RefreshStore, ports.KeyStore,
// ports.LoginThrottle (storefx provides them), ports.Clock,
// ports.IDGenerator and *slog.Logger; when present, ports.Metrics,
// ports.AuditLog (else security events are only logged and counted) and
// ports.RevocationFeed (else the refresh store when it is one; without a
// feed, access tokens outlive the end of their session).
// Provides: the ports above, the use cases *application.AuditTrail, Login,
// Authenticate, Refresh, Logout, Users, AdminCheck, SelfService, Keys and
// AuthChanges, *background.RevokedSessions (polled while the app runs) and
// a KeySet.
package authfx

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.uber.org/fx"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/adapters/passhash"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/application/background"
	"github.com/cachegate/cachegate/bootstrap/internal/fxrun"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Options configure authentication. Zero values take the defaults of
// the README's configuration table.
type Options struct {
	AccessTTL  time.Duration
	RefreshTTL time.Duration
	Issuer     string
	Audience   string
	// ClientID is the client_id claim of access tokens (default
	// josejwt.DefaultClientID).
	ClientID string
	// KeyPublishAhead is how long a rotated key is published before it
	// signs (default josejwt.DefaultKeyPublishAhead; negative: at once).
	KeyPublishAhead time.Duration
	// HS256Secret switches token signing from the stored EdDSA keys to
	// HS256 with this secret (at least 32 bytes).
	HS256Secret []byte
	// PasswordAlgorithm is "bcrypt" (default) or "argon2id".
	PasswordAlgorithm string
	// BcryptCost is bcrypt's cost (default 10; tests use 4).
	BcryptCost int
	// Throttle bounds failed logins; the zero value means the defaults,
	// DisableThrottle turns throttling off.
	Throttle        application.ThrottleLimits
	DisableThrottle bool
	// SubjectCacheTTL is how long the guard and the refresh remember the
	// principal of a token subject (default 1s; negative disables): a
	// disabled user's access tokens stop working within it.
	SubjectCacheTTL time.Duration
	// RefreshReuseGrace forgives a refresh token presented again within
	// this window after its first use (application.RefreshDeps); zero,
	// unlike the configuration's default of 10s, is off.
	RefreshReuseGrace time.Duration
	// SessionMax bounds a refresh family's life from its login (default
	// 90 days).
	SessionMax time.Duration
	// MaxSessionsPerUser bounds a user's live sessions: a login beyond it
	// ends the least recently used (default
	// application.DefaultMaxSessionsPerUser; negative: no bound).
	MaxSessionsPerUser int
	// RevocationPoll is how often the revoked sessions are read from the
	// store (default background.DefaultRevocationPoll); negative turns
	// the check off, so access tokens then outlive their session.
	RevocationPoll time.Duration
	// KeyEncryptionSecret, when set (at least 32 bytes), seals the private
	// halves of stored signing keys (josejwt.Options.KeyEncryptionSecret).
	KeyEncryptionSecret []byte
	// KeyReload is how often the signing keys are re-read, to pick up a
	// rotation or revocation made elsewhere (default josejwt.DefaultKeyReload).
	KeyReload time.Duration
	// AuditFoldWindow is the window of domain.AuditFold, which folds failed
	// and throttled logins in the audit trail (zero: the default's).
	AuditFoldWindow time.Duration

	// Replaceable services (README, "Embedding"); nil keeps the default.
	UserLookup        ports.UserLookup
	UserValidator     ports.UserValidator
	PasswordValidator ports.PasswordValidator
	TokenIssuer       ports.TokenIssuer
	TokenVerifier     ports.TokenVerifier
	TokenValidator    ports.TokenValidator
}

// KeySet publishes and rotates the signing keys.
type KeySet interface {
	// JWKS returns the JSON Web Key Set of the keys that can verify
	// tokens still in circulation.
	JWKS(ctx context.Context) ([]byte, error)
	// Rotate adds a new key, signing after the publish-ahead time or at
	// once, and returns it; the events are stored with the new key
	// (application.SigningKeys).
	Rotate(ctx context.Context, immediate bool, events ...domain.AuditEvent) (domain.SigningKey, error)
	// PruneKeys deletes keys no token can still carry.
	PruneKeys(ctx context.Context) (int, error)
	// List returns every stored key, newest first, without private
	// halves.
	List(ctx context.Context) ([]domain.SigningKey, error)
	// Revoke stops every process accepting tokens of kid (within its key
	// reload period), making a new key sign at once first when kid signs
	// (one published ahead is only withdrawn); the events are stored too.
	Revoke(ctx context.Context, kid string, events ...domain.AuditEvent) error
}

// ForRoot registers authentication with options given directly.
func ForRoot(o Options) fx.Option {
	return module(fx.Supply(fx.Private, o))
}

// ForRootAsync registers authentication with options built by build,
// whose parameter D fx injects.
func ForRootAsync[D any](build func(D) (Options, error)) fx.Option {
	return module(fx.Provide(fx.Private, build))
}

func module(options fx.Option) fx.Option {
	return fx.Module("auth",
		options,
		fx.Provide(
			newPasswords,
			newTokens,
			newUserLookup,
			newUserValidator,
			newLogin,
			newAuthenticate,
			newRefresh,
			newRevokedSessions,
			newKeys,
			newLogout,
			newUsers,
			newSelfService,
			newAuditTrail,
			application.NewAuthChanges,
		),
	)
}

type passwords struct {
	fx.Out
	Hasher    ports.PasswordHasher
	Validator ports.PasswordValidator
}

func newPasswords(o Options) (passwords, error) {
	h, err := passhash.New(passhash.Options{Algorithm: passhash.Algorithm(o.PasswordAlgorithm), BcryptCost: o.BcryptCost})
	if err != nil {
		return passwords{}, fmt.Errorf("auth: passwords: %w", err)
	}
	out := passwords{Hasher: h, Validator: h}
	if o.PasswordValidator != nil {
		out.Validator = o.PasswordValidator
	}
	return out, nil
}

type tokens struct {
	fx.Out
	Issuer    ports.TokenIssuer
	Verifier  ports.TokenVerifier
	Validator ports.TokenValidator
	Keys      KeySet
}

// keyPruneEvery is how often retired signing keys are pruned.
const keyPruneEvery = time.Hour

func newTokens(lc fx.Lifecycle, o Options, keys ports.KeyStore, clock ports.Clock, log *slog.Logger,
	changes *application.AuthChanges) (tokens, error) {
	maxTTL := cmp.Or(o.RefreshTTL, application.DefaultRefreshTTL)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t, err := josejwt.New(ctx, josejwt.Options{Issuer: o.Issuer, Audience: o.Audience, ClientID: o.ClientID,
		KeyPublishAhead: o.KeyPublishAhead, MaxTokenTTL: maxTTL,
		AccessTokenTTL: o.AccessTTL, HS256Secret: o.HS256Secret, Keys: keys, Clock: clock, Logger: log,
		KeyEncryptionSecret: o.KeyEncryptionSecret, KeyReload: o.KeyReload, KeysRevoked: changes.Bump})
	if err != nil {
		return tokens{}, fmt.Errorf("auth: tokens: %w", err)
	}
	out := tokens{Issuer: t.Issuer(), Verifier: t.Verifier(), Validator: o.TokenValidator, Keys: t}
	if o.TokenIssuer != nil {
		out.Issuer = o.TokenIssuer
	}
	if o.TokenVerifier != nil {
		out.Verifier = o.TokenVerifier
	}
	if o.HS256Secret == nil {
		fxrun.Go(lc, func(ctx context.Context) { pruneKeys(ctx, t, log) })
		// The keys are kept reloaded (not only when a request finds them
		// stale), so a replica serving only event streams still ends the
		// streams of a revoked key (application.AuthChanges).
		fxrun.Go(lc, t.KeepLoaded)
	}
	return out, nil
}

func pruneKeys(ctx context.Context, t *josejwt.Tokens, log *slog.Logger) {
	tick := time.NewTicker(keyPruneEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			pruneCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
			if _, err := t.PruneKeys(pruneCtx); err != nil {
				log.Warn("prune signing keys", "err", err)
			}
			cancel()
		}
	}
}

func newUserLookup(o Options, users ports.UserRepository) ports.UserLookup {
	if o.UserLookup != nil {
		return o.UserLookup
	}
	return application.RepoUserLookup{Users: users}
}

func newUserValidator(o Options, lookup ports.UserLookup, pv ports.PasswordValidator, h ports.PasswordHasher) (ports.UserValidator, error) {
	if o.UserValidator != nil {
		return o.UserValidator, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return application.NewCredentialValidator(ctx, lookup, pv, h)
}

// MintParams are what minting token pairs needs from the graph.
type MintParams struct {
	fx.In
	Options Options
	Issuer  ports.TokenIssuer
	Refresh ports.RefreshStore
	Clock   ports.Clock
	IDs     ports.IDGenerator
	Log     *slog.Logger
	Metrics ports.Metrics `optional:"true"`
	Audit   *application.AuditTrail
}

func (d MintParams) tokens() application.TokenDeps {
	return application.TokenDeps{Issuer: d.Issuer, Refresh: d.Refresh, Clock: d.Clock, IDs: d.IDs,
		AccessTTL: d.Options.AccessTTL, RefreshTTL: d.Options.RefreshTTL, SessionMax: d.Options.SessionMax}
}

type loginDeps struct {
	fx.In
	MintParams
	Validator ports.UserValidator
	Throttle  ports.LoginThrottle
	Users     ports.UserRepository
	Hasher    ports.PasswordHasher
	Revoked   *background.RevokedSessions
}

func newLogin(d loginDeps) (*application.Login, error) {
	limits := cmp.Or(d.Options.Throttle, application.DefaultThrottleLimits)
	var throttle ports.LoginThrottle = d.Throttle
	if d.Options.DisableThrottle {
		throttle = nil
	}
	return application.NewLogin(application.LoginDeps{Validator: d.Validator, Tokens: d.tokens(),
		Throttle: throttle, Limits: limits, Users: d.Users, Hasher: d.Hasher, Log: d.Log, Metrics: d.Metrics,
		Audit: d.Audit, MaxSessions: d.Options.MaxSessionsPerUser, Revoked: revocations(d.Revoked)})
}

// VerifyParams are what verifying tokens needs from the graph.
type VerifyParams struct {
	fx.In
	Verifier  ports.TokenVerifier
	Validator ports.TokenValidator `optional:"true"`
	Lookup    ports.UserLookup
}

// DefaultSubjectCacheTTL is the default of Options.SubjectCacheTTL.
const DefaultSubjectCacheTTL = time.Second

func newAuthenticate(o Options, d VerifyParams, clock ports.Clock, revoked *background.RevokedSessions,
	changes *application.AuthChanges) (*application.Authenticate, error) {
	return application.NewAuthenticate(d.Verifier, d.Validator, application.NewSubjectCache(d.Lookup, o.subjectTTL(), 0, clock),
		revocations(revoked), changes)
}

// subjectTTL is SubjectCacheTTL with its default (negative: off).
func (o Options) subjectTTL() time.Duration { return cmp.Or(o.SubjectCacheTTL, DefaultSubjectCacheTTL) }

type refreshDeps struct {
	fx.In
	MintParams
	VerifyParams
	Revoked *background.RevokedSessions
}

func newRefresh(d refreshDeps) (*application.Refresh, error) {
	return application.NewRefresh(application.RefreshDeps{Verifier: d.Verifier, Validator: d.Validator,
		Lookup: d.Lookup, Tokens: d.tokens(), Log: d.Log, Metrics: d.Metrics,
		ReuseGrace: d.Options.RefreshReuseGrace, Revoked: revocations(d.Revoked), Audit: d.Audit,
		SubjectTTL: max(d.Options.subjectTTL(), 0)})
}

type revokedDeps struct {
	fx.In
	Options Options
	Refresh ports.RefreshStore
	Feed    ports.RevocationFeed `optional:"true"`
	Clock   ports.Clock
	Log     *slog.Logger
	Changes *application.AuthChanges
}

// revocations hands r to the use cases as application.SessionRevocations:
// a nil set (revocation polling off) becomes a nil interface, which they
// skip, not an interface holding a nil pointer, which they would call.
func revocations(r *background.RevokedSessions) application.SessionRevocations {
	if r == nil {
		return nil
	}
	return r
}

// newRevokedSessions returns the set of revoked sessions, polled while the
// app runs. The feed is ports.RevocationFeed when the graph has one, else
// the refresh store when it is one (bunstore's and memstore's are); nil
// (no check) without a feed or with a negative poll.
func newRevokedSessions(lc fx.Lifecycle, d revokedDeps) (*background.RevokedSessions, error) {
	feed := d.Feed
	if feed == nil {
		feed, _ = d.Refresh.(ports.RevocationFeed)
	}
	if feed == nil || d.Options.RevocationPoll < 0 {
		return nil, nil
	}
	r, err := background.NewRevokedSessions(background.RevokedSessionsOptions{Feed: feed, Clock: d.Clock,
		AccessTTL: d.Options.AccessTTL, Leeway: josejwt.DefaultLeeway, Poll: d.Options.RevocationPoll, Log: d.Log,
		Changes: d.Changes})
	if err != nil {
		return nil, fmt.Errorf("auth: revoked sessions: %w", err)
	}
	fxrun.Go(lc, r.Run)
	return r, nil
}

func newKeys(keys KeySet, clock ports.Clock, log *slog.Logger, audit *application.AuditTrail) (*application.Keys, error) {
	return application.NewKeys(keys, clock, log, audit)
}

func newLogout(refresh ports.RefreshStore, clock ports.Clock, revoked *background.RevokedSessions, audit *application.AuditTrail) (*application.Logout, error) {
	return application.NewLogout(refresh, clock, revocations(revoked), audit)
}

type auditDeps struct {
	fx.In
	Store   ports.AuditLog       `optional:"true"`
	Changes ports.ChangeAuditLog `optional:"true"`
	Log     *slog.Logger
	Metrics ports.Metrics `optional:"true"`
	Clock   ports.Clock
	IDs     ports.IDGenerator
	Options Options
}

// newAuditTrail records security events in the graph's ports.AuditLog,
// logs and counts them, and reads them back. When that log is the one the
// stores write into (ports.ChangeAuditLog), the events of store changes
// are written in the change's transaction; a log an embedder decorated
// gets them through RecordEvent after the commit. Without a log there
// is no trail to read.
func newAuditTrail(d auditDeps) *application.AuditTrail {
	var fold *domain.AuditFold
	if w := d.Options.AuditFoldWindow; w > 0 {
		f := domain.DefaultAuditFold
		f.Window = w
		fold = &f
	}
	return application.NewAuditTrail(application.AuditTrailDeps{Store: d.Store, Log: d.Log, Metrics: d.Metrics,
		Clock: d.Clock, IDs: d.IDs, Fold: fold,
		StoredWithChanges: d.Store != nil && d.Changes.Log != nil && d.Store == d.Changes.Log})
}
