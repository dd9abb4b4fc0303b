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
		{Family: &domain.RefreshFamily{ID: "f1", UserID: "u1", CurrentID: "r3", IssuedAt: archiveT0, ExpiresAt: later, Generation: 2,
			Used: []domain.UsedRefresh{{ID: "r2", UsedAt: archiveT0}, {ID: "r1", UsedAt: archiveT0.Add(-time.Minute)}}, RevokedAt: &later}},
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
		err := error(nil)
		if f := r.Refresh; f != nil {
			// Only a record read from a file of version 1 has one, which
			// export never writes; the fuzz test writes it back.
			w.n++
			err = w.line(archiveRefresh{Kind: "refresh", ID: f.ID, FamilyID: f.FamilyID, UserID: f.UserID,
				IssuedAt: f.IssuedAt.UTC(), ExpiresAt: f.ExpiresAt.UTC(), UsedAt: utcPtr(f.UsedAt), RevokedAt: utcPtr(f.RevokedAt)})
		} else {
			err = w.record(r)
		}
		if err != nil {
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
		{"a later version", func(l []string) []string { l[0] = strings.Replace(l[0], `"version":2`, `"version":3`, 1); return l }, "line 1: format version 3"},
		{"a family remembering too many used tokens", func(l []string) []string {
			l[3] = strings.Replace(l[3], `"used":[`, `"used":[{"id":"r0","usedAt":"2030-01-01T00:00:00Z"},`, 1)
			return l
		}, "line 4: refreshFamily: at most 2 used tokens"},
		{"a family whose used token is its live one", func(l []string) []string {
			l[3] = strings.Replace(l[3], `"id":"r2"`, `"id":"r3"`, 1)
			return l
		}, "line 4: refreshFamily: a used token needs an id of its own"},
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

// TestArchiveReaderReadsVersion1 reads a file of format version 1, whose
// sessions are one "refresh" line per issued token: they come as Refresh
// records (import stores their families), and the rest as in version 2.
func TestArchiveReaderReadsVersion1(t *testing.T) {
	t.Parallel()
	file := `{"format":"cachegate-export","version":1,"exportedAt":"2030-01-02T03:04:05.678901Z"}
{"kind":"user","id":"u1","username":"alice","passwordHash":"$2a$04$x","passwordSalt":"","active":true,"dateCreated":"2030-01-02T03:04:05.678901Z","dateUpdated":"2030-01-02T03:04:05.678901Z"}
{"kind":"refresh","id":"r1","familyId":"f1","userId":"u1","issuedAt":"2030-01-02T03:04:05.678901Z","expiresAt":"2030-02-01T03:04:05.678901Z","usedAt":"2030-01-02T03:04:05.678901Z","revokedAt":null}
{"kind":"refresh","id":"r2","familyId":"f1","userId":"u1","issuedAt":"2030-01-02T03:04:05.678901Z","expiresAt":"2030-02-01T03:04:05.678901Z","usedAt":null,"revokedAt":null}
{"kind":"end","records":3}
`
	recs, err := readArchive([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].User == nil || recs[1].Refresh == nil || recs[2].Refresh == nil {
		t.Fatalf("records %+v, want a user and two refresh tokens", recs)
	}
	r1, r2 := recs[1].Refresh, recs[2].Refresh
	if r1.ID != "r1" || r1.FamilyID != "f1" || r1.UsedAt == nil || !r1.UsedAt.Equal(archiveT0) || r2.ID != "r2" || r2.UsedAt != nil ||
		!r2.ExpiresAt.Equal(archiveT0.Add(30*24*time.Hour)) {
		t.Fatalf("refresh tokens %+v and %+v, want r1 used and r2 live, as written", r1, r2)
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

// boundedSource is a file of a header line then one endless line; it
// fails the test if more than limit bytes are read from it.
type boundedSource struct {
	t      *testing.T
	header []byte
	read   int
	limit  int
}

func (s *boundedSource) Read(p []byte) (int, error) {
	if s.read+len(p) > s.limit {
		s.t.Errorf("the reader read past %d bytes: it buffers the over-long line", s.limit)
		return 0, errors.New("read past the bound")
	}
	for i := range p {
		if s.read+i < len(s.header) {
			p[i] = s.header[s.read+i]
		} else {
			p[i] = 'x'
		}
	}
	s.read += len(p)
	return len(p), nil
}

// TestArchiveReaderRefusesAnOverlongLineWithoutReadingIt: a line longer
// than any record can take with the data limit is refused by its number
// once the bound is passed, its rest never read (README.md, "Export and
// import": memory stays that of one record).
func TestArchiveReaderRefusesAnOverlongLineWithoutReadingIt(t *testing.T) {
	t.Parallel()
	const maxData = 1000
	header := strings.SplitAfter(string(writeArchive(t, nil)), "\n")[0]
	src := &boundedSource{t: t, header: []byte(header), limit: maxArchiveLine(maxData) + 256<<10}
	r, err := newArchiveReader(src)
	if err != nil {
		t.Fatal(err)
	}
	r.limitData(maxData)
	_, err = r.Next()
	if err == nil || !strings.HasPrefix(err.Error(), "line 2: longer than") || !strings.Contains(err.Error(), "--data-bytes") {
		t.Fatalf("error %v, want line 2 refused as longer than the bound", err)
	}
}

// TestArchiveReaderTakesTheLongestValidRecord: data of maxData bytes that
// goes as dataText, escaped six bytes a byte, is read, and the line ends
// "\r\n" and none (at the end of the file) are read as "\n".
func TestArchiveReaderTakesTheLongestValidRecord(t *testing.T) {
	t.Parallel()
	const maxData = 1000
	data := []byte("\"" + strings.Repeat("<", maxData-3) + "\"\n")
	recs := archiveSample()[3:4]
	e := *recs[0].Entry
	e.Data = data
	recs[0].Entry = &e
	file := writeArchive(t, recs)
	if len(file) < 6*(maxData-3) {
		t.Fatalf("the file is %d bytes: the data was not escaped six bytes a byte", len(file))
	}
	file = bytes.TrimSuffix(bytes.ReplaceAll(file, []byte("\n"), []byte("\r\n")), []byte("\r\n"))
	r, err := newArchiveReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	r.limitData(maxData)
	got, err := r.Next()
	if err != nil || !bytes.Equal(got.Entry.Data, data) {
		t.Fatalf("Next = %v; data equal: %v", err, err == nil && bytes.Equal(got.Entry.Data, data))
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the record: %v, want the end line read and io.EOF", err)
	}
}
