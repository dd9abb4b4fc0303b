package ginhttp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/test/contract"
)

// stdEntry is the entry DTO as encoding/json would write it: the yardstick
// of the hand-written encoder.
type stdEntry = contract.Entry

const stdLayout = "2006-01-02T15:04:05.000Z07:00"

func toStdEntry(e domain.Entry) stdEntry {
	ts := func(t *time.Time) *string {
		if t == nil {
			return nil
		}
		s := t.UTC().Format(stdLayout)
		return &s
	}
	out := stdEntry{ID: e.ID, DateCreated: *ts(&e.DateCreated), DateUpdated: *ts(&e.DateUpdated),
		DateDeleted: ts(e.DateDeleted), Version: e.Version, Key: e.Key, Type: e.Type, Data: e.Data,
		ExpirationDate: ts(e.ExpiresAt)}
	out.Assignee.ID = e.AssigneeID
	return out
}

func stdMarshal(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func sampleEntry() domain.Entry {
	created := time.Date(2026, 11, 25, 10, 0, 0, 123456000, time.UTC)
	exp := created.Add(time.Hour)
	return domain.Entry{ID: "0190a5c0-0000-7000-8000-000000000001", Key: "session", Type: "web",
		AssigneeID: "a11ce000-0000-4000-8000-000000000001", Data: []byte(`{"a" : [1, 2.5e3], "s":"✓"}`),
		Version: 3, DateCreated: created, DateUpdated: created.Add(1500 * time.Millisecond), ExpiresAt: &exp}
}

func TestAppendEntryMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	del := time.Date(2027, 1, 2, 3, 4, 5, 999999999, time.FixedZone("x", 3600))
	for name, mod := range map[string]func(*domain.Entry){
		"a live entry with expiry":         func(*domain.Entry) {},
		"an entry that never expires":      func(e *domain.Entry) { e.ExpiresAt = nil },
		"a deleted entry in another zone":  func(e *domain.Entry) { e.DateDeleted = &del },
		"awkward key and type":             func(e *domain.Entry) { e.Key, e.Type = "q\"b\\s\n\t\x01\x7f<&>", "\u2028\u2029é😀" },
		"a string datum":                   func(e *domain.Entry) { e.Data = []byte(`"just a string"`) },
		"a year before 1000 and past 2100": func(e *domain.Entry) { e.DateCreated = time.Date(999, 1, 1, 0, 0, 0, 0, time.UTC) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := sampleEntry()
			mod(&e)
			got := appendEntry(nil, &e)
			if !bytes.Contains(got, append([]byte(`,"data":`), e.Data...)) {
				t.Errorf("data is not copied verbatim: %s", got)
			}
			// encoding/json compacts raw data; compare compacted.
			var compact bytes.Buffer
			if err := json.Compact(&compact, got); err != nil {
				t.Fatalf("not JSON: %v: %s", err, got)
			}
			if want := stdMarshal(t, toStdEntry(e)); !bytes.Equal(compact.Bytes(), want) {
				t.Errorf("got  %s\nwant %s", compact.Bytes(), want)
			}
		})
	}
}

func TestAppendTime(t *testing.T) {
	t.Parallel()
	for in, want := range map[time.Time]string{
		time.Date(2026, 11, 25, 10, 0, 0, 123456789, time.UTC):                 `"2026-11-25T10:00:00.123Z"`,
		time.Date(2026, 1, 2, 3, 4, 5, 999999999, time.UTC):                    `"2026-01-02T03:04:05.999Z"`,
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("minus", -5*3600)):    `"2026-01-02T08:04:05.000Z"`,
		time.Date(2026, 12, 31, 23, 30, 0, 7000000, time.FixedZone("p", 3600)): `"2026-12-31T22:30:00.007Z"`,
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC):                           `"10000-01-01T00:00:00.000Z"`,
	} {
		if got := string(web.AppendTime(nil, in)); got != want {
			t.Errorf("%v: %s, want %s", in, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "q\"\\\n\x00\x1f\x7f", "\u2028\u2029", "\xff\xfe", "é😀<>&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := web.AppendString(nil, s)
		if want := stdMarshal(t, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

func BenchmarkEncodeEntry(b *testing.B) {
	e := sampleEntry()
	e.Data = []byte(`"` + strings.Repeat("x", 200) + `"`)
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = appendEntry(buf[:0], &e)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkEncodeEntryStdlib(b *testing.B) {
	e := sampleEntry()
	e.Data = []byte(`"` + strings.Repeat("x", 200) + `"`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(toStdEntry(e)); err != nil {
			b.Fatal(err)
		}
	}
}
