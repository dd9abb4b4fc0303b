package application

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// ThrottleLimits bound failed logins within Window. Zero limits disable
// that count.
type ThrottleLimits struct {
	PerUsername int
	PerAddress  int
	Window      time.Duration
}

// DefaultThrottleLimits are the README's configuration defaults.
var DefaultThrottleLimits = ThrottleLimits{PerUsername: 10, PerAddress: 100, Window: 15 * time.Minute}

// DefaultMaxSessionsPerUser is the README's default of
// --max-sessions-per-user.
const DefaultMaxSessionsPerUser = 100

// LoginDeps are the ports of Login. Throttle, Users and Hasher are
// optional: without Throttle no attempt is throttled; without Users and
// Hasher weak hashes are not upgraded.
type LoginDeps struct {
	Validator ports.UserValidator
	Tokens    TokenDeps
	Throttle  ports.LoginThrottle
	Limits    ThrottleLimits
	Users     ports.UserRepository
	Hasher    ports.PasswordHasher
	Log       *slog.Logger
	Metrics   ports.Metrics
	// Audit records login.succeeded, login.failed and login.throttled;
	// nil records nothing.
	Audit *AuditTrail
	// InFlightWait bounds how long a refused attempt waits for this
	// process's attempts of its keys to end (see inFlight); zero means
	// DefaultInFlightWait, a negative value no waiting.
	InFlightWait time.Duration
	// MaxSessions bounds a user's live sessions: a login beyond it ends
	// the least recently used ones (session.evicted). Zero means
	// DefaultMaxSessionsPerUser, a negative value no bound.
	MaxSessions int
	// Revoked, when set, is told of the sessions a login ends, so this
	// process refuses their access tokens at once.
	Revoked SessionRevocations
}

// LoginInput is a login attempt.
type LoginInput struct {
	Username string
	Password string
	// ClientAddr is the client's address, for per-address throttling, the
	// audit trail and the session (docs/admin.md).
	ClientAddr string
	// UserAgent is the client's User-Agent, which the session records.
	UserAgent string
}

// caller is whose database work an attempt is: its client address's, as
// any anonymous request's (README, "Fair share of the database").
func (in LoginInput) caller() domain.Caller { return domain.Caller{Address: in.ClientAddr} }

// Login exchanges a username and password for a token pair, starting a
// new refresh family.
type Login struct {
	d      LoginDeps
	flying *inFlight
}

// NewLogin returns the use case.
func NewLogin(d LoginDeps) (*Login, error) {
	if d.Validator == nil {
		return nil, errors.New("login needs a user validator")
	}
	if err := d.Tokens.validate(); err != nil {
		return nil, err
	}
	if d.Throttle != nil && d.Limits.Window <= 0 {
		return nil, errors.New("login throttling needs a positive window")
	}
	d.Metrics = metricsOrNop(d.Metrics)
	d.Log = cmp.Or(d.Log, slog.New(slog.DiscardHandler))
	d.InFlightWait = cmp.Or(d.InFlightWait, DefaultInFlightWait)
	d.MaxSessions = cmp.Or(d.MaxSessions, DefaultMaxSessionsPerUser)
	return &Login{d: d, flying: newInFlight()}, nil
}

