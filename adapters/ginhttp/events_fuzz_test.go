package ginhttp

import (
	"strings"
	"testing"

	"github.com/cachegate/cachegate/domain"
)

// FuzzParseEventsQuery: any query string and Last-Event-ID give a parsed
// query or a validation error, never a panic; a revision that is accepted
// is non-negative and is what the text said.
func FuzzParseEventsQuery(f *testing.F) {
	for _, seed := range [][2]string{
		{"", ""}, {"since=0", ""}, {"since=42&key=k&type=t&assignee.id=a", ""}, {"since=-1", ""},
		{"since=99999999999999999999", ""}, {"since=1&since=2", ""}, {"access_token=x.y.z", "7"},
		{"keyy=1", ""}, {"%zz", ""}, {"key=%00", ""}, {"key=", ""}, {"", " 12 "}, {"", "x"}, {"", "+1"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, raw, lastEventID string) {
		var hdr []string
		if lastEventID != "" {
			hdr = []string{lastEventID}
		}
		q, err := parseEventsQuery(raw, hdr)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid {
				t.Fatalf("parseEventsQuery(%q, %q) = %v, want a validation error", raw, lastEventID, err)
			}
			return
		}
		if q.since != nil && *q.since < 0 {
			t.Fatalf("accepted negative revision %d", *q.since)
		}
		if q.since != nil && lastEventID != "" {
			if got := strings.TrimLeft(strings.TrimSpace(lastEventID), "0"); got != "" && got != itoa(*q.since) {
				t.Fatalf("Last-Event-ID %q read as %d", lastEventID, *q.since)
			}
		}
	})
}

func itoa(n int64) string {
	if n == 0 {
		return ""
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
