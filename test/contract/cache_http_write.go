package contract

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func webCreateTests(t *testing.T, s *webSuite) {
	t.Run("POST creates an entry: 201, version 1, every field as sent", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		r := s.do(t, http.MethodPost, s.coll(), webBody("k", "t", who, `"v"`, `null`))
		e := r.entry(t, http.StatusCreated)
		if e.Version != 1 || e.Key != "k" || e.Type != "t" || string(e.Data) != `"v"` || e.Assignee.ID != who {
			t.Errorf("created entry %+v does not carry what was sent", e)
		}
		if e.DateCreated != e.DateUpdated || e.DateDeleted != nil || e.ExpirationDate != nil {
			t.Errorf("a new entry without expiry: created %s updated %s deleted %v expires %v",
				e.DateCreated, e.DateUpdated, e.DateDeleted, e.ExpirationDate)
		}
		if loc := r.Header.Get("Location"); loc != "" && !strings.HasSuffix(loc, "/"+e.ID) {
			t.Errorf("Location %q does not name the new entry", loc)
		}
		got := s.do(t, http.MethodGet, s.item(e.ID), nil).entry(t, http.StatusOK)
		if got.ID != e.ID || string(got.Data) != `"v"` || got.DateCreated != e.DateCreated {
			t.Errorf("GET returned %+v, want the created %+v", got, e)
		}
	})

	t.Run("data is returned byte for byte, whatever JSON value it is", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		for i, data := range []string{
			`"hello"`,
			`{"a" : 1,   "b":[1, 2 ,3 ],"c":{ }}`,
			`"unicode ✓ é 😀 \u00e9 \ud83d\ude00"`,
			`1.0e10`, `-0.50`, `12345678901234567890123`, `1E-7`,
			`true`, `false`, `[]`, `{}`, `[ null ]`,
			`"escapes \" \\ \/ \b \f \n \r \t \u2028"`,
			`{"nested":{"deeper":[{"x":"y"},[1,[2,[3]]]]}}`,
		} {
			e := s.create(t, fmt.Sprintf("k%d", i), "bytes", who, data, `null`)
			if string(e.Data) != data {
				t.Errorf("POST returned data %s, want %s", e.Data, data)
			}
			got := s.do(t, http.MethodGet, s.item(e.ID), nil).entry(t, http.StatusOK)
			if string(got.Data) != data {
				t.Errorf("GET returned data %s, want %s", got.Data, data)
			}
			list := s.listOf(t, "?filter=key||$eq||"+e.Key+"&assignee.id="+who)
			if len(list) != 1 || string(list[0].Data) != data {
				t.Errorf("list returned %v, want one entry with data %s", list, data)
			}
		}
	})

	t.Run("expiresIn accepts durations with units and sets expirationDate from now", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		for i, c := range []struct {
			in   string
			want time.Duration
		}{
			{`"1h"`, time.Hour},
			{`"30s"`, 30 * time.Second},
			{`"1500ms"`, 1500 * time.Millisecond},
			{`"2 days"`, 48 * time.Hour},
			{`"1.5h"`, 90 * time.Minute},
			{`"1h30m"`, 90 * time.Minute},
			{`"10 MINUTES"`, 10 * time.Minute},
			{`"1w"`, 7 * 24 * time.Hour},
			{`"1y"`, 365*24*time.Hour + 6*time.Hour},
			{`"100y"`, 100 * (365*24*time.Hour + 6*time.Hour)},
		} {
			e := s.create(t, fmt.Sprintf("exp%d", i), "t", who, `1`, c.in)
			if e.ExpirationDate == nil {
				t.Errorf("expiresIn %s: no expirationDate", c.in)
				continue
			}
			if got := webTime(t, *e.ExpirationDate).Sub(webTime(t, e.DateUpdated)); got != c.want {
				t.Errorf("expiresIn %s: expires %v after the update, want %v", c.in, got, c.want)
			}
		}
	})

	t.Run("expiresIn rejects bare numbers, zero, negatives, beyond 100 years and nonsense", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		for _, in := range []string{`3600`, `"3600"`, `0`, `"0s"`, `"0"`, `"-1h"`, `"101y"`, `""`, `"abc"`,
			`"1x"`, `"h"`, `"1h-"`, `true`, `{}`, `[]`, `"1e3s"`, `"` + strings.Repeat("1", 100) + `s"`} {
			r := s.do(t, http.MethodPost, s.coll(), webBody("k", "t", who, `1`, in))
			r.fail(t, http.StatusBadRequest, "", "expiresIn")
		}
	})

	t.Run("concurrent duplicate POSTs: exactly one 201, every other 409", func(t *testing.T) {
		t.Parallel()
		body := webBody("dup", "t", webUUID(), `"x"`, `null`)
		const n = 20
		replies := make([]webReply, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				replies[i] = s.do(t, http.MethodPost, s.coll(), body)
			}()
		}
		wg.Wait()
		created := 0
		for _, r := range replies {
			switch r.Status {
			case http.StatusCreated:
				created++
			case http.StatusConflict:
				r.fail(t, http.StatusConflict, "CACHE_ENTITY_ALREADY_EXISTS")
			default:
				t.Errorf("a duplicate POST answered %d: %s", r.Status, webShort(r.Body))
			}
		}
		if created != 1 {
			t.Errorf("%d POSTs created the entry, want exactly 1", created)
		}
	})

	t.Run("a sequential duplicate POST is 409 CACHE_ENTITY_ALREADY_EXISTS", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		s.create(t, "k", "t", who, `1`, `null`)
		s.do(t, http.MethodPost, s.coll(), webBody("k", "t", who, `2`, `null`)).
			fail(t, http.StatusConflict, "CACHE_ENTITY_ALREADY_EXISTS")
		// Any one part of the natural key differing makes another entry.
		s.create(t, "k", "t2", who, `1`, `null`)
		s.create(t, "k2", "t", who, `1`, `null`)
		s.create(t, "k", "t", webUUID(), `1`, `null`)
	})

	if len(s.target.Assignments) > 1 {
		t.Run("assignments are separate stores", func(t *testing.T) {
			t.Parallel()
			who := webUUID()
			e := s.create(t, "k", "t", who, `1`, `null`)
			other := "/cache/" + s.target.Assignments[1]
			r := s.do(t, http.MethodPost, other, webBody("k", "t", who, `2`, `null`))
			e2 := r.entry(t, http.StatusCreated)
			s.do(t, http.MethodGet, other+"/"+e.ID, nil).fail(t, http.StatusNotFound, "CACHE_ENTITY_NOT_FOUND")
			s.do(t, http.MethodGet, s.item(e2.ID), nil).fail(t, http.StatusNotFound, "CACHE_ENTITY_NOT_FOUND")
		})
	}
}