// Execute returns a new pair. Every wrong-credential case is
// domain.ErrUnauthenticated alike; a throttled attempt is a
// domain.KindTooMany error carrying RetryAfter and costs no password hashing.
func (uc *Login) Execute(ctx context.Context, in LoginInput) (domain.TokenPair, error) {
	if in.Username == "" || in.Password == "" || len(in.Password) > domain.MaxPasswordBytes ||
		domain.CheckUsername(in.Username) != nil {
		return domain.TokenPair{}, domain.ErrUnauthenticated
	}
	keys := uc.throttleKeys(in)
	at, err := uc.reserve(ctx, in.caller(), in, keys)
	if err != nil {
		return domain.TokenPair{}, err
	}
	finish := uc.inFlight(keys)
	defer finish(false)
	u, err := uc.d.Validator.ValidateUser(ctx, ports.LoginInput{Username: in.Username, Password: in.Password})
	reason := domain.AuditReasonBadPassword
	if errors.Is(err, errUnknownUser) {
		reason = domain.AuditReasonUnknownUser
	}
	if err == nil {
		var active bool
		active, err = uc.d.Validator.IsActive(ctx, u)
		if err == nil && !active {
			err, reason = domain.ErrUnauthenticated, domain.AuditReasonInactive
		}
	}
	if errors.Is(err, domain.ErrUnauthenticated) {
		uc.d.Metrics.LoginOutcome("failure")
		uc.d.Log.InfoContext(ctx, "login failed", "reason", "bad credentials")
		uc.d.Audit.Record(ctx, domain.AuditEvent{Type: domain.AuditLoginFailed, UserID: u.ID,
			Username: in.Username, Address: in.ClientAddr, Reason: reason})
		return domain.TokenPair{}, domain.ErrUnauthenticated
	}
	if err != nil {
		return domain.TokenPair{}, fmt.Errorf("login: %w", err)
	}
	uc.giveBack(ctx, in.caller(), keys, usernameThrottleKey(in.Username), at)
	finish(true)
	uc.upgradeHash(ctx, u, in.Password)
	next, err := uc.d.Tokens.prepare(ctx, u.ID, uc.d.Tokens.IDs.NewID(), domain.Normalize(uc.d.Tokens.Clock.Now()), u.Admin,
		domain.Client{Address: in.ClientAddr, UserAgent: in.UserAgent})
	if err != nil {
		return domain.TokenPair{}, fmt.Errorf("login: %w", err)
	}
	// Signed before the family is stored, so a failure stores nothing.
	pair, err := uc.d.Tokens.pair(ctx, next, next.refresh)
	if err != nil {
		return domain.TokenPair{}, fmt.Errorf("login: %w", err)
	}
	if err := uc.d.Tokens.Refresh.For(in.caller()).SaveRefresh(ctx, next.rec); err != nil {
		return domain.TokenPair{}, fmt.Errorf("login: store refresh token: %w", err)
	}
	evicted, err := uc.evict(ctx, in.caller(), u.ID)
	if err != nil {
		return domain.TokenPair{}, fmt.Errorf("login: end the least recently used sessions: %w", err)
	}
	uc.d.Metrics.LoginOutcome("success")
	uc.d.Audit.Record(ctx, domain.AuditEvent{Type: domain.AuditLoginSucceeded, UserID: u.ID,
		Username: u.Username, Address: in.ClientAddr, Family: next.rec.FamilyID})
	for _, id := range evicted {
		uc.d.Audit.Record(ctx, domain.AuditEvent{Type: domain.AuditSessionEvicted, UserID: u.ID, Username: u.Username,
			Address: in.ClientAddr, Family: id, Detail: fmt.Sprintf("max-sessions-per-user=%d", uc.d.MaxSessions)})
	}
	return pair, nil
}

// evict ends the user's live sessions beyond MaxSessions, the least
// recently used, once the login's own is stored (ports.SessionEvictor),
// and returns them; they end as a logout does. The events are recorded
// after it, as the store takes none.
func (uc *Login) evict(ctx context.Context, c domain.Caller, userID string) ([]string, error) {
	evictor, ok := uc.d.Tokens.Refresh.For(c).(ports.SessionEvictor)
	if !ok || uc.d.MaxSessions < 0 {
		return nil, nil
	}
	ids, err := evictor.EvictSessions(ctx, userID, uc.d.MaxSessions, uc.d.Tokens.Clock.Now())
	if err != nil {
		return nil, err
	}
	revokedHere(uc.d.Revoked, ids...)
	return ids, nil
}

// throttleKeys returns the counters an attempt is reserved under: the
// normalized username, then the client address; keys whose limit is off
// are left out.
func (uc *Login) throttleKeys(in LoginInput) []ports.ThrottleKey {
	if uc.d.Throttle == nil {
		return nil
	}
	keys := make([]ports.ThrottleKey, 0, 2)
	if l := uc.d.Limits.PerUsername; l > 0 {
		keys = append(keys, ports.ThrottleKey{Key: usernameThrottleKey(in.Username), Limit: l})
	}
	if l := uc.d.Limits.PerAddress; l > 0 && in.ClientAddr != "" {
		keys = append(keys, ports.ThrottleKey{Key: "ip:" + in.ClientAddr, Limit: l})
	}
	return keys
}

func usernameThrottleKey(username string) string { return "u:" + domain.NormalizeUsername(username) }

