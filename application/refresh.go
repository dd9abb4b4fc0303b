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
}

// Refresh exchanges a refresh token for a new pair. Refresh tokens
// rotate: the presented one is consumed and its successor joins the same
// family; presenting a consumed token revokes the whole family, unless it
// is within the reuse grace (see RefreshDeps.ReuseGrace).
type Refresh struct {
	d RefreshDeps
	// reader reads refresh tokens unchecked, first; nil when the verifier
	// cannot, the store does not judge digests, or an extra validation is
	// configured (it must see verified claims only).
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
	uc := &Refresh{d: d}
	if r, ok := d.Verifier.(ports.RefreshTokenReader); ok && d.Validator == nil {
		if _, judges := d.Tokens.Refresh.(ports.RefreshDigests); judges {
			uc.reader = r
		}
	}
	return uc, nil
}

// Execute returns the new pair. An invalid, expired, revoked or already
// used token, or one whose user is gone or inactive, is
// domain.ErrUnauthenticated; a verified token the extra validation refuses
// is domain.ErrRefreshTokenFailedValidation.
func (uc *Refresh) Execute(ctx context.Context, token string) (domain.TokenPair, error) {
	pair, err := uc.execute(ctx, token)
	switch {
	case err == nil:
		uc.d.Metrics.RefreshOutcome("rotated")
	case errors.Is(err, errReissued):
		uc.d.Metrics.RefreshOutcome("reissued")
		err = nil
	case errors.Is(err, errReused):
		uc.d.Metrics.RefreshOutcome("reused")
		err = domain.ErrUnauthenticated
	default:
		uc.d.Metrics.RefreshOutcome("rejected")
	}
	return pair, err
}

// errReused marks a detected reuse inside Refresh; callers see
// domain.ErrUnauthenticated. errReissued marks a reuse forgiven within the
// grace window; callers see success.
var (
	errReused   = errors.New("refresh token reused")
	errReissued = errors.New("refresh token issued again")
)

// execute exchanges token. When the verifier can read a refresh token
// without checking its signature (ports.RefreshTokenReader), the store
// judges such claims (ports.RefreshDigests) and no extra validation is
// configured, it first presents those claims to the store, which rotates
// only the family's live token by its exact string
// (domain.RefreshFamily.Judge); on any other answer it checks the
// signature and goes the verified way. Nothing but the verified way ever
// revokes, forgives or records. A genuine live token so costs no
// signature check, a token the read refuses a parse; a forged one naming
// an existing user costs the lookup, the new pair's signatures and the
// rotation's statement before its own check refuses it, about what a
// genuine refresh costs.
func (uc *Refresh) execute(ctx context.Context, token string) (domain.TokenPair, error) {
	if uc.reader != nil {
		c, err := uc.reader.ReadRefreshToken(ctx, token)
		if err != nil {
			// The reader refuses only tokens the verifier refuses too
			// (ports.RefreshTokenReader): no signature check is spent on
			// them.
			return domain.TokenPair{}, unauthenticated(err)
		}
		pair, err := uc.exchange(ctx, c)
		if !errors.Is(err, domain.ErrRefreshTokenUnproven) {
			return pair, err
		}
	}
	c, err := uc.d.Verifier.RefreshToken(ctx, token)
	if err != nil {
		return domain.TokenPair{}, unauthenticated(err)
	}
	if err := extraValidation(ctx, uc.d.Validator, c, domain.ErrRefreshTokenFailedValidation); err != nil {
		return domain.TokenPair{}, err
	}
	c.Digest = domain.Digest{}
	return uc.exchange(ctx, c)
}

