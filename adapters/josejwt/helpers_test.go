package josejwt_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/cachegate/cachegate/adapters/josejwt"
	"github.com/cachegate/cachegate/domain"
)

// testSecret is an HS256 secret for tests only.
var testSecret = []byte("0123456789abcdef0123456789abcdef-test-only")

// env is one Tokens under test with what a test needs to forge tokens
// with its genuine key.
type env struct {
	name  string
	tok   *josejwt.Tokens
	clock *fakeClock
	store *memKeys
	alg   jose.SignatureAlgorithm
	// key is the genuine signing key (ed25519.PrivateKey or []byte).
	key any
	kid string
}

func newEdDSA(t testing.TB, opt func(*josejwt.Options)) *env {
	t.Helper()
	e := &env{name: "EdDSA", clock: newClock(), store: &memKeys{}, alg: jose.EdDSA}
	o := josejwt.Options{Keys: e.store, Clock: e.clock}
	if opt != nil {
		opt(&o)
	}
	tok, err := josejwt.New(context.Background(), o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e.tok = tok
	cur := e.store.current()
	e.key, e.kid = ed25519.NewKeyFromSeed(cur.Private), cur.ID
	return e
}

func newHS256(t testing.TB, opt func(*josejwt.Options)) *env {
	t.Helper()
	e := &env{name: "HS256", clock: newClock(), alg: jose.HS256, key: testSecret}
	o := josejwt.Options{HS256Secret: testSecret, Clock: e.clock}
	if opt != nil {
		opt(&o)
	}
	tok, err := josejwt.New(context.Background(), o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e.tok = tok
	at, err := tok.Issuer().AccessToken(context.Background(), e.claims(domain.AccessToken, time.Minute))
	if err != nil {
		t.Fatalf("AccessToken: %v", err)
	}
	e.kid = header(t, at)["kid"].(string)
	return e
}

// bothModes returns a fresh env of each signing mode.
func bothModes(t testing.TB, opt func(*josejwt.Options)) []*env {
	return []*env{newEdDSA(t, opt), newHS256(t, opt)}
}

// claims returns claims of kind issued now and valid for ttl.
func (e *env) claims(kind domain.TokenKind, ttl time.Duration) domain.Claims {
	now := e.clock.Now()
	return domain.Claims{Kind: kind, Subject: "0195f3a4-0000-7000-8000-000000000001", ID: "jti-" + now.Format(time.RFC3339Nano),
		FamilyID: "fam-1", IssuedAt: now, ExpiresAt: now.Add(ttl)}
}

// issue signs c with the kind's issuer method.
func (e *env) issue(t testing.TB, c domain.Claims) string {
	t.Helper()
	ctx := context.Background()
	var (
		tok string
		err error
	)
	if c.Kind == domain.RefreshToken {
		tok, err = e.tok.Issuer().RefreshToken(ctx, c)
	} else {
		tok, err = e.tok.Issuer().AccessToken(ctx, c)
	}
	if err != nil {
		t.Fatalf("issue %s token: %v", c.Kind, err)
	}
	return tok
}

// verify checks tok as kind.
func (e *env) verify(kind domain.TokenKind, tok string) (domain.Claims, error) {
	if kind == domain.RefreshToken {
		return e.tok.Verifier().RefreshToken(context.Background(), tok)
	}
	return e.tok.Verifier().AccessToken(context.Background(), tok)
}

// forge signs payload with key and alg, setting the given headers.
func forge(t testing.TB, alg jose.SignatureAlgorithm, key any, headers map[string]any, payload string) string {
	t.Helper()
	opts := &jose.SignerOptions{}
	for k, v := range headers {
		opts.WithHeader(jose.HeaderKey(k), v)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatalf("NewSigner: %v", err)
	}
	jws, err := s.Sign([]byte(payload))
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatalf("CompactSerialize: %v", err)
	}
	return out
}

// payloadJSON returns a valid claims set at now, changed by edit.
func (e *env) payloadJSON(t testing.TB, edit func(m map[string]any)) string {
	t.Helper()
	now := e.clock.Now()
	m := map[string]any{"iss": "cachegate", "aud": "cachegate", "sub": "user-1", "jti": "jti-1", "sid": "fam-1",
		"client_id": "cachegate", "iat": now.Unix(), "exp": now.Add(time.Minute).Unix()}
	if edit != nil {
		edit(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// segment decodes part i of a compact token as JSON.
func segment(t testing.TB, tok string, i int) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[i])
	if err != nil {
		t.Fatalf("decode part %d: %v", i, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("part %d: %v", i, err)
	}
	return m
}

func header(t testing.TB, tok string) map[string]any { return segment(t, tok, 0) }

// jwks decodes the key set of tok.
func jwks(t testing.TB, tok *josejwt.Tokens) (set jose.JSONWebKeySet, raw []map[string]any) {
	t.Helper()
	b, err := tok.JWKS(context.Background())
	if err != nil {
		t.Fatalf("JWKS: %v", err)
	}
	if err := json.Unmarshal(b, &set); err != nil {
		t.Fatalf("JWKS is not a key set: %v", err)
	}
	var m struct{ Keys []map[string]any }
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return set, m.Keys
}

func kids(set jose.JSONWebKeySet) []string {
	out := make([]string, len(set.Keys))
	for i, k := range set.Keys {
		out[i] = k.KeyID
	}
	return out
}