func webReadWriteTests(t *testing.T, s *webSuite) {
	t.Run("GET of a missing, malformed or foreign id is 404", func(t *testing.T) {
		t.Parallel()
		for _, id := range []string{webUUID(), "nope", "123", "00000000-0000-0000-0000-00000000000g",
			strings.Repeat("a", 300), "%00", "%E2%9C%93", "'%20OR%201=1"} {
			s.do(t, http.MethodGet, s.item(id), nil).fail(t, http.StatusNotFound, "")
		}
	})

	t.Run("PUT to an unused id creates the entry with that id: 201", func(t *testing.T) {
		t.Parallel()
		id, who := webUUID(), webUUID()
		e := s.do(t, http.MethodPut, s.item(id), webBody("k", "t", who, `"v"`, `null`)).entry(t, http.StatusCreated)
		if e.ID != id || e.Version != 1 {
			t.Errorf("PUT created id %s version %d, want id %s version 1", e.ID, e.Version, id)
		}
		s.do(t, http.MethodGet, s.item(id), nil).entry(t, http.StatusOK)
	})

	t.Run("PUT replaces: 200, version+1, dateUpdated moves, expiry from now", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		e := s.create(t, "k", "t", who, `"old"`, `"1h"`)
		s.pause(20 * time.Millisecond)
		r := s.do(t, http.MethodPut, s.item(e.ID), webBody("k2", "t2", who, `{"new": true}`, `"2h"`))
		got := r.entry(t, http.StatusOK)
		if got.ID != e.ID || got.Version != 2 || got.Key != "k2" || got.Type != "t2" || string(got.Data) != `{"new": true}` {
			t.Errorf("replaced entry %+v", got)
		}
		if got.DateCreated != e.DateCreated {
			t.Errorf("dateCreated moved from %s to %s", e.DateCreated, got.DateCreated)
		}
		if !webTime(t, got.DateUpdated).After(webTime(t, e.DateUpdated)) {
			t.Errorf("dateUpdated %s did not move past %s", got.DateUpdated, e.DateUpdated)
		}
		if got.ExpirationDate == nil || webTime(t, *got.ExpirationDate).Sub(webTime(t, got.DateUpdated)) != 2*time.Hour {
			t.Errorf("expirationDate %v, want dateUpdated %s + 2h", got.ExpirationDate, got.DateUpdated)
		}
		s.do(t, http.MethodPut, s.item(e.ID), webBody("k2", "t2", who, `1`, `null`)).entry(t, http.StatusOK)
		again := s.do(t, http.MethodGet, s.item(e.ID), nil).entry(t, http.StatusOK)
		if again.Version != 3 || again.ExpirationDate != nil {
			t.Errorf("after a PUT with expiresIn null: version %d expires %v, want 3 and never", again.Version, again.ExpirationDate)
		}
	})

	t.Run("PUT that would collide with another entry's natural key is 409", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		s.create(t, "a", "t", who, `1`, `null`)
		b := s.create(t, "b", "t", who, `1`, `null`)
		s.do(t, http.MethodPut, s.item(b.ID), webBody("a", "t", who, `1`, `null`)).
			fail(t, http.StatusConflict, "CACHE_ENTITY_ALREADY_EXISTS")
		s.do(t, http.MethodPut, s.item(webUUID()), webBody("a", "t", who, `1`, `null`)).
			fail(t, http.StatusConflict, "CACHE_ENTITY_ALREADY_EXISTS")
	})

	t.Run("PUT to a malformed id is 404 and with a bad body 400", func(t *testing.T) {
		t.Parallel()
		s.do(t, http.MethodPut, s.item("not-a-uuid"), webBody("k", "t", webUUID(), `1`, `null`)).
			fail(t, http.StatusNotFound, "CACHE_ENTITY_NOT_FOUND")
		r := s.do(t, http.MethodPut, s.item(webUUID()), []byte(`{"key":"k"}`))
		env := r.fail(t, http.StatusBadRequest, "", "type", "data", "assignee")
		for _, d := range env.Details {
			if d.Field == "expiresIn" {
				t.Errorf("a PUT without expiresIn names it as a problem: %+v", d)
			}
		}
	})

	t.Run("expiresIn may be left out of POST and PUT: it means null, the configured default", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		noExpiry := func(key string) []byte {
			return []byte(`{"key":"` + key + `","type":"t","data":"d","assignee":{"id":"` + who + `"}}`)
		}
		// The suite's services have no default expiration: null is "never".
		e := s.do(t, http.MethodPost, s.coll(), noExpiry("post")).entry(t, http.StatusCreated)
		if e.ExpirationDate != nil || e.Key != "post" || e.Version != 1 {
			t.Errorf("a POST without expiresIn: %+v, want an entry without expiry", e)
		}
		id := webUUID()
		e = s.do(t, http.MethodPut, s.item(id), noExpiry("put")).entry(t, http.StatusCreated)
		if e.ID != id || e.ExpirationDate != nil {
			t.Errorf("a creating PUT without expiresIn: %+v", e)
		}
		x := s.create(t, "expiring", "t", who, `1`, `"1h"`)
		e = s.do(t, http.MethodPut, s.item(x.ID), noExpiry("expiring")).entry(t, http.StatusOK)
		if e.ExpirationDate != nil || e.Version != 2 {
			t.Errorf("a replacing PUT without expiresIn must recompute the expiry from the default (none): %+v", e)
		}
		x = s.create(t, "patched", "t", who, `1`, `"1h"`)
		e = s.do(t, http.MethodPatch, s.item(x.ID), []byte(`{"data":"new"}`)).entry(t, http.StatusOK)
		if e.ExpirationDate == nil || *e.ExpirationDate != *x.ExpirationDate {
			t.Errorf("a PATCH without expiresIn must leave the expiry as it was (%v): %+v", x.ExpirationDate, e)
		}
	})

	t.Run("PATCH changes only the fields given and increments the version", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		e := s.create(t, "k", "t", who, `"old"`, `null`)
		got := s.do(t, http.MethodPatch, s.item(e.ID), []byte(`{"data": [1, 2]}`)).entry(t, http.StatusOK)
		if got.Version != 2 || got.Key != "k" || got.Type != "t" || got.Assignee.ID != who || string(got.Data) != `[1, 2]` {
			t.Errorf("after PATCH data: %+v", got)
		}
		got = s.do(t, http.MethodPatch, s.item(e.ID), []byte(`{"key":"k2","expiresIn":"1h"}`)).entry(t, http.StatusOK)
		if got.Version != 3 || got.Key != "k2" || string(got.Data) != `[1, 2]` || got.ExpirationDate == nil {
			t.Errorf("after PATCH key and expiresIn: %+v", got)
		}
		got = s.do(t, http.MethodPatch, s.item(e.ID), []byte(`{"type":"t2"}`)).entry(t, http.StatusOK)
		if got.ExpirationDate == nil || got.Type != "t2" {
			t.Errorf("a PATCH without expiresIn must keep the expiry: %+v", got)
		}
		got = s.do(t, http.MethodPatch, s.item(e.ID), []byte(`{"expiresIn":null}`)).entry(t, http.StatusOK)
		if got.ExpirationDate != nil || got.Version != 5 {
			t.Errorf("PATCH expiresIn null must clear the expiry: %+v", got)
		}
		other := webUUID()
		got = s.do(t, http.MethodPatch, s.item(e.ID), []byte(`{"assignee":{"id":"`+other+`"}}`)).entry(t, http.StatusOK)
		if got.Assignee.ID != other {
			t.Errorf("PATCH assignee: %+v", got)
		}
		got = s.do(t, http.MethodPatch, s.item(e.ID), []byte(`{}`)).entry(t, http.StatusOK)
		if got.Version != 7 {
			t.Errorf("an empty PATCH: version %d, want 7", got.Version)
		}
	})

	t.Run("PATCH rejects bad fields and collisions and 404s a missing entry", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		s.create(t, "a", "t", who, `1`, `null`)
		b := s.create(t, "b", "t", who, `1`, `null`)
		for body, field := range map[string]string{
			`{"key":5}`: "key", `{"key":""}`: "key", `{"data":null}`: "data", `{"expiresIn":3600}`: "expiresIn",
			`{"expiresIn":"0s"}`: "expiresIn", `{"assignee":{}}`: "assignee.id", `{"assignee":{"id":"x"}}`: "assignee.id",
			`{"nope":1}`: "nope",
		} {
			s.do(t, http.MethodPatch, s.item(b.ID), []byte(body)).fail(t, http.StatusBadRequest, "", field)
		}
		s.do(t, http.MethodPatch, s.item(b.ID), []byte(`{"key":"a"}`)).fail(t, http.StatusConflict, "CACHE_ENTITY_ALREADY_EXISTS")
		s.do(t, http.MethodPatch, s.item(webUUID()), []byte(`{"data":1}`)).fail(t, http.StatusNotFound, "CACHE_ENTITY_NOT_FOUND")
		s.do(t, http.MethodPatch, s.item("nope"), []byte(`{"data":1}`)).fail(t, http.StatusNotFound, "")
		if got := s.do(t, http.MethodGet, s.item(b.ID), nil).entry(t, http.StatusOK); got.Version != 1 {
			t.Errorf("refused PATCHes changed the entry: version %d", got.Version)
		}
	})

	t.Run("DELETE answers 200 with the deleted entry; then 404, and the key is free again", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		e := s.create(t, "k", "t", who, `"v"`, `null`)
		del := s.do(t, http.MethodDelete, s.item(e.ID), nil)
		if del.Status != http.StatusOK {
			t.Fatalf("DELETE answered %d: %s", del.Status, webShort(del.Body))
		}
		if len(del.Body) > 0 {
			got := webParseEntry(t, del.Body)
			if got.ID != e.ID || got.DateDeleted == nil {
				t.Errorf("DELETE returned %+v, want the entry with dateDeleted set", got)
			}
		}
		s.do(t, http.MethodGet, s.item(e.ID), nil).fail(t, http.StatusNotFound, "CACHE_ENTITY_NOT_FOUND")
		s.do(t, http.MethodDelete, s.item(e.ID), nil).fail(t, http.StatusNotFound, "CACHE_ENTITY_NOT_FOUND")
		s.do(t, http.MethodPatch, s.item(e.ID), []byte(`{"data":1}`)).fail(t, http.StatusNotFound, "")
		if list := s.listOf(t, "?assignee.id="+who); len(list) != 0 {
			t.Errorf("a deleted entry is still listed: %v", list)
		}
		again := s.create(t, "k", "t", who, `"again"`, `null`)
		if again.ID == e.ID || again.Version != 1 {
			t.Errorf("recreated entry %+v, want a new id and version 1", again)
		}
		s.do(t, http.MethodDelete, s.item("nope"), nil).fail(t, http.StatusNotFound, "")
	})
}
