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

// RefreshDeps are the ports of Refresh. Validator is optional.
type RefreshDeps struct {
	Verifier  ports.TokenVerifier
	Validator ports.TokenValidator
	Lookup    ports.UserLookup
	Tokens    TokenDeps
	Log       *slog.Logger
	Metrics   ports.Metrics
	// Audit records refresh.reused (handed to the refresh store, which
	// writes it with the family's revocation, when the stores write the
	// events of their changes; see AuditTrail) and session.expired; nil
	// records nothing.
	Audit *AuditTrail
	// Revoked, when set, learns at once of a family this process revokes
	// on reuse.
	Revoked SessionRevocations
	// ReuseGrace forgives presenting a just-used refresh token again
	// within this window of its first use (a client refreshing twice at
	// once, or retrying after a lost answer): the answer is a fresh access
	// token and the family's one live refresh token issued again, never a
	// second live branch. Zero revokes the family on any reuse. The
	// configuration defaults it to 10s (README, "Configuration"); this zero
	// value is the strict behaviour for embedders.
	ReuseGrace time.Duration
	// SubjectTTL, when positive, lets the use case remember the principal
	// Lookup returned for a subject this long (a SubjectCache), as the
	// guard does: a refresh by a user seen less than SubjectTTL ago asks
	// no lookup. Disabling a user, changing the password or deleting the
	// user revokes the user's families in the same transaction
	// (ports.UserRepository.UpdateUserEndingSessions), and a revoked
	// family never rotates, so the remembered principal lets no such
	// refresh through; what it may carry for at most SubjectTTL is an
	// admin flag granted or withdrawn meanwhile, in the new access token's
	// roles (which clients read; the admin API checks the store,
	// AdminCheck), and a user a lookup of the integrator's own refuses
	// now (whose access tokens the guard's own SubjectCache lets in as
	// long). Zero asks Lookup on every refresh.
	SubjectTTL time.Duration
}

// Refresh exchanges a refresh token for a new pair. Refresh tokens
// rotate: the presented one is consumed and its successor joins the same
// family; presenting a consumed token revokes the whole family, unless it
// is within the reuse grace (see RefreshDeps.ReuseGrace).
type Refresh struct {
	d RefreshDeps
	// reader reads refresh tokens unchecked, first; nil when the verifier
	// cannot or an extra validation is configured (it must see verified
	// claims only).
	reader ports.RefreshTokenReader
}

// NewRefresh returns the use case.
func NewRefresh(d RefreshDeps) (*Refresh, error) {
	if d.Verifier == nil || d.Lookup == nil {
		return nil, errors.New("refresh needs a token verifier and a user lookup")
	}
	if err := d.Tokens.validate(); err != nil {
		return nil, err
	}
	d.Metrics = metricsOrNop(d.Metrics)
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	if d.SubjectTTL > 0 {
		if d.Tokens.Clock == nil {
			return nil, errors.New("refresh: remembering subjects needs the clock of Tokens")
		}
		d.Lookup = NewSubjectCache(d.Lookup, d.SubjectTTL, 0, d.Tokens.Clock)
	}
	uc := &Refresh{d: d}
	if r, ok := d.Verifier.(ports.RefreshTokenReader); ok && d.Validator == nil {
		uc.reader = r
	}
	return uc, nil
}

// Execute returns the new pair. An invalid, expired, revoked or already
// used token, or one whose user is gone or inactive, is
// domain.ErrUnauthenticated; a verified token the extra validation refuses
// is domain.ErrRefreshTokenFailedValidation. client is who presents the
// token: the rotated session records its address and user agent, and the
// audit events its address.
func (uc *Refresh) Execute(ctx context.Context, token string, client domain.Client) (domain.TokenPair, error) {
	pair, outcome, err := uc.execute(ctx, token, client)
	uc.d.Metrics.RefreshOutcome(outcome)
	return pair, err
}

