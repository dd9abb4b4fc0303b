package josejwt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

var _ ports.TokenIssuer = (*Issuer)(nil)

// Issuer signs tokens with the current key of its Tokens; it implements
// ports.TokenIssuer. Get one from Tokens.Issuer.
type Issuer struct{ t *Tokens }

// payload is the JWT claims set as written.
type payload struct {
	Issuer   string `json:"iss"`
	Subject  string `json:"sub"`
	Audience string `json:"aud"`
	Expiry   int64  `json:"exp"`
	IssuedAt int64  `json:"iat"`
	ID       string `json:"jti"`
	// Session is the refresh family (docs/api.md, "Tokens": sid).
	Session string `json:"sid,omitempty"`
	// AuthTime is when the family's login happened (OpenID Connect's
	// auth_time), in Unix seconds.
	AuthTime int64 `json:"auth_time,omitempty"`
	// ClientID is RFC 9068's client_id, in access tokens only.
	ClientID string `json:"client_id,omitempty"`
	// Roles is ["admin"] in an admin's access tokens, for clients only
	// (docs/admin.md); absent otherwise.
	Roles []string `json:"roles,omitempty"`
}

// AccessToken signs an access token (typ "at+jwt") carrying c, shaped as
// RFC 9068 asks: iss, exp, aud, sub, client_id (Options.ClientID), iat
// and jti, besides sid and auth_time. c.Kind
// must be domain.AccessToken or zero; Subject, ID, IssuedAt and a later
// ExpiresAt are required. The times are written as whole seconds, rounded
// down. A claims problem is a programming error and returned as such.
func (i *Issuer) AccessToken(ctx context.Context, c domain.Claims) (string, error) {
	return i.sign(ctx, domain.AccessToken, c)
}

// RefreshToken is AccessToken for refresh tokens (typ "refresh+jwt"),
// whose aud is the refresh audience (Options.Audience + ":refresh", see
// RefreshAudience) and which carry no client_id: a generic JWT verifier
// expecting the access audience refuses them (README.md, "Tokens").
func (i *Issuer) RefreshToken(ctx context.Context, c domain.Claims) (string, error) {
	return i.sign(ctx, domain.RefreshToken, c)
}

func (i *Issuer) sign(ctx context.Context, kind domain.TokenKind, c domain.Claims) (string, error) {
	if err := checkClaims(kind, c); err != nil {
		return "", fmt.Errorf("sign %s token: %w", kind, err)
	}
	t := i.t
	now := t.opts.Clock.Now()
	cur := t.keys(ctx, now).signerAt(now)
	h, aud, client, roles := cur.access, t.opts.Audience, t.opts.ClientID, domain.RolesOf(c.Admin)
	if kind == domain.RefreshToken {
		h, aud, client, roles = cur.refresh, t.refreshAudience, "", nil
	}
	p := payload{
		Issuer:   t.opts.Issuer,
		Subject:  c.Subject,
		Audience: aud,
		ClientID: client,
		Expiry:   c.ExpiresAt.Unix(),
		IssuedAt: c.IssuedAt.Unix(),
		ID:       c.ID,
		Session:  c.FamilyID,
		AuthTime: unixOrZero(c.SessionStart),
		Roles:    roles,
	}
	var buf [512]byte
	body := p.appendJSON(buf[:0])
	return cur.compact(h, body), nil
}

// appendJSON appends p as encoding/json writes it (TestPayloadIsWhatJSONWrites).
func (p *payload) appendJSON(b []byte) []byte {
	b = appendMember(b, '{', "iss", p.Issuer)
	b = appendMember(b, ',', "sub", p.Subject)
	b = appendMember(b, ',', "aud", p.Audience)
	b = strconv.AppendInt(append(b, `,"exp":`...), p.Expiry, 10)
	b = strconv.AppendInt(append(b, `,"iat":`...), p.IssuedAt, 10)
	b = appendMember(b, ',', "jti", p.ID)
	if p.Session != "" {
		b = appendMember(b, ',', "sid", p.Session)
	}
	if p.AuthTime != 0 {
		b = strconv.AppendInt(append(b, `,"auth_time":`...), p.AuthTime, 10)
	}
	if p.ClientID != "" {
		b = appendMember(b, ',', "client_id", p.ClientID)
	}
	if len(p.Roles) > 0 {
		b = append(b, `,"roles":[`...)
		for i, r := range p.Roles {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, r)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendMember appends sep and the member key: s.
func appendMember(b []byte, sep byte, key, s string) []byte {
	b = append(append(append(b, sep, '"'), key...), '"', ':')
	return appendString(b, s)
}

// appendString appends s as a JSON string, as encoding/json writes it:
// plain ASCII as it is, anything it escapes through encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// checkClaims reports what makes c unfit to be signed as kind.
func checkClaims(kind domain.TokenKind, c domain.Claims) error {
	switch {
	case c.Kind != 0 && c.Kind != kind:
		return fmt.Errorf("claims are of kind %s", c.Kind)
	case c.Subject == "":
		return errors.New("claims have no subject")
	case c.ID == "":
		return errors.New("claims have no id")
	case c.IssuedAt.IsZero() || c.ExpiresAt.IsZero():
		return errors.New("claims need both IssuedAt and ExpiresAt")
	case c.ExpiresAt.Unix() <= c.IssuedAt.Unix():
		return errors.New("claims expire before they are issued")
	}
	return nil
}

// unixOrZero returns t in Unix seconds, or 0 for the zero time.
func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}
