package domain_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cachegate/cachegate/domain"
)

func TestValidateUsernameRefusesControlCharactersAnywhere(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, username string
		ok             bool
	}{
		{"a plain name is valid", "alice", true},
		{"a name with inner spaces and letters outside ASCII is valid", "Zoë van Dijk", true},
		{"surrounding spaces are trimmed, not refused", "  bob  ", true},
		{"a name of 320 characters is valid", strings.Repeat("é", domain.MaxUsernameLen), true},
		{"an empty name is refused", "", false},
		{"a name of spaces is refused", "   ", false},
		{"a name of 321 characters is refused", strings.Repeat("a", domain.MaxUsernameLen+1), false},
		{"a name that is not UTF-8 is refused", "bad\xffname", false},
		{"a line feed is refused", "ctl\nname", false},
		{"a trailing line feed is refused", "bob\n", false},
		{"a tab is refused", "a\tb", false},
		{"NUL is refused", "a\x00b", false},
		{"escape (a terminal sequence) is refused", "esc\x1b[2J", false},
		{"DEL is refused", "a\x7fb", false},
		{"a C1 control (CSI) is refused", "a\u009b2Jb", false},
		{"NEL (C1) is refused", "a\u0085b", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := domain.ValidateUsername(c.username)
			if c.ok {
				if err != nil {
					t.Fatalf("ValidateUsername(%q) = %v, want nil", c.username, err)
				}
				return
			}
			var de *domain.Error
			if !errors.As(err, &de) || de.Kind != domain.KindInvalid || len(de.Details) != 1 || de.Details[0].Field != "username" {
				t.Fatalf("ValidateUsername(%q) = %v, want an invalid username", c.username, err)
			}
		})
	}
}