// execute exchanges token and returns the outcome it counts: rotated,
// reissued, reused or rejected (refused, or failed).
//
// The claims are read unchecked when the verifier can (read), and such
// claims act on nothing but the store's rotation of the family's live
// token, which it makes only by the digest of that token's exact string
// (domain.RefreshFamily.Judge). Before anything else happens (a new
// family, a session's end, any other answer of the store) the signature
// is checked (prove) and the claims, now verified, presented again: only
// verified claims revoke, forgive or record. A genuine live token so
// costs no signature check, a token the read refuses a parse; a forged
// one naming an existing user costs the lookup, the successor's signature
// and the rotation's statement before its own check refuses it, less than
// a genuine refresh. The successor's refresh token is signed before the
// store is asked, as the store keeps its digest (issue); the access token,
// or the live refresh token issued again, only after the store decided.
func (uc *Refresh) execute(ctx context.Context, token string, client domain.Client) (domain.TokenPair, string, error) {
	c, err := uc.read(ctx, token)
	if err != nil {
		return domain.TokenPair{}, "rejected", err
	}
	p, err := uc.d.Lookup.BySubject(ctx, c.Subject)
	if errors.Is(err, domain.ErrUserNotFound) {
		return domain.TokenPair{}, "rejected", domain.ErrUnauthenticated
	}
	if err != nil {
		return domain.TokenPair{}, "rejected", fmt.Errorf("refresh: look up subject: %w", err)
	}
	if c.FamilyID == "" {
		// A token from an integrator's issuer without families starts one,
		// which the store does not hold.
		if err := uc.prove(ctx, token, &c); err != nil {
			return domain.TokenPair{}, "rejected", err
		}
		c.FamilyID = uc.d.Tokens.IDs.NewID()
	}
	start := c.SessionStart
	if start.IsZero() {
		// A token minted before sessions carried their start (or by an
		// integrator's issuer): its own issue time is the earliest known.
		start = c.IssuedAt
	}
	next, err := uc.d.Tokens.prepare(ctx, p.ID, c.FamilyID, start, p.Admin, client)
	if errors.Is(err, errSessionOver) {
		if err = uc.prove(ctx, token, &c); err == nil {
			uc.sessionExpired(ctx, p, c.FamilyID, client)
			err = domain.ErrUnauthenticated
		}
		return domain.TokenPair{}, "rejected", err
	}
	if err != nil {
		return domain.TokenPair{}, "rejected", fmt.Errorf("refresh: %w", err)
	}
	rot, event, err := uc.rotate(ctx, c, p, next)
	if err == nil && !c.Digest.IsZero() && rot.Outcome != domain.RefreshRotate {
		// The store rotates unchecked claims or vouches for nothing: prove
		// them, and ask again with next, which it did not store.
		if err = uc.prove(ctx, token, &c); err == nil {
			rot, event, err = uc.rotate(ctx, c, p, next)
		}
	}
	if err != nil {
		return domain.TokenPair{}, "rejected", err
	}
	refreshToken, outcome := next.refresh, "rotated"
	switch rot.Outcome {
	case domain.RefreshRotate: // next's refresh token is the live one now
	case domain.RefreshReissue:
		// A reuse within the grace window: the family keeps its one live
		// token, issued again, so every concurrent answer holds the same
		// refresh token.
		live := rot.Record
		refreshToken, err = uc.d.Tokens.Issuer.RefreshToken(ctx, domain.Claims{Kind: domain.RefreshToken,
			Subject: live.UserID, ID: live.ID, FamilyID: live.FamilyID, IssuedAt: live.IssuedAt, ExpiresAt: live.ExpiresAt,
			SessionStart: start})
		if err != nil {
			return domain.TokenPair{}, "rejected", fmt.Errorf("refresh: sign the live refresh token again: %w", err)
		}
		uc.d.Log.InfoContext(ctx, "refresh token presented again within the reuse grace; live token issued again", "family", c.FamilyID, "user", p.ID)
		outcome = "reissued"
	case domain.RefreshReused:
		uc.reused(ctx, p, c.FamilyID, event)
		return domain.TokenPair{}, "reused", domain.ErrUnauthenticated
	default:
		return domain.TokenPair{}, "rejected", domain.ErrUnauthenticated
	}
	pair, err := uc.d.Tokens.pair(ctx, next, refreshToken)
	if err != nil {
		return domain.TokenPair{}, "rejected", fmt.Errorf("refresh: %w", err)
	}
	return pair, outcome, nil
}

