package domain

import (
	"slices"
	"time"
)

// RefreshKept is how many replaced tokens a refresh family remembers, with
// the time each was first used. Two is what the reuse grace needs for a
// client whose straggling request presents a token the family replaced
// twice since (RefreshFamily.Judge).
const RefreshKept = 2

// RefreshFamily is the stored state of a refresh family: the session one
// login started. Rotation replaces the live token with its successor in
// place, so storage grows with live sessions, not with refreshes. As a
// presented token names its family in its signed claims (sid), the live
// token and the Used ones are all reuse detection and the reuse grace need
// (ARCHITECTURE.md, "Authentication").
type RefreshFamily struct {
	ID     string // the family id: the sid claim of its tokens
	UserID string
	// CurrentID is the jti of the family's live token, the one a refresh
	// may rotate; empty when the family has none.
	CurrentID string
	// CurrentDigest is the live token's TokenDigest; zero when unknown
	// (imported, or the live token issued again): unchecked claims then
	// never match.
	CurrentDigest Digest
	// IssuedAt and ExpiresAt are the live token's. No token of the family
	// outlives ExpiresAt, so the family is purged after it.
	IssuedAt  time.Time
	ExpiresAt time.Time
	// Generation counts the family's rotations.
	Generation int64
	// Used are the tokens the family replaced last, newest first, each
	// with the time it was first used (the rotation that replaced it); at
	// most RefreshKept.
	Used []UsedRefresh
	// RevokedAt is set when the family was revoked (logout, reuse,
	// password change, disabled user).
	RevokedAt *time.Time
	// Created is the login that started the family (zero for a family
	// stored before it was recorded); Address and UserAgent those of the
	// last login or refresh (docs/admin.md).
	Created   time.Time
	Address   string
	UserAgent string
}

// Session returns the family as a session; the live token's issue is its
// last use.
func (f RefreshFamily) Session() Session {
	created := f.Created
	if created.IsZero() {
		created = f.IssuedAt
	}
	return Session{ID: f.ID, UserID: f.UserID, DateCreated: created, LastUsed: f.IssuedAt, Address: f.Address,
		UserAgent: f.UserAgent, ExpiresAt: f.ExpiresAt, RevokedAt: f.RevokedAt}
}

// UsedRefresh is a replaced token a family remembers.
type UsedRefresh struct {
	ID     string // the token's jti
	UsedAt time.Time
}

// NewRefreshFamily returns the family a login starts, whose live token is
// r (r.UsedAt is ignored; r.RevokedAt revokes the family).
func NewRefreshFamily(r RefreshRecord) RefreshFamily {
	return RefreshFamily{ID: r.FamilyID, UserID: r.UserID, CurrentID: r.ID, CurrentDigest: r.Digest, IssuedAt: Normalize(r.IssuedAt),
		ExpiresAt: Normalize(r.ExpiresAt), RevokedAt: NormalizePtr(r.RevokedAt), Created: Normalize(r.IssuedAt),
		Address: r.Address, UserAgent: CutUserAgent(r.UserAgent)}
}

// Current returns the live token's record.
func (f RefreshFamily) Current() RefreshRecord {
	return RefreshRecord{ID: f.CurrentID, Digest: f.CurrentDigest, FamilyID: f.ID, UserID: f.UserID, IssuedAt: f.IssuedAt, ExpiresAt: f.ExpiresAt}
}

// Rotated returns the family after its live token was replaced by next at
// now: the live token joins Used (first used at now), next becomes live.
func (f RefreshFamily) Rotated(next RefreshRecord, now time.Time) RefreshFamily {
	used := make([]UsedRefresh, 0, RefreshKept)
	used = append(used, UsedRefresh{ID: f.CurrentID, UsedAt: Normalize(now)})
	used = append(used, f.Used[:min(len(f.Used), RefreshKept-1)]...)
	f.Used = used
	f.CurrentID, f.CurrentDigest = next.ID, next.Digest
	f.IssuedAt, f.ExpiresAt = Normalize(next.IssuedAt), Normalize(next.ExpiresAt)
	f.Address, f.UserAgent = next.Address, CutUserAgent(next.UserAgent)
	f.Generation++
	return f
}

// Holds reports whether id is the live token or one of the used tokens
// the family remembers.
func (f RefreshFamily) Holds(id string) bool {
	return id == f.CurrentID || slices.ContainsFunc(f.Used, func(u UsedRefresh) bool { return u.ID == id })
}

// RefreshVerdict is what presenting a refresh token of a family means;
// a refresh store answers the one it acted on (ports.Rotation).
type RefreshVerdict uint8

// The verdicts of RefreshFamily.Judge.
const (
	// RefreshRefused: the token cannot be used (family revoked or
	// expired, token expired, or not the family's user's); answer
	// unauthenticated and change nothing.
	RefreshRefused RefreshVerdict = iota
	// RefreshRotate: the token is the live one; it may be replaced by its
	// successor.
	RefreshRotate
	// RefreshReissue: the token was first used less than the reuse grace
	// ago; the family's live token is to be issued again, nothing stored.
	RefreshReissue
	// RefreshReused: the token was used before; the family is to be
	// revoked.
	RefreshReused
	// RefreshUnproven: the claims were read without their signature
	// checked (Claims.Digest) and are not the live token's exact string;
	// change nothing and let the caller check the signature.
	RefreshUnproven
)

// Judge tells what presenting the refresh token p (its verified claims) at
// now means for the family, with the reuse grace given (zero: none).
//
//   - A revoked family, a family whose live token has expired (so every
//     token of it has), a token expired by its own claims, or one whose
//     subject is not the family's user: refused.
//   - The live token: rotate.
//   - A used token the family remembers, first used less than grace ago:
//     reissue the live token (refused when there is none).
//   - Any other token of the family (a used one first used grace or more
//     ago, or one older than those the family remembers, used before
//     them): reused.
//
// Claims read without their signature checked (p.Digest set) are judged
// only as the live token, when p.Digest is the family's CurrentDigest (the
// exact string issued); anything else they might mean is unproven: no
// reuse detected, no grace given. The grace is exact while a family
// rotates at most RefreshKept times within one window.
func (f RefreshFamily) Judge(p Claims, now time.Time, grace time.Duration) RefreshVerdict {
	now = Normalize(now)
	if !p.Digest.IsZero() {
		if f.CurrentID == "" || p.ID != f.CurrentID || !p.Digest.Matches(f.CurrentDigest) {
			return RefreshUnproven
		}
	}
	switch {
	case f.RevokedAt != nil, !f.ExpiresAt.After(now), p.Subject != f.UserID:
		return RefreshRefused
	case f.CurrentID != "" && p.ID == f.CurrentID:
		return RefreshRotate
	case !p.ExpiresAt.After(now):
		return RefreshRefused
	}
	for _, u := range f.Used {
		if u.ID != p.ID {
			continue
		}
		if grace > 0 && u.UsedAt.After(now.Add(-grace)) {
			if f.CurrentID == "" {
				return RefreshRefused
			}
			return RefreshReissue
		}
		return RefreshReused
	}
	return RefreshReused
}
