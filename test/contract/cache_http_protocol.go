package contract

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func webExpiryTests(t *testing.T, s *webSuite) {
	// Not parallel: it may move the service's clock, which every other
	// subtest tolerates only by small amounts.
	t.Run("an expired entry is never returned, and its key is free again", func(t *testing.T) {
		who := webUUID()
		e := s.create(t, "k", "t", who, `"soon gone"`, `"1s"`)
		keep := s.create(t, "keep", "t", who, `1`, `"1h"`)
		if e.ExpirationDate == nil {
			t.Fatal("no expirationDate")
		}
		if s.target.Advance != nil {
			s.target.Advance(999 * time.Millisecond)
			s.do(t, http.MethodGet, s.item(e.ID), nil).entry(t, http.StatusOK)
			// From the very instant of expiry.
			s.target.Advance(time.Millisecond)
			s.do(t, http.MethodGet, s.item(e.ID), nil).fail(t, http.StatusNotFound, "CACHE_ENTITY_NOT_FOUND")
		} else {
			deadline := time.Now().Add(5 * time.Second)
			for s.do(t, http.MethodGet, s.item(e.ID), nil).Status == http.StatusOK {
				if time.Now().After(deadline) {
					t.Fatal("an entry with expiresIn 1s was still returned after 5s")
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		s.do(t, http.MethodGet, s.item(e.ID), nil).fail(t, http.StatusNotFound, "CACHE_ENTITY_NOT_FOUND")
		if got := webKeys(s.listOf(t, "?assignee.id="+who)); len(got) != 1 || got[0] != "keep" {
			t.Errorf("list after expiry: %v, want [keep]", got)
		}
		p, _ := s.pageOf(t, "?assignee.id="+who+"&page=1")
		if p.Total != 1 {
			t.Errorf("paged total after expiry: %d, want 1", p.Total)
		}
		s.do(t, http.MethodPatch, s.item(e.ID), []byte(`{"data":1}`)).fail(t, http.StatusNotFound, "")
		s.do(t, http.MethodDelete, s.item(e.ID), nil).fail(t, http.StatusNotFound, "")
		s.do(t, http.MethodPut, s.item(e.ID), webBody("k", "t", who, `1`, `null`), "If-Match", `"1"`).
			fail(t, http.StatusPreconditionFailed, "")
		again := s.create(t, "k", "t", who, `"back"`, `null`)
		if again.ID == e.ID {
			t.Errorf("the recreated entry reused the expired entry's id")
		}
		s.do(t, http.MethodGet, s.item(keep.ID), nil).entry(t, http.StatusOK)
	})
}

func webProtocolTests(t *testing.T, s *webSuite) {
	t.Run("bodies that are not declared JSON are 415", func(t *testing.T) {
		t.Parallel()
		body := webBody("k", "t", webUUID(), `1`, `null`)
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/xml",
			"application/json; charset=latin1", "application/jsonx", "", ";;;"} {
			r := s.do(t, http.MethodPost, s.coll(), body, "Content-Type", ct)
			if r.Status != http.StatusUnsupportedMediaType {
				t.Errorf("Content-Type %q: status %d, want 415", ct, r.Status)
				continue
			}
			r.fail(t, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
		}
		e := s.create(t, "k0", "t", webUUID(), `1`, `null`)
		s.do(t, http.MethodPatch, s.item(e.ID), []byte(`{"data":2}`), "Content-Type", "text/plain").
			fail(t, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
		for _, ct := range []string{"application/json; charset=utf-8", "APPLICATION/JSON", "application/json;charset=UTF-8"} {
			s.do(t, http.MethodPost, s.coll(), webBody("k", "t", webUUID(), `1`, `null`), "Content-Type", ct).
				entry(t, http.StatusCreated)
		}
	})

	t.Run("bodies over the limit are 413, with or without a Content-Length", func(t *testing.T) {
		t.Parallel()
		limit := s.bodyLimit()
		big := webBody("k", "t", webUUID(), `"`+strings.Repeat("x", int(limit))+`"`, `null`)
		s.do(t, http.MethodPost, s.coll(), big).fail(t, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
		req, err := http.NewRequest(http.MethodPost, s.target.BaseURL+s.coll(),
			io.MultiReader(strings.NewReader(string(big))))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.ContentLength = -1 // chunked
		s.send(t, req).fail(t, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
		s.do(t, http.MethodPut, s.item(webUUID()), big).fail(t, http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	})

	t.Run("an unknown assignment, route or method answers in the JSON envelope", func(t *testing.T) {
		t.Parallel()
		id := webUUID()
		for _, c := range []struct{ method, path string }{
			{http.MethodGet, "/cache/nope"}, {http.MethodPost, "/cache/nope"}, {http.MethodGet, "/cache/nope/" + id},
			{http.MethodPut, "/cache/nope/" + id}, {http.MethodDelete, "/cache/nope/" + id},
		} {
			var body []byte
			if c.method == http.MethodPost || c.method == http.MethodPut {
				body = webBody("k", "t", webUUID(), `1`, `null`)
			}
			s.do(t, c.method, c.path, body).fail(t, http.StatusNotFound, "")
		}
		// The collection with a trailing slash is the collection (see
		// "the collection with a trailing slash answers as without it");
		// an item's is not.
		for _, path := range []string{"/nope", "/cache", "/cache/", s.item(id) + "/", s.item(id) + "/x"} {
			s.do(t, http.MethodGet, path, nil).fail(t, http.StatusNotFound, "")
		}
		r := s.do(t, http.MethodDelete, s.coll(), nil)
		if r.Status != http.StatusMethodNotAllowed && r.Status != http.StatusNotFound {
			t.Errorf("DELETE on the collection answered %d, want 405 or 404", r.Status)
		}
		webParseEnvelope(t, r)
	})

	t.Run("health and readiness answer 200 without a token", func(t *testing.T) {
		t.Parallel()
		for _, path := range []string{"/healthz", "/readyz"} {
			if r := s.do(t, http.MethodGet, path, nil); r.Status != http.StatusOK {
				t.Errorf("GET %s answered %d", path, r.Status)
			}
		}
	})

	t.Run("a sane X-Request-Id is echoed and any other replaced", func(t *testing.T) {
		t.Parallel()
		r := s.do(t, http.MethodGet, "/healthz", nil, "X-Request-Id", "abc-123_x.y")
		if got := r.Header.Get("X-Request-Id"); got != "abc-123_x.y" {
			t.Errorf("X-Request-Id %q, want the one sent", got)
		}
		for _, bad := range []string{"has space", strings.Repeat("a", 129), "semi;colon", "<script>"} {
			r := s.do(t, http.MethodGet, "/healthz", nil, "X-Request-Id", bad)
			if got := r.Header.Get("X-Request-Id"); got == "" || got == bad {
				t.Errorf("X-Request-Id %q answered with %q, want a generated one", bad, got)
			}
		}
		if got := s.do(t, http.MethodGet, "/cache/nope", nil).Header.Get("X-Request-Id"); got == "" {
			t.Error("an error answer lacks X-Request-Id")
		}
	})
}

func webRobustnessTests(t *testing.T, s *webSuite) {
	t.Run("no bad input makes a 5xx", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		e := s.create(t, "k", "t", who, `1`, `null`)
		type req struct {
			method, path, body string
			hdr                []string
		}
		var reqs []req
		for _, p := range []string{"/cache/" + s.a + "/%ff", "/cache/%00", "/cache/%ff/x", "/cache/" + s.a + "/..%2f..%2f",
			"/cache/" + s.a + "/%00", "/cache/" + s.a + "?key=%ff", "/cache/" + s.a + "?key=%00", "/cache/" + s.a + "?key=%zz",
			"/cache/" + s.a + "?filter=||", "/cache/" + s.a + "?filter=key||$eq||%00", "/cache/" + s.a + "?sort=,",
			"/cache/" + s.a + "?page=99999999999999", "/cache/" + s.a + "?page=1073741824&limit=1000",
			"/cache/" + s.a + "?offset=1073741824", "/cache/" + s.a + "?" + strings.Repeat("a=1&", 500),
			"/cache/" + s.a + "?assignee.id=not-a-uuid", "/cache/" + s.a + "?type=" + strings.Repeat("é", 300)} {
			reqs = append(reqs, req{method: http.MethodGet, path: p})
		}
		for _, b := range []string{
			`{"key":"\u0000","type":"t","data":1,"assignee":{"id":"` + who + `"},"expiresIn":null}`,
			`{"key":"k\ud800","type":"t","data":1,"assignee":{"id":"` + who + `"},"expiresIn":null}`,
			`{"key":"n","type":"t","data":1e999999,"assignee":{"id":"` + who + `"},"expiresIn":null}`,
			`{"key":"n2","type":"t","data":"\u0000","assignee":{"id":"` + who + `"},"expiresIn":null}`,
			`{"key":"n3","type":"t","data":1,"assignee":{"id":"` + strings.ToUpper(who) + `"},"expiresIn":"1 h"}`,
			`{"key":"k","type":"t","data":1,"assignee":{"id":"` + who + `"},"expiresIn":"99999999999999999999y"}`,
			`{"key":"k","type":"t","data":1,"assignee":{"id":"` + who + `"},"expiresIn":"1.7976931348623157e308h"}`,
			`{"key":"k","type":"t","data":1,"assignee":{"id":"` + who + `"},"expiresIn":"` + strings.Repeat("1h", 1000) + `"}`,
			`{"` + strings.Repeat("x", 5000) + `":1}`,
			`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"r":18,"s":19,"t":20,"u":21,"v":22}`,
		} {
			reqs = append(reqs, req{method: http.MethodPost, path: s.coll(), body: b})
			reqs = append(reqs, req{method: http.MethodPut, path: s.item(webUUID()), body: b})
			reqs = append(reqs, req{method: http.MethodPatch, path: s.item(e.ID), body: b})
		}
		for _, h := range [][]string{
			{"If-Match", `"99999999999999999999999"`}, {"If-Match", `""`}, {"If-Match", `W/`}, {"If-Match", `,,,`},
			{"If-None-Match", `"1"`}, {"If-None-Match", `*, "1"`}, {"If-Match", `"1"`, "If-None-Match", "*"},
		} {
			body := string(webBody("k", "t", who, `1`, `null`))
			reqs = append(reqs, req{method: http.MethodPut, path: s.item(e.ID), body: body, hdr: h})
			reqs = append(reqs, req{method: http.MethodPatch, path: s.item(e.ID), body: `{}`, hdr: h})
			reqs = append(reqs, req{method: http.MethodDelete, path: s.item(webUUID()), hdr: h})
		}
		for _, r := range reqs {
			var body []byte
			if r.body != "" || r.method == http.MethodPost {
				body = []byte(r.body)
			}
			reply := s.do(t, r.method, r.path, body, r.hdr...)
			if reply.Status >= 400 {
				webParseEnvelope(t, reply)
			}
		}
	})
}
