package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// The export file (docs/operations.md, "Moving from SQLite to PostgreSQL") is JSON Lines: a header line
// naming the format and its version (archiveHeader), one line per record,
// each a JSON object whose "kind" names its type (archiveUser, archiveKey,
// archiveFamily, archiveEntry), and an end line with the number of records
// (archiveEnd), so a truncated file is told from a whole one. Times are RFC
// 3339 in UTC with microseconds. Unknown fields are refused: a file of a
// later version says so in its header.
//
// Version 1 carried sessions as one "refresh" line per issued token
// (archiveRefresh) where version 2 carries one "refreshFamily" line per
// family (the live token and the used tokens the family remembers). Files
// of both versions are read; import stores the families of version 1's
// tokens.

const (
	archiveFormat  = "cachegate-export"
	archiveVersion = 2
	// archiveOldest is the oldest version still read.
	archiveOldest = 1
	// archiveLineSlack is what a line holds besides an entry's data: the
	// largest of any other record (a signing key's halves of 64 KiB each
	// in base64, a username or user agent escaped) fits.
	archiveLineSlack = 1 << 20
)

// maxArchiveLine is the longest line a valid record can take when entry
// data is at most maxData bytes: data written as a string (dataText)
// takes at most 6 bytes for each of its own ("<" is \u003c). A longer line
// is refused unread, so an import holds one record in memory.
func maxArchiveLine(maxData int) int { return 6*maxData + archiveLineSlack }

type archiveHeader struct {
	Format     string    `json:"format"`
	Version    int       `json:"version"`
	ExportedAt time.Time `json:"exportedAt"`
}

type archiveKind struct {
	Kind string `json:"kind"`
}

type archiveUser struct {
	Kind         string    `json:"kind"`
	ID           string    `json:"id"`
	Username     string    `json:"username"`
	PasswordHash string    `json:"passwordHash"`
	PasswordSalt string    `json:"passwordSalt"`
	Active       bool      `json:"active"`
	Admin        bool      `json:"admin,omitempty"`
	DateCreated  time.Time `json:"dateCreated"`
	DateUpdated  time.Time `json:"dateUpdated"`
}

type archiveKey struct {
	Kind        string     `json:"kind"`
	ID          string     `json:"id"`
	Algorithm   string     `json:"algorithm"`
	Private     []byte     `json:"private"`
	Public      []byte     `json:"public"`
	DateCreated time.Time  `json:"dateCreated"`
	RetiredAt   *time.Time `json:"retiredAt"`
	RevokedAt   *time.Time `json:"revokedAt"`
}

type archiveRefresh struct {
	Kind      string     `json:"kind"`
	ID        string     `json:"id"`
	FamilyID  string     `json:"familyId"`
	UserID    string     `json:"userId"`
	IssuedAt  time.Time  `json:"issuedAt"`
	ExpiresAt time.Time  `json:"expiresAt"`
	UsedAt    *time.Time `json:"usedAt"`
	RevokedAt *time.Time `json:"revokedAt"`
}

type archiveFamily struct {
	Kind       string        `json:"kind"`
	ID         string        `json:"id"`
	UserID     string        `json:"userId"`
	CurrentID  string        `json:"currentId"`
	IssuedAt   time.Time     `json:"issuedAt"`
	ExpiresAt  time.Time     `json:"expiresAt"`
	Generation int64         `json:"generation"`
	Used       []archiveUsed `json:"used"`
	RevokedAt  *time.Time    `json:"revokedAt"`
	// The session's login, address and user agent (docs/admin.md);
	// absent from archives written before them.
	Created   *time.Time `json:"created,omitempty"`
	Address   string     `json:"address,omitempty"`
	UserAgent string     `json:"userAgent,omitempty"`
}

type archiveUsed struct {
	ID     string    `json:"id"`
	UsedAt time.Time `json:"usedAt"`
}

type archiveEntry struct {
	Kind       string          `json:"kind"`
	Entity     string          `json:"entity"`
	ID         string          `json:"id"`
	Key        string          `json:"key"`
	Type       string          `json:"type"`
	AssigneeID string          `json:"assigneeId"`
	Data       json.RawMessage `json:"data,omitempty"`
	// DataText carries data whose JSON text holds a line break (between
	// tokens), which one line cannot hold as it is: the text as a string.
	DataText    *string    `json:"dataText,omitempty"`
	Version     int        `json:"version"`
	DateCreated time.Time  `json:"dateCreated"`
	DateUpdated time.Time  `json:"dateUpdated"`
	ExpiresAt   *time.Time `json:"expiresAt"`
}

