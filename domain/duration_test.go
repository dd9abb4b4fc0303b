package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

func TestParseDuration(t *testing.T) {
	t.Parallel()
	good := map[string]time.Duration{
		"1h":            time.Hour,
		"2d":            48 * time.Hour,
		"30s":           30 * time.Second,
		"15m":           15 * time.Minute,
		"500ms":         500 * time.Millisecond,
		"1.5h":          90 * time.Minute,
		"1h30m":         90 * time.Minute,
		"1h 30m":        90 * time.Minute,
		"2 days":        48 * time.Hour,
		"1 Week":        7 * 24 * time.Hour,
		"1y":            domain.Year,
		"100y":          100 * domain.Year,
		"10 SECONDS":    10 * time.Second,
		" 3hr ":         3 * time.Hour,
		"1 minute":      time.Minute,
		"0.5d":          12 * time.Hour,
		"1d12h":         36 * time.Hour,
		"2 hours 5 min": 2*time.Hour + 5*time.Minute,
		// Positive, though under a nanosecond: the shortest duration.
		"0.0000000000001ms": time.Nanosecond,
	}
	for in, want := range good {
		got, err := domain.ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	bad := []string{"", " ", "10", "1.5", "h", "0h", "0s", "-1h", "1x", "1h-", "1..5h", "1.h", ".h",
		"101y", "100y1s", "1e3h", "inf h", "NaNh", "1h 10", "0.0ms", "1 h m",
		// Only ASCII white space is trimmed, as the OpenAPI pattern says.
		"1h\u00a0", "\u20281h", "\v1h"}
	for _, in := range bad {
		if got, err := domain.ParseDuration(in); !errors.Is(err, domain.ErrBadDuration) {
			t.Errorf("ParseDuration(%q) = %v, %v; want ErrBadDuration", in, got, err)
		}
	}
}

func TestParseDurationSaysWhatIsWrong(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"10":          "bare number",
		"-1h":         "positive",
		"0s":          "more than zero",
		"101y":        "100 years",
		"1 fortnight": "such as",
	} {
		_, err := domain.ParseDuration(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseDuration(%q) = %v, want a message about %q", in, err, want)
		}
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"1h", "2 days", "1h30m", "1.5h", "100y", "0s", "-1h", "1e9y", "9999999999999999999999y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := domain.ParseDuration(s)
		if err != nil {
			return
		}
		if d <= 0 || d > domain.MaxExpiresIn {
			t.Fatalf("ParseDuration(%q) = %v: outside (0, 100y]", s, d)
		}
	})
}

func BenchmarkParseDuration(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := domain.ParseDuration("1h30m"); err != nil {
			b.Fatal(err)
		}
	}
}
