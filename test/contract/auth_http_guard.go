package contract

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// ahGuardTests: every route but the public ones needs a valid access
// token; the public ones work without one, even with a bad one.
func ahGuardTests(t *testing.T, s *ahSuite) {
	t.Run("guarded routes answer 401 with WWW-Authenticate without a token", func(t *testing.T) {
		t.Parallel()
		id := webUUID()
		entry := webBody("k", "t", webUUID(), `"v"`, `null`)
		reqs := []struct {
			method, path string
			body         []byte
		}{
			{http.MethodGet, s.web.coll(), nil},
			{http.MethodGet, s.web.coll() + "?limit=1", nil},
			{http.MethodPost, s.web.coll(), entry},
			{http.MethodGet, s.web.item(id), nil},
			{http.MethodPut, s.web.item(id), entry},
			{http.MethodPatch, s.web.item(id), []byte(`{"data":1}`)},
			{http.MethodDelete, s.web.item(id), nil},
			{http.MethodPost, "/auth/logout", nil},
		}
		for _, p := range s.target.ExtraGuarded {
			reqs = append(reqs, struct {
				method, path string
				body         []byte
			}{http.MethodGet, p, nil})
		}
		for _, rq := range reqs {
			for _, hdr := range [][]string{nil, {"Authorization", "Basic dXNlcjpwYXNzd29yZA=="}, {"Authorization", "Bearer"}} {
				r := s.web.do(t, rq.method, rq.path, rq.body, hdr...)
				if r.Status != http.StatusUnauthorized {
					t.Errorf("%s %s with %v: status %d, want 401", rq.method, rq.path, hdr, r.Status)
					continue
				}
				ahWantUnauthorized(t, r, true)
			}
		}
	})

	t.Run("public routes need no token and ignore a bad one", func(t *testing.T) {
		t.Parallel()
		u := s.user(t, true)
		for _, bad := range [][]string{nil, {"Authorization", "Bearer not-a-token"}, {"Authorization", "Basic eA=="}} {
			for _, path := range []string{"/healthz", "/readyz", "/.well-known/jwks.json"} {
				if r := s.web.do(t, http.MethodGet, path, nil, bad...); r.Status != http.StatusOK {
					t.Errorf("GET %s with %v: status %d, want 200", path, bad, r.Status)
				}
			}
			if r := s.web.do(t, http.MethodGet, "/openapi.json", nil, bad...); r.Status == http.StatusUnauthorized {
				t.Errorf("GET /openapi.json with %v: 401, but it is public", bad)
			}
			p := s.wantPair(t, s.tryLogin(t, u.Name, u.Password, bad...), u.ID)
			b := []byte(`{"refreshToken":"` + p.Refresh + `"}`)
			s.wantPair(t, s.web.do(t, http.MethodPost, "/auth/refresh", b, bad...), u.ID)
		}
	})

	t.Run("an access token opens the owner assignment", func(t *testing.T) {
		t.Parallel()
		u := s.user(t, true)
		p := s.login(t, u)
		bearer := []string{"Authorization", "Bearer " + p.Access}
		e := s.web.do(t, http.MethodPost, s.web.coll(), webBody("k", "t", u.ID, `"mine"`, `null`), bearer...).entry(t, http.StatusCreated)
		s.web.do(t, http.MethodGet, s.web.item(e.ID), nil, bearer...).entry(t, http.StatusOK)
		// The scheme is case-insensitive (RFC 7235).
		s.web.do(t, http.MethodGet, s.web.item(e.ID), nil, "Authorization", "bearer "+p.Access).entry(t, http.StatusOK)
		list := s.web.do(t, http.MethodGet, s.web.coll(), nil, bearer...)
		if list.Status != http.StatusOK || !strings.Contains(string(list.Body), e.ID) {
			t.Errorf("the owner's list answered %d without the entry", list.Status)
		}
		s.web.do(t, http.MethodDelete, s.web.item(e.ID), nil, bearer...).entry(t, http.StatusOK)
	})

	t.Run("the JWKS publishes the signing key of issued tokens and nothing private", func(t *testing.T) {
		t.Parallel()
		p := s.login(t, s.user(t, true))
		h, _ := ahDecode(t, p.Access)
		kid, _ := h["kid"].(string)
		if rk := ahKid(t, p.Refresh); rk != kid {
			t.Errorf("the refresh token's kid %q differs from the access token's %q", rk, kid)
		}
		r := s.get(t, "/.well-known/jwks.json", "")
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "application/jwk-set+json") {
			t.Errorf("JWKS Content-Type %q", ct)
		}
		keys := s.jwks(t)
		for _, k := range keys {
			for _, private := range []string{"d", "k", "p", "q", "dp", "dq", "qi"} {
				if _, ok := k[private]; ok {
					t.Errorf("JWKS key %v publishes the private member %q", k["kid"], private)
				}
			}
		}
		if h["alg"] == "HS256" {
			if len(keys) != 0 {
				t.Errorf("in HS256 mode the JWKS lists %d keys, want none", len(keys))
			}
			return
		}
		k := ahJWKByKid(keys, kid)
		if k == nil {
			t.Fatalf("the JWKS does not list the tokens' kid %q", kid)
		}
		x, _ := k["x"].(string)
		raw, err := base64.RawURLEncoding.DecodeString(x)
		if k["kty"] != "OKP" || k["crv"] != "Ed25519" || err != nil || len(raw) != 32 {
			t.Errorf("JWKS key %s: kty %v crv %v and %d bytes of x, want OKP Ed25519 and 32", kid, k["kty"], k["crv"], len(raw))
		}
		if alg, ok := k["alg"]; ok && alg != "EdDSA" {
			t.Errorf("JWKS key %s: alg %v, want EdDSA", kid, alg)
		}
		if use, ok := k["use"]; ok && use != "sig" {
			t.Errorf("JWKS key %s: use %v, want sig", kid, use)
		}
	})
}