// exchange mints the pair that succeeds the refresh token of claims c and
// rotates it in the store. Claims read unchecked (c.Digest set) act on
// nothing but a rotation of the live token: every other outcome that
// would change or record something is domain.ErrRefreshTokenUnproven.
func (uc *Refresh) exchange(ctx context.Context, c domain.Claims) (domain.TokenPair, error) {
	unchecked := !c.Digest.IsZero()
	p, err := uc.d.Lookup.BySubject(ctx, c.Subject)
	if errors.Is(err, domain.ErrUserNotFound) {
		return domain.TokenPair{}, domain.ErrUnauthenticated
	}
	if err != nil {
		return domain.TokenPair{}, fmt.Errorf("refresh: look up subject: %w", err)
	}
	family := c.FamilyID
	if family == "" {
		if unchecked {
			return domain.TokenPair{}, domain.ErrRefreshTokenUnproven
		}
		// A token from an integrator's issuer without families starts one.
		family = uc.d.Tokens.IDs.NewID()
	}
	start := c.SessionStart
	if start.IsZero() {
		// A token minted before sessions carried their start (or by an
		// integrator's issuer): its own issue time is the earliest known.
		start = c.IssuedAt
	}
	pair, rec, err := uc.d.Tokens.mint(ctx, p.ID, family, start, p.Admin, requestClient(ctx))
	if errors.Is(err, errSessionOver) {
		if unchecked {
			return domain.TokenPair{}, domain.ErrRefreshTokenUnproven
		}
		uc.sessionExpired(ctx, p, family)
		return domain.TokenPair{}, domain.ErrUnauthenticated
	}
	if err != nil {
		return domain.TokenPair{}, fmt.Errorf("refresh: %w", err)
	}
	// The presented token, as the store judges it: its family is the one
	// its claims name (a new one for a token without, which the store
	// does not know).
	presented := c
	presented.FamilyID = family
	// The refresh.reused event is prepared before the rotation, so the
	// store writes it in the transaction that revokes the family.
	var event domain.AuditEvent
	var events []domain.AuditEvent
	if !unchecked {
		event, events = uc.d.Audit.Prepare(ctx, domain.AuditEvent{Type: domain.AuditRefreshReused, UserID: p.ID,
			Username: p.Username, Family: family, Address: requestClient(ctx).Address})
	}
	live, err := uc.d.Tokens.Refresh.RotateRefresh(ctx, presented, rec, rec.IssuedAt, uc.d.ReuseGrace, events...)
	switch {
	case errors.Is(err, domain.ErrRefreshTokenUnproven):
		return domain.TokenPair{}, err
	case unchecked && domain.KindOf(err) == domain.KindUnauthenticated:
		// Refused (a revoked or expired family): the verified way gives
		// the answer, as it would have without this one.
		return domain.TokenPair{}, domain.ErrRefreshTokenUnproven
	case errors.Is(err, domain.ErrRefreshTokenReused):
		uc.reused(ctx, p, family, event)
		return domain.TokenPair{}, errReused
	case domain.KindOf(err) == domain.KindUnauthenticated:
		return domain.TokenPair{}, domain.ErrUnauthenticated
	case err != nil:
		return domain.TokenPair{}, fmt.Errorf("refresh: rotate: %w", err)
	case live.ID != rec.ID:
		if unchecked {
			return domain.TokenPair{}, domain.ErrRefreshTokenUnproven
		}
		// A reuse within the grace window: the family keeps its one live
		// token, issued again, so every concurrent answer holds the same
		// refresh token.
		pair.RefreshToken, err = uc.d.Tokens.Issuer.RefreshToken(ctx, domain.Claims{Kind: domain.RefreshToken,
			Subject: live.UserID, ID: live.ID, FamilyID: live.FamilyID, IssuedAt: live.IssuedAt, ExpiresAt: live.ExpiresAt,
			SessionStart: start})
		if err != nil {
			return domain.TokenPair{}, fmt.Errorf("refresh: sign the live refresh token again: %w", err)
		}
		uc.d.Log.InfoContext(ctx, "refresh token presented again within the reuse grace; live token issued again", "family", family, "user", p.ID)
		return pair, errReissued
	}
	return pair, nil
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
func (uc *Refresh) sessionExpired(ctx context.Context, p domain.Principal, family string) {
	uc.d.Log.InfoContext(ctx, "refresh refused: the session reached its maximum lifetime", "family", family, "user", p.ID)
	uc.d.Audit.Record(ctx, domain.AuditEvent{Type: domain.AuditSessionExpired, UserID: p.ID, Username: p.Username, Family: family,
		Address: requestClient(ctx).Address})
}
