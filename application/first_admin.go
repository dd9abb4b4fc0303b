package application

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// SetupLinkTTL is how long a set-up link is valid (docs/admin.md, "The
// first admin").
const SetupLinkTTL = 30 * time.Minute

// SetupTokenBytes is the number of random bytes of a set-up token.
const SetupTokenBytes = 32

// SetupDetail is the audit detail of the events of a user made through
// the set-up link (docs/admin.md, "Audit event types").
const SetupDetail = "setup-link"

// FirstAdmin is the one-time set-up link that creates the first admin
// without a shell (docs/admin.md, "The first admin", also for replicas).
// Issue makes the link when no active admin exists; Create spends it. The
// link lives in this process only, as the SHA-256 digest of its token.
//
// One call at a time reads or changes the link (a Create holds it until
// its user is stored), so two requests with the same token make one
// admin: the second finds the link used.
type FirstAdmin struct {
	ua       *Users
	hasAdmin func(context.Context) (bool, error)
	clock    ports.Clock
	secrets  ports.SecretSource
	opts     FirstAdminOptions
	turn     chan struct{} // one-slot semaphore holding the link
	link     setupLink
}

// FirstAdminOptions shape the set-up link.
type FirstAdminOptions struct {
	// TTL is how long a link is valid; zero means SetupLinkTTL.
	TTL time.Duration
	// FromAnywhere accepts the link from any address; by default only
	// from the server's own machine (SetupInput.Local).
	FromAnywhere bool
}

// setupLink is the state of the one link.
type setupLink struct {
	issued  bool
	spent   bool
	digest  [sha256.Size]byte
	expires time.Time
}

// NewFirstAdmin returns the use case. ua creates the admin; hasAdmin
// reports whether an active admin exists (Users.HasAdmin).
func NewFirstAdmin(ua *Users, hasAdmin func(context.Context) (bool, error), clock ports.Clock,
	secrets ports.SecretSource, opts FirstAdminOptions) (*FirstAdmin, error) {
	if ua == nil || hasAdmin == nil || clock == nil || secrets == nil {
		return nil, errors.New("the set-up link needs user administration, an admin check, a clock and secrets")
	}
	if opts.TTL < 0 {
		return nil, errors.New("the set-up link's lifetime must not be negative")
	}
	opts.TTL = cmp.Or(opts.TTL, SetupLinkTTL)
	return &FirstAdmin{ua: ua, hasAdmin: hasAdmin, clock: clock, secrets: secrets, opts: opts,
		turn: make(chan struct{}, 1)}, nil
}

// SetupLink is an issued link's token and expiry. The token is a secret:
// it is shown once, to whoever reads the server's start-up log.
type SetupLink struct {
	Token   string
	Expires time.Time
}

// FromAnywhere reports whether the link is accepted from any address.
func (f *FirstAdmin) FromAnywhere() bool { return f.opts.FromAnywhere }

// Issue makes a new link when no active admin exists, replacing any
// earlier one of this process. It returns domain.ErrAdminExists when an
// admin exists, and the store's error when it cannot tell (a store that
// cannot list users: domain.ErrNotImplemented).
func (f *FirstAdmin) Issue(ctx context.Context) (SetupLink, error) {
	if err := f.take(ctx); err != nil {
		return SetupLink{}, err
	}
	defer f.give()
	has, err := f.hasAdmin(ctx)
	if err != nil {
		return SetupLink{}, err
	}
	if has {
		return SetupLink{}, domain.ErrAdminExists
	}
	b, err := f.secrets.Secret(SetupTokenBytes)
	if err != nil {
		return SetupLink{}, fmt.Errorf("set-up token: %w", err)
	}
	if len(b) != SetupTokenBytes {
		return SetupLink{}, fmt.Errorf("set-up token: %d random bytes, want %d", len(b), SetupTokenBytes)
	}
	token := base64.RawURLEncoding.EncodeToString(b)
	expires := f.clock.Now().Add(f.opts.TTL)
	f.link = setupLink{issued: true, digest: sha256.Sum256([]byte(token)), expires: expires}
	return SetupLink{Token: token, Expires: expires}, nil
}

// SetupInput is a request to create the first admin.
type SetupInput struct {
	Token, Username, Password string
	// Local tells that the request came from the server's own machine:
	// its TCP peer is a loopback address and no proxy forwarded it.
	Local bool
}

// Create makes the first admin, active, when in.Token is the link's,
// unused and unexpired, and no active admin exists; the link is then
// spent. It records user.added and user.admin_granted with the detail
// SetupDetail. It returns domain.ErrSetupNotLocal for a request from
// elsewhere (unless FromAnywhere), domain.ErrSetupLinkInvalid for a
// token that is not the link's, domain.ErrSetupLinkUsed or
// domain.ErrSetupLinkExpired for the link's token used again or too late,
// a validation error for a bad username or password (the link stays
// valid), domain.ErrAdminExists when an admin exists (the link is spent)
// and domain.ErrUserExists for a taken username (the link stays valid).
func (f *FirstAdmin) Create(ctx context.Context, in SetupInput) (domain.User, error) {
	if !in.Local && !f.opts.FromAnywhere {
		return domain.User{}, domain.ErrSetupNotLocal
	}
	if err := f.take(ctx); err != nil {
		return domain.User{}, err
	}
	defer f.give()
	if err := f.check(in.Token); err != nil {
		return domain.User{}, err
	}
	if err := errors.Join(domain.ValidateUsername(in.Username), domain.ValidatePassword(in.Password)); err != nil {
		return domain.User{}, err
	}
	has, err := f.hasAdmin(ctx)
	if err != nil {
		return domain.User{}, err
	}
	if has {
		f.link.spent = true
		return domain.User{}, domain.ErrAdminExists
	}
	u, err := f.ua.add(ctx, domain.System(), AddUserInput{Username: in.Username, Password: in.Password, Active: true, Admin: true},
		SetupDetail, "add first admin")
	if err != nil {
		return domain.User{}, err
	}
	f.link.spent = true
	return u, nil
}

// check compares token's digest with the link's in constant time.
func (f *FirstAdmin) check(token string) error {
	d := sha256.Sum256([]byte(token))
	if !f.link.issued || subtle.ConstantTimeCompare(d[:], f.link.digest[:]) != 1 {
		return domain.ErrSetupLinkInvalid
	}
	if f.link.spent {
		return domain.ErrSetupLinkUsed
	}
	if !f.clock.Now().Before(f.link.expires) {
		return domain.ErrSetupLinkExpired
	}
	return nil
}

func (f *FirstAdmin) take(ctx context.Context) error {
	select {
	case f.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (f *FirstAdmin) give() { <-f.turn }