// ahOwnerTests: under policy owner, user B can neither see nor change
// user A's entries, and cannot create entries for A.
func ahOwnerTests(t *testing.T, s *ahSuite) {
	t.Run("a user cannot read, list, change, delete or create another user's entries", func(t *testing.T) {
		t.Parallel()
		a, b := s.user(t, true), s.user(t, true)
		pa, pb := s.login(t, a), s.login(t, b)
		asA := []string{"Authorization", "Bearer " + pa.Access}
		asB := []string{"Authorization", "Bearer " + pb.Access}
		e := s.web.do(t, http.MethodPost, s.web.coll(), webBody("secret", "t", a.ID, `"a's"`, `null`), asA...).entry(t, http.StatusCreated)

		s.web.do(t, http.MethodGet, s.web.item(e.ID), nil, asB...).fail(t, http.StatusNotFound, "")
		mine := s.web.do(t, http.MethodPost, s.web.coll(), webBody("mine", "t", b.ID, `"b's own"`, `null`), asB...).entry(t, http.StatusCreated)
		// Nothing in the query language widens the owner policy: ors,
		// searches, negations and lists naming A, in every syntax.
		esc := url.QueryEscape
		for _, q := range []string{"", "?assignee.id=" + a.ID, "?key=secret", "?filter=assignee.id||$eq||" + a.ID, "?page=1&limit=10",
			"?or=assignee.id||$eq||" + a.ID,
			"?or=assignee.id||$eq||" + a.ID + "&or=key||$eq||secret",
			"?filter=key||$eq||nothing&or=assignee.id||$eq||" + a.ID,
			"?filter[]=key||$eq||nothing&or[]=assignee.id||$eq||" + a.ID,
			"?filter=assignee.id||$ne||" + b.ID,
			"?or=assignee.id||$ne||" + b.ID,
			"?filter=assignee.id||$in||" + a.ID + "," + b.ID,
			"?filter=assignee.id||$notin||" + b.ID,
			"?filter=assignee.id||$neL||" + strings.ToUpper(b.ID),
			"?filter=key||$ne||x&or=key||$eq||secret",
			"?s=" + esc(`{"$or":[{"assignee.id":"`+a.ID+`"},{"key":"secret"}]}`),
			"?s=" + esc(`{"assignee.id":{"$ne":"`+b.ID+`"}}`),
			"?s=" + esc(`{"$or":[{"$and":[{"key":"secret"},{"assignee.id":{"$in":["`+a.ID+`"]}}]},{"version":{"$gte":0}}]}`),
			"?s=" + esc(`{"assignee.id":{"$or":{"$eq":"`+a.ID+`","$ne":"x"}}}`) + "&page=1",
		} {
			r := s.web.do(t, http.MethodGet, s.web.coll()+q, nil, asB...)
			if r.Status != http.StatusOK || strings.Contains(string(r.Body), e.ID) || strings.Contains(string(r.Body), `"a's"`) {
				t.Errorf("B's list %q answered %d and shows A's entry: %v", q, r.Status, strings.Contains(string(r.Body), e.ID))
			}
		}
		// The same queries still find what B may see.
		for _, q := range []string{"?filter=assignee.id||$in||" + a.ID + "," + b.ID, "?filter=assignee.id||$ne||" + a.ID,
			"?or=assignee.id||$eq||" + a.ID + "&or=key||$eq||mine", "?s=" + esc(`{"$or":[{"assignee.id":"`+a.ID+`"},{"key":"mine"}]}`)} {
			r := s.web.do(t, http.MethodGet, s.web.coll()+q, nil, asB...)
			if r.Status != http.StatusOK || !strings.Contains(string(r.Body), mine.ID) {
				t.Errorf("B's list %q answered %d without B's own entry: %s", q, r.Status, ahShow(r))
			}
		}
		ahWantStatus(t, s.web.do(t, http.MethodPut, s.web.item(e.ID), webBody("secret", "t", a.ID, `"b's"`, `null`), asB...),
			"B's PUT naming A", http.StatusForbidden, http.StatusNotFound)
		ahWantStatus(t, s.web.do(t, http.MethodPut, s.web.item(e.ID), webBody("secret", "t", b.ID, `"b's"`, `null`), asB...),
			"B's PUT of A's id naming B", http.StatusNotFound, http.StatusForbidden, http.StatusConflict)
		ahWantStatus(t, s.web.do(t, http.MethodPatch, s.web.item(e.ID), []byte(`{"data":"b's"}`), asB...),
			"B's PATCH", http.StatusNotFound)
		ahWantStatus(t, s.web.do(t, http.MethodPatch, s.web.item(e.ID), []byte(`{"assignee":{"id":"`+b.ID+`"}}`), asB...),
			"B's PATCH taking the entry over", http.StatusNotFound)
		ahWantStatus(t, s.web.do(t, http.MethodDelete, s.web.item(e.ID), nil, asB...), "B's DELETE", http.StatusNotFound)
		s.web.do(t, http.MethodPost, s.web.coll(), webBody("other", "t", a.ID, `"b's"`, `null`), asB...).fail(t, http.StatusForbidden, "")
		s.web.do(t, http.MethodPut, s.web.item(webUUID()), webBody("other", "t", a.ID, `"b's"`, `null`), asB...).fail(t, http.StatusForbidden, "")

		got := s.web.do(t, http.MethodGet, s.web.item(e.ID), nil, asA...).entry(t, http.StatusOK)
		if got.Version != 1 || string(got.Data) != `"a's"` || got.Assignee.ID != a.ID {
			t.Errorf("after B's attempts A's entry is version %d data %s assignee %s, want it untouched",
				got.Version, got.Data, got.Assignee.ID)
		}
		list := s.web.do(t, http.MethodGet, s.web.coll(), nil, asA...)
		if strings.Contains(string(list.Body), `"b's"`) {
			t.Error("B created an entry visible to A")
		}
	})
}

// ahWantStatus checks that r has one of statuses.
func ahWantStatus(t *testing.T, r webReply, what string, statuses ...int) {
	t.Helper()
	for _, st := range statuses {
		if r.Status == st {
			webParseEnvelope(t, r)
			return
		}
	}
	t.Errorf("%s: status %d, want one of %v: %s", what, r.Status, statuses, ahShow(r))
}
