package domain_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cachegate/cachegate/domain"
)

func TestCutAuditUsernameKeepsTheFirst64Characters(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"short names stay", "alice", "alice"},
		{"64 characters stay", strings.Repeat("a", 64), strings.Repeat("a", 64)},
		{"ASCII is cut", strings.Repeat("a", 300), strings.Repeat("a", 64)},
		{"multi-byte characters are cut whole", strings.Repeat("ж", 65), strings.Repeat("ж", 64)},
		{"a bad byte counts as one", "\xff" + strings.Repeat("b", 70), "\xff" + strings.Repeat("b", 63)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := domain.CutAuditUsername(tc.in)
			if got != tc.want {
				t.Errorf("CutAuditUsername = %q (%d characters), want %q", got, utf8.RuneCountInString(got), tc.want)
			}
		})
	}
}

func TestAuditFoldKeys(t *testing.T) {
	t.Parallel()
	f := domain.AuditFold{Window: time.Minute, Distinct: 5}
	t0 := time.Date(2030, 1, 1, 0, 0, 30, 0, time.UTC)
	failed := func(user, addr, reason string, at time.Time) domain.AuditEvent {
		return domain.AuditEvent{Type: domain.AuditLoginFailed, Username: user, Address: addr, Reason: reason, Time: at}
	}
	own := func(e domain.AuditEvent) string { k, _ := f.Keys(e); return k }
	base := failed("Alice", "192.0.2.1", domain.AuditReasonBadPassword, t0)
	if own(base) != own(failed(" alice", "192.0.2.1", domain.AuditReasonBadPassword, t0.Add(29*time.Second))) {
		t.Error("the same username as logins compare it, in the same window, has another key")
	}
	for name, e := range map[string]domain.AuditEvent{
		"another address":     failed("Alice", "192.0.2.2", domain.AuditReasonBadPassword, t0),
		"another reason":      failed("Alice", "192.0.2.1", domain.AuditReasonInactive, t0),
		"another username":    failed("bob", "192.0.2.1", domain.AuditReasonBadPassword, t0),
		"the next window":     failed("Alice", "192.0.2.1", domain.AuditReasonBadPassword, t0.Add(30*time.Second)),
		"a throttled attempt": {Type: domain.AuditLoginThrottled, Username: "Alice", Address: "192.0.2.1", Time: t0},
	} {
		if own(e) == own(base) {
			t.Errorf("%s has the same key", name)
		}
	}
	_, s1 := f.Keys(base)
	_, s2 := f.Keys(failed("bob", "192.0.2.1", domain.AuditReasonUnknownUser, t0))
	t1, t2 := f.Keys(domain.AuditEvent{Type: domain.AuditLoginThrottled, Username: "x", Address: "192.0.2.1", Time: t0})
	if s1 != s2 || t1 != t2 || s1 == t1 || len(s1) != 32 {
		t.Errorf("shared keys %q %q, throttled %q %q: want one per address for failures, own = shared for throttling, 32 hex digits", s1, s2, t1, t2)
	}
	if start := f.Start(time.Date(1969, 12, 31, 23, 59, 30, 0, time.UTC)); !start.Equal(time.Date(1969, 12, 31, 23, 59, 0, 0, time.UTC)) {
		t.Errorf("window start before the epoch %v", start)
	}
	if (domain.AuditFold{Window: time.Nanosecond}).Folds(base) || !f.Folds(base) || f.Folds(domain.AuditEvent{Type: domain.AuditLogout}) {
		t.Error("Folds: want failed and throttled logins only, with a window of a microsecond at least")
	}
}
