package application_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// A refresh token issued before refresh tokens carried their own audience
// (its aud is the access audience) still refreshes, so that no session
// ends with the upgrade, and its successor carries the refresh audience
// (README.md, "Tokens").
func TestARefreshTokenOfThePlainAudienceRefreshesAfterTheUpgrade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newAuthEnv(t, authOpts{})
	e.addUser(t, "Alice", pw, true)
	pair, err := e.login.Execute(ctx, application.LoginInput{Username: "alice", Password: pw})
	if err != nil {
		t.Fatal(err)
	}
	if aud := tokenClaims(t, pair.RefreshToken)["aud"]; aud != "cachegate:refresh" {
		t.Fatalf("refresh token aud %v, want cachegate:refresh", aud)
	}
	// The same token as the version before wrote it: aud "cachegate",
	// signed with the same key (newAuthEnv's HS256 secret).
	parts := strings.Split(pair.RefreshToken, ".")
	claims := tokenClaims(t, pair.RefreshToken)
	claims["aud"] = "cachegate"
	body, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	input := parts[0] + "." + base64.RawURLEncoding.EncodeToString(body)
	m := hmac.New(sha256.New, []byte(strings.Repeat("s", 32)))
	m.Write([]byte(input))
	legacy := input + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))

	next, err := e.refresher.Execute(ctx, legacy, domain.Client{})
	if err != nil {
		t.Fatalf("refreshing with a refresh token of the plain audience: %v", err)
	}
	if aud := tokenClaims(t, next.RefreshToken)["aud"]; aud != "cachegate:refresh" {
		t.Errorf("its successor's aud %v, want cachegate:refresh", aud)
	}
	if _, err := e.refresher.Execute(ctx, legacy, domain.Client{}); err == nil {
		t.Error("the legacy token refreshed twice: it should have been used up")
	}
}

// tokenClaims decodes a token's claims without verifying them.
func tokenClaims(t *testing.T, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("a token of %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
