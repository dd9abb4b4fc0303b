package config

import (
	"fmt"
	"log/slog"
)

// redacted is what every printed form of a secret shows.
const redacted = "REDACTED"

// Secret holds a secret value. Every way of printing it — fmt with any
// verb, slog, JSON, YAML — shows "REDACTED"; only Reveal and Bytes give the
// value, so a leak needs an explicit call. The zero Secret is unset.
type Secret struct {
	value string
}

// NewSecret wraps s.
func NewSecret(s string) Secret { return Secret{value: s} }

// Reveal returns the secret value.
func (s Secret) Reveal() string { return s.value }

// Bytes returns a fresh copy of the secret value; nil when unset.
func (s Secret) Bytes() []byte {
	if !s.IsSet() {
		return nil
	}
	return []byte(s.value)
}

// IsSet reports whether the secret holds a value.
func (s Secret) IsSet() bool { return s.value != "" }

// Len returns the secret's length in bytes.
func (s Secret) Len() int { return len(s.value) }

// String returns "REDACTED".
func (s Secret) String() string { return redacted }

// GoString returns "REDACTED", for %#v.
func (s Secret) GoString() string { return redacted }

// Format prints "REDACTED" whatever the verb, so even %x or %d of a struct
// holding a Secret shows nothing of it.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(redacted)) }

// LogValue implements slog.LogValuer.
func (s Secret) LogValue() slog.Value { return slog.StringValue(redacted) }

// MarshalJSON returns "REDACTED" as a JSON string.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + redacted + `"`), nil }

// MarshalYAML returns "REDACTED".
func (s Secret) MarshalYAML() (any, error) { return redacted, nil }

// MarshalText returns "REDACTED", for encoders that prefer text.
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }
