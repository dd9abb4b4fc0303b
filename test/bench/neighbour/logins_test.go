package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestLiveSessionsReadsTheTotal(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != "/auth/sessions" || r.Header.Get("Authorization") != "Bearer tok":
			w.WriteHeader(http.StatusUnauthorized)
		case r.URL.Query().Get("limit") == "1":
			_, _ = w.Write([]byte(`{"data":[{"id":"s"}],"count":1,"total":100,"page":1,"pageCount":100}`))
		default:
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	if n, err := liveSessions(ctx, srv.Client(), srv.URL, "tok"); err != nil || n != 100 {
		t.Errorf("liveSessions = %d, %v; want 100", n, err)
	}
	if _, err := liveSessions(ctx, srv.Client(), srv.URL, "other"); err == nil {
		t.Error("a 401 gave a count")
	}
}

func TestSessionsGoalIsTheCap(t *testing.T) {
	t.Parallel()
	quiet := 10 * time.Millisecond
	line := phaseResult{name: "sessions", victim: victimStats{n: 10, ok: 10, p99: quiet},
		sessions: &sessionsResult{logins: 900, live: 101, limit: 100, db: 2 << 20, audit: 1 << 20}}
	if got := verdict(line, quiet, 0); got != "MISSED sessions" {
		t.Errorf("101 sessions under a cap of 100: verdict %q, want MISSED sessions", got)
	}
	line.sessions.live = 100
	if got := verdict(line, quiet, 0); got != "met" {
		t.Errorf("100 sessions under a cap of 100: verdict %q, want met", got)
	}
	var b strings.Builder
	writeSessions(&b, line.sessions)
	if want := "logins 900; live sessions at the end 100 (cap 100); growth: audit tables +1.0 MiB, database +2.0 MiB"; !strings.Contains(b.String(), want) {
		t.Errorf("line %q lacks %q", b.String(), want)
	}
}