type archiveEnd struct {
	Kind    string `json:"kind"`
	Records int    `json:"records"`
}

// archiveWriter writes the file, line by line, through a buffer.
type archiveWriter struct {
	w *bufio.Writer
	n int
}

func newArchiveWriter(w io.Writer, now time.Time) (*archiveWriter, error) {
	a := &archiveWriter{w: bufio.NewWriterSize(w, 256<<10)}
	return a, a.line(archiveHeader{Format: archiveFormat, Version: archiveVersion, ExportedAt: now.UTC()})
}

func (a *archiveWriter) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = a.w.Write(b)
	return err
}

func (a *archiveWriter) record(r application.ArchiveRecord) error {
	a.n++
	switch {
	case r.User != nil:
		u := r.User
		return a.line(archiveUser{Kind: "user", ID: u.ID, Username: u.Username, PasswordHash: u.PasswordHash,
			PasswordSalt: u.PasswordSalt, Active: u.Active, Admin: u.Admin, DateCreated: u.DateCreated.UTC(), DateUpdated: u.DateUpdated.UTC()})
	case r.Key != nil:
		k := r.Key
		return a.line(archiveKey{Kind: "signingKey", ID: k.ID, Algorithm: k.Algorithm, Private: k.Private, Public: k.Public,
			DateCreated: k.DateCreated.UTC(), RetiredAt: utcPtr(k.RetiredAt), RevokedAt: utcPtr(k.RevokedAt)})
	case r.Family != nil:
		f := r.Family
		used := make([]archiveUsed, 0, len(f.Used))
		for _, u := range f.Used {
			used = append(used, archiveUsed{ID: u.ID, UsedAt: u.UsedAt.UTC()})
		}
		return a.line(archiveFamily{Kind: "refreshFamily", ID: f.ID, UserID: f.UserID, CurrentID: f.CurrentID,
			IssuedAt: f.IssuedAt.UTC(), ExpiresAt: f.ExpiresAt.UTC(), Generation: f.Generation, Used: used,
			RevokedAt: utcPtr(f.RevokedAt), Created: utcPtr(timeOrNil(f.Created)), Address: f.Address, UserAgent: f.UserAgent})
	case r.Entry != nil:
		return a.entry(r.Entity, r.Entry)
	}
	return errors.New("export: an empty record")
}

// entry writes an entry's line. Its data is written as the bytes stored
// (json.Marshal would compact and re-escape them), so it comes back byte
// for byte; data holding a line break goes as a string in dataText.
func (a *archiveWriter) entry(entity string, e *domain.Entry) error {
	dto := archiveEntry{Kind: "entry", Entity: entity, ID: e.ID, Key: e.Key, Type: e.Type, AssigneeID: e.AssigneeID,
		Version: e.Version, DateCreated: e.DateCreated.UTC(), DateUpdated: e.DateUpdated.UTC(), ExpiresAt: utcPtr(e.ExpiresAt)}
	raw := bytes.ContainsAny(e.Data, "\r\n")
	if raw {
		text := string(e.Data)
		dto.DataText = &text
	}
	b, err := json.Marshal(dto)
	if err != nil {
		return err
	}
	if !raw {
		b = append(append(append(b[:len(b)-1], `,"data":`...), e.Data...), '}')
	}
	b = append(b, '\n')
	_, err = a.w.Write(b)
	return err
}

