package contract

import (
	"encoding/json"
	"net/http"
	"testing"
)

func webConditionalTests(t *testing.T, s *webSuite) {
	t.Run("PUT with If-Match replaces only the matching version", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		e := s.create(t, "k", "t", who, `1`, `null`)
		body := webBody("k", "t", who, `2`, `null`)
		s.do(t, http.MethodPut, s.item(e.ID), body, "If-Match", `"1"`).entry(t, http.StatusOK)
		for _, im := range []string{`"1"`, `W/"2"`, `2`, `"two"`, `"2`, `garbage`} {
			s.do(t, http.MethodPut, s.item(e.ID), body, "If-Match", im).fail(t, http.StatusPreconditionFailed, "")
		}
		s.do(t, http.MethodPut, s.item(e.ID), body, "If-Match", `"2"`).entry(t, http.StatusOK)
		s.do(t, http.MethodPut, s.item(e.ID), body, "If-Match", `"1", "3"`).entry(t, http.StatusOK)
		s.do(t, http.MethodPut, s.item(e.ID), body, "If-Match", `*`).entry(t, http.StatusOK)
		if got := s.do(t, http.MethodGet, s.item(e.ID), nil).entry(t, http.StatusOK); got.Version != 5 {
			t.Errorf("version %d after four conditional replaces, want 5", got.Version)
		}
	})

	t.Run("PUT with If-Match never creates: 412 when no entry exists", func(t *testing.T) {
		t.Parallel()
		id := webUUID()
		for _, im := range []string{`"1"`, `*`} {
			s.do(t, http.MethodPut, s.item(id), webBody("k", "t", webUUID(), `1`, `null`), "If-Match", im).
				fail(t, http.StatusPreconditionFailed, "")
		}
		s.do(t, http.MethodGet, s.item(id), nil).fail(t, http.StatusNotFound, "")
	})

	t.Run("PUT with If-None-Match: * only creates", func(t *testing.T) {
		t.Parallel()
		id, who := webUUID(), webUUID()
		s.do(t, http.MethodPut, s.item(id), webBody("k", "t", who, `1`, `null`), "If-None-Match", "*").entry(t, http.StatusCreated)
		s.do(t, http.MethodPut, s.item(id), webBody("k", "t", who, `2`, `null`), "If-None-Match", "*").
			fail(t, http.StatusPreconditionFailed, "")
		if got := s.do(t, http.MethodGet, s.item(id), nil).entry(t, http.StatusOK); string(got.Data) != `1` {
			t.Errorf("If-None-Match: * replaced the entry: data %s", got.Data)
		}
	})

	t.Run("PATCH and DELETE honour If-Match", func(t *testing.T) {
		t.Parallel()
		e := s.create(t, "k", "t", webUUID(), `1`, `null`)
		s.do(t, http.MethodPatch, s.item(e.ID), []byte(`{"data":2}`), "If-Match", `"9"`).
			fail(t, http.StatusPreconditionFailed, "CACHE_VERSION_MISMATCH")
		s.do(t, http.MethodPatch, s.item(e.ID), []byte(`{"data":2}`), "If-Match", `"1"`).entry(t, http.StatusOK)
		s.do(t, http.MethodDelete, s.item(e.ID), nil, "If-Match", `"1"`).
			fail(t, http.StatusPreconditionFailed, "CACHE_VERSION_MISMATCH")
		s.do(t, http.MethodGet, s.item(e.ID), nil).entry(t, http.StatusOK)
		if r := s.do(t, http.MethodDelete, s.item(e.ID), nil, "If-Match", `"2"`); r.Status != http.StatusOK {
			t.Errorf("DELETE with the current version answered %d: %s", r.Status, webShort(r.Body))
		}
		s.do(t, http.MethodGet, s.item(e.ID), nil).fail(t, http.StatusNotFound, "")
	})

	t.Run("every answer carrying an entry has its version as ETag", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		e := s.create(t, "k", "t", who, `1`, `null`)
		s.do(t, http.MethodPut, s.item(e.ID), webBody("k", "t", who, `2`, `null`)).entry(t, http.StatusOK)
		s.do(t, http.MethodPatch, s.item(e.ID), []byte(`{"data":3}`)).entry(t, http.StatusOK)
		r := s.do(t, http.MethodGet, s.item(e.ID), nil)
		if got := r.entry(t, http.StatusOK); got.Version != 3 {
			t.Errorf("version %d, want 3", got.Version)
		}
		if et := r.Header.Get("ETag"); et != `"3"` {
			t.Errorf("ETag %q, want \"3\"", et)
		}
		var raw map[string]json.RawMessage
		_ = json.Unmarshal(r.Body, &raw)
		if string(raw["version"]) != "3" {
			t.Errorf("version is %s in the body, want the number 3", raw["version"])
		}
	})
}
