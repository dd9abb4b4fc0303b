package ports

import (
	"context"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// UserLookup finds users for login, the guard and refresh (README,
// "Embedding"; replaceable).
type UserLookup interface {
	// ByUsername returns the credentials record of the user with that
	// username (compared case-insensitively), or domain.ErrUserNotFound.
	ByUsername(ctx context.Context, username string) (domain.User, error)
	// BySubject returns the principal a token subject names, or
	// domain.ErrUserNotFound when there is no such user or it is inactive.
	BySubject(ctx context.Context, subject string) (domain.Principal, error)
}

// UserRepository stores local users; the CLI administers them through it.
type UserRepository interface {
	// CreateUser stores u, or returns domain.ErrUserExists when a user has
	// the same username case-insensitively. events: see AuditLog.
	CreateUser(ctx context.Context, u domain.User, events ...domain.AuditEvent) error
	// UserByUsername returns the user, or domain.ErrUserNotFound.
	UserByUsername(ctx context.Context, username string) (domain.User, error)
	// UserByID returns the user, or domain.ErrUserNotFound.
	UserByID(ctx context.Context, id string) (domain.User, error)
	// UpdateUser loads the user with id, lets fn change it and stores it
	// atomically; domain.ErrUserNotFound when missing; fn's error as is;
	// domain.ErrLastAdmin, storing nothing, when the change makes the
	// last active admin inactive or no admin (checked in the change's
	// transaction, serialised with every other such change, so two
	// admins demoting each other at once leave one). events: see AuditLog.
	UpdateUser(ctx context.Context, id string, fn func(*domain.User) error, events ...domain.AuditEvent) (domain.User, error)
	// UpdateUserEndingSessions is UpdateUser that also revokes at now
	// every refresh family of the user (RefreshStore.RevokeUser) of the
	// RefreshStore of the same storage, in the same transaction as the
	// change and its events; without such a store it fails and changes
	// nothing (ARCHITECTURE.md, "Authentication").
	UpdateUserEndingSessions(ctx context.Context, id string, now time.Time, fn func(*domain.User) error, events ...domain.AuditEvent) (domain.User, error)
}

// LoginInput is what a client presented at login.
type LoginInput struct {
	Username string
	Password string
}

// UserValidator decides whether login credentials name a valid user
// (replaceable: README, "Embedding").
type UserValidator interface {
	// ValidateUser returns the user the credentials prove, or
	// domain.ErrUnauthenticated for an unknown user or a wrong password.
	ValidateUser(ctx context.Context, in LoginInput) (domain.User, error)
	// IsActive reports whether u may log in.
	IsActive(ctx context.Context, u domain.User) (bool, error)
}

// PasswordCheck is the input of PasswordValidator.Validate.
type PasswordCheck struct {
	Password     string
	PasswordHash string
	PasswordSalt string
}

// PasswordValidator compares a password with a stored hash (README,
// "Embedding"; replaceable).
type PasswordValidator interface {
	// Validate reports whether the password matches. A malformed hash is
	// an error, not a match.
	Validate(ctx context.Context, in PasswordCheck) (bool, error)
	// ValidateObject is Validate against a user's stored hash and salt.
	ValidateObject(ctx context.Context, password string, u domain.User) (bool, error)
}

// PasswordHasher makes new password hashes.
type PasswordHasher interface {
	// Hash returns the encoded hash and salt (empty when the hash embeds
	// it) of password.
	Hash(ctx context.Context, password string) (hash, salt string, err error)
	// NeedsRehash reports whether hash is weaker than the current setting
	// (another algorithm or lower cost), so a login re-hashes it.
	NeedsRehash(hash string) bool
}

// TokenIssuer signs tokens (replaceable: README, "Embedding").
type TokenIssuer interface {
	// AccessToken signs an access token carrying c.
	AccessToken(ctx context.Context, c domain.Claims) (string, error)
	// RefreshToken signs a refresh token carrying c.
	RefreshToken(ctx context.Context, c domain.Claims) (string, error)
}

// TokenVerifier checks tokens (replaceable: README, "Embedding").
type TokenVerifier interface {
	// AccessToken returns the claims of a valid access token, or
	// domain.ErrUnauthenticated for anything else (malformed, wrongly
	// signed, expired, wrong issuer or audience, a refresh token).
	AccessToken(ctx context.Context, token string) (domain.Claims, error)
	// RefreshToken is AccessToken for refresh tokens.
	RefreshToken(ctx context.Context, token string) (domain.Claims, error)
}

// KeyRevocations is what a TokenVerifier may implement besides, answered
// from memory (no query), so open event streams re-check their token's key
// (application.Authenticate.Recheck); without it, only when a stream opens.
type KeyRevocations interface {
	// KeyRevoked reports whether the key kid (domain.Claims.KeyID) was
	// revoked, as far as this process knows.
	KeyRevoked(kid string) bool
}

// RefreshTokenReader is what a TokenVerifier may implement besides: the
// claims RefreshToken returns, read with every check but the signature's
// and marked so (domain.Claims.Digest set to domain.TokenDigest of the
// token). The refresh store acts on them only when the digest is the live
// token's; otherwise Refresh verifies the signature and presents them
// again (ARCHITECTURE.md, "Authentication": rotates by its digest).
type RefreshTokenReader interface {
	// ReadRefreshToken returns the claims, with Digest set, or
	// domain.ErrUnauthenticated for a token RefreshToken would refuse for
	// any reason but its signature.
	ReadRefreshToken(ctx context.Context, token string) (domain.Claims, error)
}

// TokenValidator runs an integrator's extra validation after a token was
// verified (replaceable: README, "Embedding").
type TokenValidator interface {
	// ValidateToken reports whether the verified claims are acceptable.
	ValidateToken(ctx context.Context, c domain.Claims) (bool, error)
}

// RefreshStore keeps the state of refresh families, for rotation and
// reuse detection: one record per family (domain.RefreshFamily), holding
// its live token and the few tokens it replaced last, so storage grows
// with live sessions, not with refreshes.
type RefreshStore interface {
	// For returns the store bound to caller, as CacheRepository.For.
	For(caller domain.Caller) RefreshStore
	// SaveRefresh starts the family of a newly issued refresh token (a
	// login): r becomes the live token of family r.FamilyID, r.Digest its
	// digest. A family already stored is an internal error. r.RevokedAt set
	// stores the family revoked; r.UsedAt is ignored.
	SaveRefresh(ctx context.Context, r domain.RefreshRecord) error
	// RotateRefresh handles the refresh token presented, given by its
	// claims (ID, FamilyID, Subject, ExpiresAt), at now, and answers what
	// it did: presented's family's Judge (domain.RefreshFamily), a family
	// the store does not hold being refused. The error is for failures
	// only. Claims read unchecked (Digest set, RefreshTokenReader) may
	// rotate the live token whose stored digest they match and nothing
	// else: any other answer to them is Unproven, changing nothing.
	//
	//   - Rotate: next replaces the live token (next.Digest its digest),
	//     atomically, and is the Record. Of concurrent calls presenting
	//     one token at most one stores its next.
	//   - Reissue (a reuse within a positive grace of the token's first
	//     use: a client that refreshed twice at once, or retried after a
	//     lost answer): next is NOT stored, nothing is revoked, and the
	//     Record is the family's live token, for the caller to issue
	//     again. So a family never has two live tokens.
	//   - Reused: the whole family is revoked at now, with the events (see
	//     AuditLog); on any other outcome they are dropped.
	//   - Refused, Unproven: nothing changes.
	//
	// next must belong to presented's family and user and have a new id
	// (neither presented's nor one the family remembers); otherwise
	// RotateRefresh fails with an internal error and changes nothing.
	RotateRefresh(ctx context.Context, presented domain.Claims, next domain.RefreshRecord, now time.Time, grace time.Duration,
		events ...domain.AuditEvent) (Rotation, error)
	// RevokeFamily revokes a family; a family revoked before keeps its
	// time, an unknown one is no error. events: see AuditLog.
	RevokeFamily(ctx context.Context, familyID string, now time.Time, events ...domain.AuditEvent) error
	// RevokeUser revokes every family of a user.
	RevokeUser(ctx context.Context, userID string, now time.Time) error
	// PurgeRefresh removes at most limit families whose live token
	// expired before now (so every token of theirs has) and returns how
	// many it removed.
	PurgeRefresh(ctx context.Context, now time.Time, limit int) (int, error)
}

// Rotation is what RefreshStore.RotateRefresh did with a presented
// token: the verdict it acted on and, for Rotate and Reissue, the family's
// live token (zero otherwise).
type Rotation struct {
	Outcome domain.RefreshVerdict
	Record  domain.RefreshRecord
}

// SessionEvictor is what a RefreshStore implements besides to bound a
// user's live sessions (README, "Configuration": --max-sessions-per-user);
// bunstore's and memstore's do. A login calls it right after SaveRefresh;
// with a store without it, sessions are not bounded.
type SessionEvictor interface {
	// EvictSessions revokes at now every live family of the user but the
	// keep (at least 1) last used, in the order of SessionStore.UserSessions,
	// and returns the ids of the families this call revoked. Once
	// concurrent calls for one user (each after its own SaveRefresh, on any
	// replica sharing the store) have all returned, at most keep families
	// saved before them are live; a family's id is returned by one call.
	EvictSessions(ctx context.Context, userID string, keep int, now time.Time) ([]string, error)
}

// RevocationFeed tells which refresh families were revoked lately, so
// every replica's guard refuses their access tokens without asking the
// store on each request (background.RevokedSessions polls it).
type RevocationFeed interface {
	// RevokedFamilies returns, each once, the families revoked at or
	// after since. It must be cheap when few are: one indexed query.
	RevokedFamilies(ctx context.Context, since time.Time) ([]string, error)
}

// KeyStore keeps token signing keys so every replica and restart agrees.
type KeyStore interface {
	// SigningKeys returns every stored key, newest DateCreated first,
	// with SignsFrom set (to DateCreated for a key stored without one).
	SigningKeys(ctx context.Context) ([]domain.SigningKey, error)
	// AddSigningKey stores k and retires every other key at k's
	// activation (k.Activation(), possibly ahead: the previous key signs
	// until then), unless it is retired earlier already; it erases the
	// private half of every key retired at or before k.DateCreated,
	// atomically. So at any instant one key signs: the one whose
	// activation has passed and whose retirement has not. events: see
	// AuditLog.
	AddSigningKey(ctx context.Context, k domain.SigningKey, events ...domain.AuditEvent) error
	// RevokeSigningKey marks the key kid revoked at now (a key revoked
	// before keeps its time) and erases its private half; it returns
	// domain.ErrSigningKeyNotFound for an unknown kid, storing nothing.
	// When kid was published ahead and its activation is after now, the
	// keys AddSigningKey retired at that activation take kid's retirement
	// instead (none when it had none), atomically: the key that signs
	// keeps signing as if kid had never been added. events: see AuditLog.
	RevokeSigningKey(ctx context.Context, kid string, now time.Time, events ...domain.AuditEvent) error
	// SetSigningKeyPrivate replaces the stored private half of kid (to
	// encrypt a key stored in clear, or to erase the private half of a
	// key whose retirement, set ahead, has passed);
	// domain.ErrSigningKeyNotFound for an unknown kid.
	SetSigningKeyPrivate(ctx context.Context, kid string, private []byte) error
	// DeleteSigningKeysRetiredBefore removes keys retired before t.
	DeleteSigningKeysRetiredBefore(ctx context.Context, t time.Time) (int, error)
}

// ThrottleKey is one counter a login attempt is counted under (a
// normalised username or a client address) and the most attempts it may
// hold within the window. Limit is positive.
type ThrottleKey struct {
	Key   string
	Limit int
}

// LoginThrottle counts login attempts per key within a window. An attempt
// is counted before its password is checked and stays counted when it
// fails; a successful login gives its count back (Reset, Release). So
// parallel attempts cannot pass a limit together.
type LoginThrottle interface {
	// For returns the throttle bound to caller, as CacheRepository.For.
	For(caller domain.Caller) LoginThrottle
	// Reserve counts one attempt at now under every key, atomically: when
	// some key already holds Limit or more attempts at or after since,
	// nothing is counted and Reserve returns false with the time of the
	// oldest of that key's attempts since then (the first such key, in the
	// order given). Of concurrent calls, on every replica sharing the
	// store, at most Limit - n succeed for a key holding n attempts.
	Reserve(ctx context.Context, keys []ThrottleKey, now, since time.Time) (ok bool, oldest time.Time, err error)
	// Release forgets one attempt counted under key at at; when there is
	// none it does nothing.
	Release(ctx context.Context, key string, at time.Time) error
	// Failures returns how many attempts were counted for key since t and
	// when the oldest of them was.
	Failures(ctx context.Context, key string, since time.Time) (n int, oldest time.Time, err error)
	// RecordFailure counts one attempt for key at now, whatever the count
	// (imports, tests).
	RecordFailure(ctx context.Context, key string, now time.Time) error
	// Reset forgets every attempt of key.
	Reset(ctx context.Context, key string) error
	// PurgeFailures removes at most limit attempts counted before t and
	// returns how many it removed.
	PurgeFailures(ctx context.Context, before time.Time, limit int) (int, error)
}