func (a *archiveWriter) end() error {
	if err := a.line(archiveEnd{Kind: "end", Records: a.n}); err != nil {
		return err
	}
	return a.w.Flush()
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// archiveReader reads the file record by record; every error names the
// line it is about.
type archiveReader struct {
	r       *bufio.Reader
	buf     []byte // the line being read
	max     int    // the longest line accepted: maxArchiveLine(maxData)
	maxData int
	line    int
	records int
	ended   bool
}

func lineError(line int, format string, a ...any) error {
	return fmt.Errorf("line %d: "+format, append([]any{line}, a...)...)
}

// newArchiveReader reads the header of the file r and returns its
// reader, which holds entry data to domain.DefaultMaxDataBytes until
// limitData says otherwise.
func newArchiveReader(r io.Reader) (*archiveReader, error) {
	a := &archiveReader{r: bufio.NewReaderSize(r, 64<<10)}
	a.limitData(domain.DefaultMaxDataBytes)
	b, err := a.next()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("line 1: the file is empty; want a cachegate export")
	}
	if err != nil {
		return nil, err
	}
	var h archiveHeader
	if err := strictJSON(b, &h); err != nil || h.Format != archiveFormat {
		return nil, lineError(1, "not a cachegate export: the first line must be the header {\"format\":%q,…}", archiveFormat)
	}
	if h.Version < archiveOldest || h.Version > archiveVersion {
		return nil, lineError(1, "format version %d; this cachegate reads versions %d to %d", h.Version, archiveOldest, archiveVersion)
	}
	return a, nil
}

// limitData bounds the lines that follow to what a record holding entry
// data of at most maxData bytes can take (maxArchiveLine).
func (a *archiveReader) limitData(maxData int) {
	a.maxData, a.max = maxData, maxArchiveLine(maxData)
}

// next returns the next line without its end ("\n" or "\r\n"), valid
// until the following call, or io.EOF after the last. A line longer than
// a.max is refused once a.max bytes of it are read; the rest is never read.
func (a *archiveReader) next() ([]byte, error) {
	a.buf = a.buf[:0]
	for {
		chunk, err := a.r.ReadSlice('\n')
		a.buf = append(a.buf, chunk...)
		line := bytes.TrimSuffix(bytes.TrimSuffix(a.buf, []byte("\n")), []byte("\r"))
		if len(line) > a.max {
			return nil, lineError(a.line+1, "longer than %d bytes, more than any record can take with entry data of at most %d bytes (--data-bytes): an entry's data is over the limit, or the line is not a record", a.max, a.maxData)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(a.buf) == 0:
			return nil, io.EOF
		case err != nil && !errors.Is(err, io.EOF):
			return nil, lineError(a.line+1, "%v", err)
		}
		a.line++
		return line, nil
	}
}

// Next returns the next record, or io.EOF after the end line.
func (a *archiveReader) Next() (application.ArchiveRecord, error) {
	b, err := a.next()
	if errors.Is(err, io.EOF) {
		if !a.ended {
			return application.ArchiveRecord{}, lineError(a.line+1, "the file ends without its end line: it is truncated")
		}
		return application.ArchiveRecord{}, io.EOF
	}
	if err != nil {
		return application.ArchiveRecord{}, err
	}
	if a.ended {
		return application.ArchiveRecord{}, lineError(a.line, "a line after the end line")
	}
	r, err := a.decode(b)
	if err != nil {
		return application.ArchiveRecord{}, lineError(a.line, "%v", err)
	}
	if r == nil {
		return a.Next() // the end line, checked
	}
	r.Line = a.line
	a.records++
	return *r, nil
}

