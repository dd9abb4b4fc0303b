package ginhttp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/application"
)

// benchEntry creates one entry through the use case and returns its id.
func benchEntry(b *testing.B, f *fixture, assignment string) string {
	b.Helper()
	e, err := f.cache.Create.Execute(context.Background(), application.CreateCacheInput{
		Assignment: assignment,
		Cache: application.CacheInput{Key: "session", Type: "web", AssigneeID: alice,
			Data: []byte(`"` + strings.Repeat("x", 200) + `"`)},
	})
	if err != nil {
		b.Fatal(err)
	}
	return e.ID
}

// BenchmarkGetByID is one full in-process request: middleware, routing,
// use case on memstore and encoding, without a socket.
func BenchmarkGetByID(b *testing.B) {
	f := newFixture(b, nil)
	h := f.server.Handler()
	req := httptest.NewRequest(http.MethodGet, "/cache/user/"+benchEntry(b, f, "user"), nil)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
}

// BenchmarkGetByIDWithBearer adds the guard and an (instant) authenticator
// on an owner assignment.
func BenchmarkGetByIDWithBearer(b *testing.B) {
	f := newFixture(b, func(o *ginhttp.Options) { o.Authenticator, o.EnableGuards = fakeAuth{}, true })
	h := f.server.Handler()
	req := httptest.NewRequest(http.MethodGet, "/cache/mine/"+benchEntry(b, f, "mine"), nil)
	req.Header.Set("Authorization", "Bearer good-"+alice)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
}

// BenchmarkCreate is one full in-process POST.
func BenchmarkCreate(b *testing.B) {
	f := newFixture(b, nil)
	h := f.server.Handler()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		body := `{"key":"k` + strings.Repeat("x", i%7) + `","type":"t` + itoa(i) + `","data":"v","assignee":{"id":"` + alice + `"},"expiresIn":"1h"}`
		req := httptest.NewRequest(http.MethodPost, "/cache/user", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusCreated {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[n:])
		}
	}
}
