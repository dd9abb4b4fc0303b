package web

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
)

func TestWriteJSONWithETag(t *testing.T) {
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		w := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(w)
		c.Request = httptest.NewRequest(method, "/", nil)
		WriteJSONWithETag(c, http.StatusOK, []byte(`"12"`), []byte(`{"a":1}`))
		h := w.Header()
		if got := h.Values("Etag"); len(got) != 1 || got[0] != `"12"` {
			t.Errorf("%s: ETag = %q", method, got)
		}
		if got := h.Values("Content-Length"); len(got) != 1 || got[0] != "7" {
			t.Errorf("%s: Content-Length = %q", method, got)
		}
		if got := h.Get("Content-Type"); got != JSONContentType[0] {
			t.Errorf("%s: Content-Type = %q", method, got)
		}
		want := `{"a":1}`
		if method == http.MethodHead {
			want = ""
		}
		if w.Code != http.StatusOK || w.Body.String() != want {
			t.Errorf("%s: %d %q", method, w.Code, w.Body)
		}
		// The two values share a backing array: adding to one header
		// must leave the other as it was.
		c.Writer.Header().Add("Etag", `"13"`)
		if got := c.Writer.Header().Values("Content-Length"); len(got) != 1 || got[0] != "7" {
			t.Errorf("%s: Content-Length after adding an ETag = %q", method, got)
		}
	}
}
