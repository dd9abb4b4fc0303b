package application

import (
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

// DefaultThrottleLimits are CONTRACT.md section 4's defaults.
var DefaultThrottleLimits = ThrottleLimits{PerUsername: 10, PerAddress: 100, Window: 15 * time.Minute}

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
}

// LoginInput is a login attempt.
type LoginInput struct {
	Username string
	Password string
	// ClientAddr is the client's address, for per-address throttling.
	ClientAddr string
}

// Login exchanges a username and password for a token pair, starting a
// new refresh family.
type Login struct{ d LoginDeps }

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
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	return &Login{d: d}, nil
}

// Execute returns a new pair. Every wrong-credential case (unknown user,
// wrong password, inactive user, empty field) is domain.ErrUnauthenticated
// alike; a throttled attempt is a domain.KindTooMany error carrying
// RetryAfter and costs no password hashing.
func (uc *Login) Execute(ctx context.Context, in LoginInput) (domain.TokenPair, error) {
	if in.Username == "" || in.Password == "" || len(in.Password) > domain.MaxPasswordBytes ||
		domain.ValidateUsername(in.Username) != nil {
		return domain.TokenPair{}, domain.ErrUnauthenticated
	}
	keys := uc.throttleKeys(in)
	if err := uc.checkThrottle(ctx, keys); err != nil {
		return domain.TokenPair{}, err
	}
	u, err := uc.d.Validator.ValidateUser(ctx, ports.LoginInput{Username: in.Username, Password: in.Password})
	if err == nil {
		var active bool
		active, err = uc.d.Validator.IsActive(ctx, u)
		if err == nil && !active {
			err = domain.ErrUnauthenticated
		}
	}
	if errors.Is(err, domain.ErrUnauthenticated) {
		uc.recordFailure(ctx, keys)
		uc.d.Metrics.LoginOutcome("failure")
		uc.d.Log.InfoContext(ctx, "login failed", "reason", "bad credentials")
		return domain.TokenPair{}, domain.ErrUnauthenticated
	}
	if err != nil {
		return domain.TokenPair{}, fmt.Errorf("login: %w", err)
	}
	if uc.d.Throttle != nil && keys[0].limit > 0 {
		if err := uc.d.Throttle.Reset(ctx, keys[0].key); err != nil {
			uc.d.Log.WarnContext(ctx, "reset login failures", "err", err)
		}
	}
	uc.upgradeHash(ctx, u, in.Password)
	pair, rec, err := uc.d.Tokens.mint(ctx, u.ID, uc.d.Tokens.IDs.NewID(), domain.Normalize(uc.d.Tokens.Clock.Now()))
	if err != nil {
		return domain.TokenPair{}, fmt.Errorf("login: %w", err)
	}
	if err := uc.d.Tokens.Refresh.SaveRefresh(ctx, rec); err != nil {
		return domain.TokenPair{}, fmt.Errorf("login: store refresh token: %w", err)
	}
	uc.d.Metrics.LoginOutcome("success")
	return pair, nil
}

type throttleKey struct {
	key   string
	limit int
}

func (uc *Login) throttleKeys(in LoginInput) []throttleKey {
	keys := []throttleKey{{key: "u:" + domain.NormalizeUsername(in.Username), limit: uc.d.Limits.PerUsername}}
	if in.ClientAddr != "" {
		keys = append(keys, throttleKey{key: "ip:" + in.ClientAddr, limit: uc.d.Limits.PerAddress})
	}
	return keys
}

func (uc *Login) checkThrottle(ctx context.Context, keys []throttleKey) error {
	if uc.d.Throttle == nil {
		return nil
	}
	now := uc.d.Tokens.Clock.Now()
	since := now.Add(-uc.d.Limits.Window)
	for _, k := range keys {
		if k.limit <= 0 {
			continue
		}
		n, oldest, err := uc.d.Throttle.Failures(ctx, k.key, since)
		if err != nil {
			return fmt.Errorf("login: count failures: %w", err)
		}
		if n >= k.limit {
			retry := oldest.Add(uc.d.Limits.Window).Sub(now)
			if retry < time.Second {
				retry = time.Second
			}
			uc.d.Log.WarnContext(ctx, "login throttled", "retryAfter", retry.Round(time.Second).String())
			uc.d.Metrics.LoginOutcome("throttled")
			return domain.TooMany(retry)
		}
	}
	return nil
}

func (uc *Login) recordFailure(ctx context.Context, keys []throttleKey) {
	if uc.d.Throttle == nil {
		return
	}
	now := uc.d.Tokens.Clock.Now()
	for _, k := range keys {
		if k.limit <= 0 {
			continue
		}
		if err := uc.d.Throttle.RecordFailure(ctx, k.key, now); err != nil {
			uc.d.Log.WarnContext(ctx, "record login failure", "err", err)
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