// decode decodes one line; it returns nil for the end line.
func (a *archiveReader) decode(b []byte) (*application.ArchiveRecord, error) {
	var k archiveKind
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	switch k.Kind {
	case "user":
		u, err := decodeRecord(b, "user", func(u *archiveUser) []string { return []string{u.ID, u.Username, u.PasswordHash} })
		if err != nil {
			return nil, err
		}
		return &application.ArchiveRecord{User: &domain.User{ID: u.ID, Username: u.Username, PasswordHash: u.PasswordHash,
			PasswordSalt: u.PasswordSalt, Active: u.Active, Admin: u.Admin, DateCreated: u.DateCreated, DateUpdated: u.DateUpdated}}, nil
	case "signingKey":
		sk, err := decodeRecord(b, "signingKey", func(sk *archiveKey) []string { return []string{sk.ID, sk.Algorithm} })
		if err != nil {
			return nil, err
		}
		if len(sk.Private) == 0 && sk.RetiredAt == nil && sk.RevokedAt == nil {
			return nil, errors.New("signingKey: the current key has no private half")
		}
		return &application.ArchiveRecord{Key: &domain.SigningKey{ID: sk.ID, Algorithm: sk.Algorithm, Private: sk.Private,
			Public: sk.Public, DateCreated: sk.DateCreated, RetiredAt: sk.RetiredAt, RevokedAt: sk.RevokedAt}}, nil
	case "refresh":
		f, err := decodeRecord(b, "refresh", func(f *archiveRefresh) []string { return []string{f.ID, f.FamilyID, f.UserID} })
		if err != nil {
			return nil, err
		}
		return &application.ArchiveRecord{Refresh: &domain.RefreshRecord{ID: f.ID, FamilyID: f.FamilyID, UserID: f.UserID,
			IssuedAt: f.IssuedAt, ExpiresAt: f.ExpiresAt, UsedAt: f.UsedAt, RevokedAt: f.RevokedAt}}, nil
	case "refreshFamily":
		f, err := decodeRecord(b, "refreshFamily", func(f *archiveFamily) []string { return []string{f.ID, f.UserID} })
		if err != nil {
			return nil, err
		}
		if len(f.Used) > domain.RefreshKept || f.Generation < 0 || f.IssuedAt.IsZero() || f.ExpiresAt.IsZero() {
			return nil, fmt.Errorf("refreshFamily: at most %d used tokens, a generation not below 0, and both times, are required", domain.RefreshKept)
		}
		fam := domain.RefreshFamily{ID: f.ID, UserID: f.UserID, CurrentID: f.CurrentID, IssuedAt: f.IssuedAt,
			ExpiresAt: f.ExpiresAt, Generation: f.Generation, RevokedAt: f.RevokedAt, Address: f.Address, UserAgent: f.UserAgent}
		if f.Created != nil {
			fam.Created = *f.Created
		}
		for _, u := range f.Used {
			if u.ID == "" || fam.Holds(u.ID) || u.UsedAt.IsZero() {
				return nil, errors.New("refreshFamily: a used token needs an id of its own and its time")
			}
			fam.Used = append(fam.Used, domain.UsedRefresh{ID: u.ID, UsedAt: u.UsedAt})
		}
		return &application.ArchiveRecord{Family: &fam}, nil
	case "entry":
		e, err := decodeRecord(b, "entry", func(e *archiveEntry) []string { return []string{e.Entity, e.ID, e.Key, e.Type, e.AssigneeID} })
		if err != nil {
			return nil, err
		}
		data := []byte(e.Data)
		if e.DataText != nil {
			if len(e.Data) > 0 || !json.Valid([]byte(*e.DataText)) {
				return nil, errors.New("entry: dataText must be JSON text, and alone")
			}
			data = []byte(*e.DataText)
		}
		if len(bytes.TrimSpace(data)) == 0 || bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
			return nil, errors.New("entry: data is missing")
		}
		if e.Version < 1 || e.DateCreated.IsZero() || e.DateUpdated.IsZero() {
			return nil, errors.New("entry: version and dates are required")
		}
		return &application.ArchiveRecord{Entity: e.Entity, Entry: &domain.Entry{ID: e.ID, Key: e.Key, Type: e.Type,
			AssigneeID: e.AssigneeID, Data: bytes.Clone(data), Version: e.Version, DateCreated: e.DateCreated,
			DateUpdated: e.DateUpdated, ExpiresAt: e.ExpiresAt}}, nil
	case "end":
		end, err := decodeRecord(b, "end", func(*archiveEnd) []string { return nil })
		if err != nil {
			return nil, err
		}
		if end.Records != a.records {
			return nil, fmt.Errorf("the end line counts %d records, the file holds %d", end.Records, a.records)
		}
		a.ended = true
		return nil, nil
	case "":
		return nil, errors.New(`a record without "kind"`)
	default:
		return nil, fmt.Errorf("unknown kind %q", k.Kind)
	}
}

// strictJSON decodes b into v, refusing unknown fields and trailing data.
func strictJSON(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// decodeRecord decodes a line of kind strictly (strictJSON), and fails
// when any of the fields required returns of it is empty.
func decodeRecord[T any](b []byte, kind string, required func(*T) []string) (*T, error) {
	v := new(T)
	if err := strictJSON(b, v); err != nil {
		return nil, err
	}
	for _, f := range required(v) {
		if f == "" {
			return nil, fmt.Errorf("%s: a required field is empty", kind)
		}
	}
	return v, nil
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