// reserve counts the attempt under every key before any password is
// checked, atomically in the store, and returns when it was counted. An
// attempt over a limit is refused with a domain.KindTooMany error and
// costs nothing more.
func (uc *Login) reserve(ctx context.Context, c domain.Caller, in LoginInput, keys []ports.ThrottleKey) (time.Time, error) {
	now := uc.d.Tokens.Clock.Now()
	if len(keys) == 0 {
		return now, nil
	}
	ok, oldest, err := uc.reserveOnce(ctx, c, keys, now)
	if !ok && err == nil && uc.d.InFlightWait > 0 {
		// The limit may be reached by attempts still in flight here
		// (inFlight): wait for one of them to give its place back.
		stop := time.NewTimer(uc.d.InFlightWait)
		defer stop.Stop()
		for !ok && err == nil && uc.flying.wait(ctx, keys, stop.C) {
			now = uc.d.Tokens.Clock.Now()
			ok, oldest, err = uc.reserveOnce(ctx, c, keys, now)
		}
	}
	if err != nil {
		return now, fmt.Errorf("login: reserve an attempt: %w", err)
	}
	if ok {
		return now, nil
	}
	retry := max(oldest.Add(uc.d.Limits.Window).Sub(now), time.Second)
	uc.d.Log.WarnContext(ctx, "login throttled", "retryAfter", retry.Round(time.Second).String())
	uc.d.Metrics.LoginOutcome("throttled")
	uc.d.Audit.Record(ctx, domain.AuditEvent{Type: domain.AuditLoginThrottled, Username: in.Username, Address: in.ClientAddr})
	return now, domain.TooMany(retry)
}

// reserveOnce reserves an attempt, registered in flight from before the
// call until it ends; a refused attempt is deregistered at once (see
// inFlight).
func (uc *Login) reserveOnce(ctx context.Context, c domain.Caller, keys []ports.ThrottleKey, now time.Time) (bool, time.Time, error) {
	uc.flying.add(keys)
	ok, oldest, err := uc.d.Throttle.For(c).Reserve(ctx, keys, now, now.Add(-uc.d.Limits.Window))
	if !ok || err != nil {
		uc.flying.done(keys, false)
	}
	return ok, oldest, err
}

// inFlight returns the function that ends the attempt reserved under
// keys: freed says it gave its place back. Only its first call counts.
func (uc *Login) inFlight(keys []ports.ThrottleKey) func(freed bool) {
	if len(keys) == 0 {
		return func(bool) {}
	}
	ended := false
	return func(freed bool) {
		if !ended {
			ended = true
			uc.flying.done(keys, freed)
		}
	}
}

// giveBack undoes a successful login's counting: the username's count
// starts again from zero and the address gives back the one attempt it
// reserved (docs/api.md, "Authentication"). Failure only leaves them higher.
func (uc *Login) giveBack(ctx context.Context, c domain.Caller, keys []ports.ThrottleKey, userKey string, at time.Time) {
	if len(keys) == 0 {
		return
	}
	throttle := uc.d.Throttle.For(c)
	for _, k := range keys {
		var err error
		if k.Key == userKey {
			err = throttle.Reset(ctx, k.Key)
		} else {
			err = throttle.Release(ctx, k.Key, at)
		}
		if err != nil {
			uc.d.Log.WarnContext(ctx, "give back a login attempt", "err", err)
		}
	}
}

// upgradeHash re-hashes the password when the stored hash is weaker than
// the current setting. Failure only delays the upgrade to the next login.
func (uc *Login) upgradeHash(ctx context.Context, u domain.User, password string) {
	if uc.d.Users == nil || uc.d.Hasher == nil || !uc.d.Hasher.NeedsRehash(u.PasswordHash) {
		return
	}
	hash, salt, err := uc.d.Hasher.Hash(ctx, password)
	if err == nil {
		_, err = uc.d.Users.UpdateUser(ctx, u.ID, func(cur *domain.User) error {
			if cur.PasswordHash != u.PasswordHash {
				return nil // changed meanwhile; keep the newer one
			}
			cur.PasswordHash, cur.PasswordSalt = hash, salt
			cur.DateUpdated = domain.Normalize(uc.d.Tokens.Clock.Now())
			return nil
		})
	}
	if err != nil {
		uc.d.Log.WarnContext(ctx, "upgrade password hash", "err", err)
	}
}
