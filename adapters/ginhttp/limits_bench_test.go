package ginhttp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/cachegate/cachegate/adapters/ginhttp"
	"github.com/cachegate/cachegate/adapters/ginhttp/limits"
)

// capsOff turns every per-caller cap off.
var capsOff = limits.Options{ListsPerUser: -1, StreamsPerUser: -1, ConnsPerAddress: -1}

// benchCaps runs one in-process request, the same with the default caps
// and with none, so that the caps' own cost is the difference.
func benchCaps(b *testing.B, path func(*fixture) string, tweak func(*ginhttp.Options), hdr ...string) {
	for _, c := range []struct {
		name   string
		limits limits.Options
	}{{"caps", limits.Options{}}, {"no caps", capsOff}} {
		b.Run(c.name, func(b *testing.B) {
			f := newFixture(b, func(o *ginhttp.Options) {
				if tweak != nil {
					tweak(o)
				}
				o.Limits = c.limits
			})
			h := f.server.Handler()
			req := httptest.NewRequest(http.MethodGet, path(f), nil)
			for i := 0; i+1 < len(hdr); i += 2 {
				req.Header.Set(hdr[i], hdr[i+1])
			}
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}

// BenchmarkCapsGetByID: GET by id takes no cap.
func BenchmarkCapsGetByID(b *testing.B) {
	benchCaps(b, func(f *fixture) string { return "/cache/user/" + benchEntry(b, f, "user") }, nil)
}

// BenchmarkCapsGetByIDThroughAProxy: a request through a trusted proxy
// counts against its forwarded address while in flight.
func BenchmarkCapsGetByIDThroughAProxy(b *testing.B) {
	benchCaps(b, func(f *fixture) string { return "/cache/user/" + benchEntry(b, f, "user") },
		func(o *ginhttp.Options) { o.TrustedProxies = []string{"192.0.2.1"} }, // httptest's RemoteAddr
		"X-Forwarded-For", "203.0.113.9")
}

// BenchmarkCapsList: a list of one entry takes the caller's list cap.
func BenchmarkCapsList(b *testing.B) {
	benchCaps(b, func(f *fixture) string { benchEntry(b, f, "user"); return "/cache/user" }, nil)
}
