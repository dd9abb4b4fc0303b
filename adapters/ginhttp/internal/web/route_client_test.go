package web

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/domain"
)

type otherKey struct{}

func TestWithClient(t *testing.T) {
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = httptest.NewRequest("GET", "/", nil)
	if got := Client(c); got != (domain.Client{}) {
		t.Fatalf("client before WithClient = %+v", got)
	}
	want := domain.Client{Address: "198.51.100.9", UserAgent: "probe/1"}
	parent := context.WithValue(c.Request.Context(), otherKey{}, "kept")
	r, header := WithClient(c.Request, parent, want, "req-1")
	if len(header) != 1 || cap(header) != 1 || header[0] != "req-1" {
		t.Errorf("header = %q (cap %d)", header, cap(header))
	}
	c.Request = r
	// A context derived later (the principal's) still finds the client,
	// and the parent's values stay visible.
	SetPrincipal(c, domain.Principal{})
	if got := Client(c); got != want {
		t.Errorf("Client = %+v, want %+v", got, want)
	}
	if got := c.Request.Context().Value(otherKey{}); got != "kept" {
		t.Errorf("parent value = %v", got)
	}
	if _, ok := CurrentUser(c.Request); !ok {
		t.Error("the principal was lost")
	}
}
