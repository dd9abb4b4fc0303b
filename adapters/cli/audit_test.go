package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/adapters/system"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// auditRuntime returns a runtime whose audit trail holds es.
func auditRuntime(t *testing.T, es ...domain.AuditEvent) *fakeRuntime {
	t.Helper()
	log := memstore.NewAuditLog()
	for _, e := range es {
		if err := log.RecordEvent(t.Context(), e); err != nil {
			t.Fatal(err)
		}
	}
	trail := application.NewAuditTrail(application.AuditTrailDeps{Store: log, Clock: system.Clock{}, IDs: system.UUIDv7{}})
	rt := &fakeRuntime{}
	rt.services.Audit = trail
	return rt
}

func TestAuditPrintsStoredStringsWithControlCharactersEscaped(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	evil := "\x1b[2J\x1b]0;pwn\x07\r\nforged\tlogin.ok\u009b31m\u202e\\x\x7f\xff"
	events := []domain.AuditEvent{
		{ID: "e1", Time: t0, Type: domain.AuditLoginFailed, Username: evil, Address: "192.0.2.1\n",
			Reason: domain.AuditReasonUnknownUser, Count: 42, LastSeen: t0.Add(time.Minute)},
		{ID: "e2", Time: t0.Add(-time.Hour), Type: domain.AuditLogout, Username: "bob"},
	}
	// Each subtest has its own runtime: the fake counts starts and stops
	// without a lock.

	t.Run("the table escapes every control character and shows the count", func(t *testing.T) {
		t.Parallel()
		code, out, errOut := run(t, auditRuntime(t, events...), nil, "audit")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if strings.ContainsFunc(out, func(r rune) bool {
			return r != '\n' && (r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == '\u202e' || r == '\ufffd')
		}) {
			t.Errorf("output holds a raw control character: %q", out)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("%d lines, want a header and 2 events (no forged line):\n%s", len(lines), out)
		}
		want := `\x1b[2J\x1b]0;pwn\x07\r\nforged\tlogin.ok\u009b31m\u202e\\x\x7f\xff`
		if !strings.Contains(lines[1], want) || !strings.Contains(lines[1], `192.0.2.1\n`) {
			t.Errorf("event line %q, want the username escaped as %q", lines[1], want)
		}
		if f := strings.Fields(lines[0]); f[len(f)-3] != "COUNT" {
			t.Errorf("header %q, want COUNT and LAST SEEN last", lines[0])
		}
		if f := strings.Fields(lines[1]); f[len(f)-2] != "42" || f[len(f)-1] != "2030-01-02T03:05:05Z" {
			t.Errorf("folded event line %q, want count 42 and its last-seen time", lines[1])
		}
		if f := strings.Fields(lines[2]); f[len(f)-2] != "1" || f[len(f)-1] != "-" {
			t.Errorf("single event line %q, want count 1 and no last-seen time", lines[2])
		}
	})

	t.Run("JSON lines escape them too and keep the value", func(t *testing.T) {
		t.Parallel()
		code, out, errOut := run(t, auditRuntime(t, events...), nil, "audit", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if strings.ContainsFunc(out, func(r rune) bool {
			return r != '\n' && (r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == '\u202e')
		}) {
			t.Errorf("output holds a raw control character: %q", out)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("%d lines, want 2", len(lines))
		}
		var got struct {
			Username string
			Count    int
			LastSeen time.Time
		}
		if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
			t.Fatal(err)
		}
		wantName := strings.ToValidUTF8(evil, "\ufffd")
		if got.Username != wantName || got.Count != 42 || !got.LastSeen.Equal(t0.Add(time.Minute)) {
			t.Errorf("decoded %+v, want username %q, count 42, last seen a minute later", got, wantName)
		}
		var single struct {
			Count    int
			LastSeen time.Time
		}
		if err := json.Unmarshal([]byte(lines[1]), &single); err != nil || single.Count != 1 || !single.LastSeen.Equal(t0.Add(-time.Hour)) {
			t.Errorf("single event %+v, %v; want count 1, last seen its own time", single, err)
		}
	})
}
