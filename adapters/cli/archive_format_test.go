package cli

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

var archiveT0 = time.Date(2030, 1, 2, 3, 4, 5, 678901000, time.UTC)

func archiveSample() []application.ArchiveRecord {
	later := archiveT0.Add(time.Hour)
	return []application.ArchiveRecord{
		{User: &domain.User{ID: "u1", Username: "Alice <&>", PasswordHash: "$2a$04$x", Active: true, DateCreated: archiveT0, DateUpdated: later}},
		{Key: &domain.SigningKey{ID: "k1", Algorithm: "EdDSA", Private: []byte{0, 1, 2, 255}, Public: []byte{9}, DateCreated: archiveT0, RetiredAt: &later}},
		{Refresh: &domain.RefreshRecord{ID: "r1", FamilyID: "f1", UserID: "u1", IssuedAt: archiveT0, ExpiresAt: later, UsedAt: &archiveT0}},
		{Entity: "userCache", Entry: &domain.Entry{ID: "e1", Key: "k", Type: "t", AssigneeID: "u1",
			Data: []byte(`{"a": [1, 2.50],  "html":"<b>&amp;</b>", "u":"\u00e9"}`), Version: 3, DateCreated: archiveT0, DateUpdated: later}},
		{Entity: "orgCache", Entry: &domain.Entry{ID: "e2", Key: "k", Type: "t", AssigneeID: "u1",
			Data: []byte("{\n  \"pretty\": true\r\n}"), Version: 1, DateCreated: archiveT0, DateUpdated: archiveT0, ExpiresAt: &later}},
	}
}

func writeArchive(t testing.TB, recs []application.ArchiveRecord) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := newArchiveWriter(&b, archiveT0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.record(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.end(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func readArchive(data []byte) ([]application.ArchiveRecord, error) {
	r, err := newArchiveReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var out []application.ArchiveRecord
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
}

func TestArchiveRoundTripsEveryFieldAndDataByteForByte(t *testing.T) {
	t.Parallel()
	in := archiveSample()
	file := writeArchive(t, in)
	if n := bytes.Count(file, []byte("\n")); n != len(in)+2 {
		t.Fatalf("%d lines, want header + %d records + end:\n%s", n, len(in), file)
	}
	out, err := readArchive(file)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i].Line = i + 2
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip changed records:\n%+v\n%+v", in, out)
	}
}

func TestArchiveReaderNamesTheLineOfAProblem(t *testing.T) {
	t.Parallel()
	good := strings.Split(strings.TrimSuffix(string(writeArchive(t, archiveSample())), "\n"), "\n")
	for _, c := range []struct {
		name  string
		edit  func([]string) []string
		wants string
	}{
		{"a line cut short", func(l []string) []string { l[3] = l[3][:10]; return l }, "line 4:"},
		{"an unknown field", func(l []string) []string { l[2] = strings.Replace(l[2], `{"kind"`, `{"extra":1,"kind"`, 1); return l }, "line 3:"},
		{"an unknown kind", func(l []string) []string { l[4] = `{"kind":"other"}`; return l }, `line 5: unknown kind "other"`},
		{"entry data missing", func(l []string) []string {
			l[5] = `{"kind":"entry","entity":"e","id":"i","key":"k","type":"t","assigneeId":"a","version":1,"dateCreated":"2030-01-01T00:00:00Z","dateUpdated":"2030-01-01T00:00:00Z","expiresAt":null}`
			return l
		}, "line 6: entry: data is missing"},
		{"no end line", func(l []string) []string { return l[:len(l)-1] }, "truncated"},
		{"a count that disagrees", func(l []string) []string { return append(l[:2], l[len(l)-1]) }, "the end line counts 5 records, the file holds 1"},
		{"a line after the end", func(l []string) []string { return append(l, l[1]) }, "line 8: a line after the end line"},
		{"another version", func(l []string) []string { l[0] = strings.Replace(l[0], `"version":1`, `"version":2`, 1); return l }, "line 1: format version 2"},
		{"not an export", func(l []string) []string { return []string{`{"format":"other"}`} }, "line 1: not a cachegate export"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			lines := c.edit(append([]string(nil), good...))
			_, err := readArchive([]byte(strings.Join(lines, "\n") + "\n"))
			if err == nil || !strings.Contains(err.Error(), c.wants) {
				t.Fatalf("error %v, want one containing %q", err, c.wants)
			}
		})
	}
}

// FuzzArchiveReader feeds the reader anything: it must never panic, and
// what it accepts must survive being written and read again.
func FuzzArchiveReader(f *testing.F) {
	good := writeArchive(f, archiveSample())
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add([]byte(`{"format":"cachegate-export","version":1,"exportedAt":"2030-01-01T00:00:00Z"}` + "\n" + `{"kind":"end","records":0}` + "\n"))
	f.Add([]byte("{}\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := readArchive(data)
		if err != nil {
			return
		}
		again, err := readArchive(writeArchive(t, recs))
		if err != nil {
			t.Fatalf("a file read back written again fails: %v", err)
		}
		if len(again) != len(recs) {
			t.Fatalf("%d records, then %d", len(recs), len(again))
		}
	})
}
