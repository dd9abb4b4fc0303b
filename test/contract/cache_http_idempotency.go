package contract

import (
	"bytes"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// webIdempotencyTests pin Idempotency-Key on POST (README, "Idempotent
// retries").
func webIdempotencyTests(t *testing.T, s *webSuite) {
	t.Run("a retry with the same key and body answers the first answer and writes nothing", func(t *testing.T) {
		t.Parallel()
		who, key := webUUID(), `"`+webUUID()+`"`
		body := webBody("k", "t", who, ` {"v": 1.50} `, `"1h"`)
		first := s.do(t, http.MethodPost, s.coll(), body, "Idempotency-Key", key)
		e := first.entry(t, http.StatusCreated)
		s.pause(1100 * time.Millisecond) // a new dateCreated, were it written again
		// The bare form of the same key is the same key.
		for _, k := range []string{key, strings.Trim(key, `"`)} {
			again := s.do(t, http.MethodPost, s.coll(), body, "Idempotency-Key", k)
			if again.Status != first.Status || !bytes.Equal(again.Body, first.Body) {
				t.Errorf("retry with %s: %d %s, want %d %s", k, again.Status, webShort(again.Body), first.Status, webShort(first.Body))
			}
			for _, h := range []string{"ETag", "Location"} {
				if again.Header.Get(h) != first.Header.Get(h) {
					t.Errorf("retry with %s: %s %q, want %q", k, h, again.Header.Get(h), first.Header.Get(h))
				}
			}
		}
		if got := s.listOf(t, "?assignee.id="+who); len(got) != 1 || got[0].ID != e.ID {
			t.Errorf("the store holds %v, want the one entry %s", webIDs(got), e.ID)
		}
	})

	t.Run("the same key with another body is 422 and writes nothing", func(t *testing.T) {
		t.Parallel()
		who, key := webUUID(), webUUID()
		s.do(t, http.MethodPost, s.coll(), webBody("k", "t", who, `1`, `null`), "Idempotency-Key", key).entry(t, http.StatusCreated)
		for _, body := range [][]byte{
			webBody("k2", "t", who, `2`, `null`),
			// The same JSON value in other bytes is another body.
			webBody("k", "t", who, `1 `, `null`),
		} {
			s.do(t, http.MethodPost, s.coll(), body, "Idempotency-Key", key).fail(t, http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED")
		}
		if got := s.listOf(t, "?assignee.id="+who); len(got) != 1 {
			t.Errorf("the store holds %d entries, want 1", len(got))
		}
	})

	t.Run("a malformed key is a 400 naming the header", func(t *testing.T) {
		t.Parallel()
		who := webUUID()
		for _, k := range []string{`""`, `"` + strings.Repeat("k", 256) + `"`, strings.Repeat("k", 256),
			`"open`, `"a" b`, `a b`, `a,b`, `"bad \x escape"`, "caf\u00e9"} {
			s.do(t, http.MethodPost, s.coll(), webBody("k", "t", who, `1`, `null`), "Idempotency-Key", k).
				fail(t, http.StatusBadRequest, "", "Idempotency-Key")
		}
		s.do(t, http.MethodPost, s.coll(), webBody("k", "t", who, `1`, `null`), "Idempotency-Key", "a", "Idempotency-Key", "b").
			fail(t, http.StatusBadRequest, "", "Idempotency-Key")
		if got := s.listOf(t, "?assignee.id="+who); len(got) != 0 {
			t.Errorf("refused requests wrote %d entries", len(got))
		}
		long := strings.Repeat("k", 255)
		s.do(t, http.MethodPost, s.coll(), webBody("k", "t", who, `1`, `null`), "Idempotency-Key", `"`+long+`"`).entry(t, http.StatusCreated)
	})

	t.Run("concurrent requests with one key create one entry and all answer it", func(t *testing.T) {
		t.Parallel()
		who, key := webUUID(), webUUID()
		body := webBody("k", "t", who, `{"n":1}`, `null`)
		const n = 6
		replies := make([]webReply, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				replies[i] = s.do(t, http.MethodPost, s.coll(), body, "Idempotency-Key", key)
			}()
		}
		wg.Wait()
		for i, r := range replies {
			if r.Status != http.StatusCreated || !bytes.Equal(r.Body, replies[0].Body) {
				t.Errorf("request %d: %d %s, want 201 %s", i, r.Status, webShort(r.Body), webShort(replies[0].Body))
			}
		}
		if got := s.listOf(t, "?assignee.id="+who); len(got) != 1 {
			t.Errorf("the store holds %d entries, want 1", len(got))
		}
	})
}