// read returns the claims of token: read unchecked, with Digest set, when
// uc.reader can; else verified, and accepted by the extra validation. The
// reader refuses only tokens the verifier refuses too
// (ports.RefreshTokenReader): no signature check is spent on them.
func (uc *Refresh) read(ctx context.Context, token string) (domain.Claims, error) {
	if uc.reader != nil {
		c, err := uc.reader.ReadRefreshToken(ctx, token)
		if err != nil {
			return domain.Claims{}, unauthenticated(err)
		}
		if c.Digest.IsZero() {
			// A reader that left it unset: the claims are unchecked all
			// the same.
			c.Digest = domain.TokenDigest(token)
		}
		return c, nil
	}
	c, err := uc.d.Verifier.RefreshToken(ctx, token)
	if err != nil {
		return domain.Claims{}, unauthenticated(err)
	}
	c.Digest = domain.Digest{}
	return c, extraValidation(ctx, uc.d.Validator, c, domain.ErrRefreshTokenFailedValidation)
}

// prove checks the signature of token when its claims c were read
// unchecked, which then count as verified: the signature covers the
// string they were read from with every other check. No extra validation
// is due: unchecked reads happen only without one.
func (uc *Refresh) prove(ctx context.Context, token string, c *domain.Claims) error {
	if c.Digest.IsZero() {
		return nil
	}
	if _, err := uc.d.Verifier.RefreshToken(ctx, token); err != nil {
		return unauthenticated(err)
	}
	c.Digest = domain.Digest{}
	return nil
}

// rotate presents c to the store once, with next's record as its
// successor. For verified claims it prepares the refresh.reused event, so
// the store writes it in the transaction that revokes the family.
func (uc *Refresh) rotate(ctx context.Context, c domain.Claims, p domain.Principal, next issue) (ports.Rotation, domain.AuditEvent, error) {
	var event domain.AuditEvent
	var events []domain.AuditEvent
	if c.Digest.IsZero() {
		event, events = uc.d.Audit.Prepare(ctx, domain.AuditEvent{Type: domain.AuditRefreshReused, UserID: p.ID,
			Username: p.Username, Family: c.FamilyID, Address: next.rec.Address})
	}
	// A refresh is its client address's database work, as any anonymous
	// request's (README, "Fair share of the database").
	caller := domain.Caller{Address: next.rec.Address}
	rot, err := uc.d.Tokens.Refresh.For(caller).RotateRefresh(ctx, c, next.rec, next.rec.IssuedAt, uc.d.ReuseGrace, events...)
	if err != nil {
		return ports.Rotation{}, event, fmt.Errorf("refresh: rotate: %w", err)
	}
	return rot, event, nil
}

// reused reports a detected refresh-token reuse after the store revoked
// the family (and, when the stores write events, stored event with the
// revocation): this process refuses the family's access tokens at once,
// and the event is logged, counted, and stored unless it already was.
func (uc *Refresh) reused(ctx context.Context, p domain.Principal, family string, event domain.AuditEvent) {
	if uc.d.Revoked != nil {
		uc.d.Revoked.Add(family)
	}
	uc.d.Log.WarnContext(ctx, "refresh token reuse detected; family revoked", "family", family, "user", p.ID)
	uc.d.Audit.Committed(ctx, event)
}

// sessionExpired is where a refresh refused by the session maximum is
// reported (the audit trail's "session.expired" event belongs here).
func (uc *Refresh) sessionExpired(ctx context.Context, p domain.Principal, family string, client domain.Client) {
	uc.d.Log.InfoContext(ctx, "refresh refused: the session reached its maximum lifetime", "family", family, "user", p.ID)
	uc.d.Audit.Record(ctx, domain.AuditEvent{Type: domain.AuditSessionExpired, UserID: p.ID, Username: p.Username, Family: family,
		Address: client.Address})
}
