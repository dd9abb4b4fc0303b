package domain_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

func TestEntryRules(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		fe   *domain.FieldError
		want bool
	}{
		"an empty key is refused":           {domain.ValidateKey("key", ""), false},
		"a 255-character key is fine":       {domain.ValidateKey("key", strings.Repeat("é", 255)), true},
		"a 256-character key is refused":    {domain.ValidateKey("key", strings.Repeat("x", 256)), false},
		"a key with NUL is refused":         {domain.ValidateKey("key", "a\x00b"), false},
		"a key of invalid UTF-8 is refused": {domain.ValidateKey("key", "\xff"), false},
		"a UUID assignee is fine":           {domain.ValidateAssigneeID("assignee.id", "0b9f0e4c-6a51-4d6a-9d54-1f6b7a1c2d3e"), true},
		"a non-UUID assignee is refused":    {domain.ValidateAssigneeID("assignee.id", "0b9f0e4c-6a51-4d6a-9d54-1f6b7a1c2d3"), false},
		"any JSON value is fine as data":    {domain.ValidateData("data", []byte(` {"a": [1, 2.5e3, "é"]} `), 100), true},
		"data over the limit is refused":    {domain.ValidateData("data", []byte(`"0123456789"`), 5), false},
		"data that is not JSON is refused":  {domain.ValidateData("data", []byte(`{`), 100), false},
		"data of invalid UTF-8 is refused":  {domain.ValidateData("data", []byte("\"\xff\""), 100), false},
		"missing data is refused":           {domain.ValidateData("data", nil, 100), false},
	} {
		if got := tc.fe == nil; got != tc.want {
			t.Errorf("%s: valid = %v, want %v (%v)", name, got, tc.want, tc.fe)
		}
	}
}

func TestEntryIsLiveUntilTheInstantItExpires(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	exp := now.Add(time.Second)
	e := domain.Entry{ExpiresAt: &exp}
	if !e.Live(now) || !e.Live(exp.Add(-time.Nanosecond)) || e.Live(exp) {
		t.Fatal("an entry must be live before its expiry and dead from it")
	}
	e.ExpiresAt, e.DateDeleted = nil, &now
	if e.Live(now) {
		t.Fatal("a deleted entry is not live")
	}
}
