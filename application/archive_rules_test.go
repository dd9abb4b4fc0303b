package application_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// loadRecorder is an ArchiveWriter that keeps the entries it is given and
// whether the load was committed.
type loadRecorder struct {
	entries   []domain.Entry
	committed bool
}

func (l *loadRecorder) Holds(context.Context, []string) (bool, error) { return false, nil }
func (l *loadRecorder) BeginLoad(context.Context, bool) (ports.ArchiveLoad, error) {
	return l, nil
}
func (l *loadRecorder) AddUsers(_ context.Context, us []domain.User) (int, error) {
	return len(us), nil
}
func (l *loadRecorder) AddSigningKeys(_ context.Context, ks []domain.SigningKey) (int, error) {
	return len(ks), nil
}
func (l *loadRecorder) AddRefreshFamilies(_ context.Context, fs []domain.RefreshFamily) (int, error) {
	return len(fs), nil
}
func (l *loadRecorder) AddRefreshTokens(_ context.Context, rs []domain.RefreshRecord) (int, error) {
	return len(rs), nil
}
func (l *loadRecorder) ConvertRefreshTokens(context.Context) (int, int, error) { return 0, 0, nil }
func (l *loadRecorder) AddEntries(_ context.Context, _ string, es []domain.Entry) (int, error) {
	l.entries = append(l.entries, es...)
	return len(es), nil
}
func (l *loadRecorder) KeepSigningKey(context.Context, string, time.Time) (int, error) { return 0, nil }
func (l *loadRecorder) Commit() error                                                  { l.committed = true; return nil }
func (l *loadRecorder) Rollback() error                                                { return nil }

type clockAt time.Time

func (c clockAt) Now() time.Time { return time.Time(c) }

// TestImportHoldsEntriesToTheEntryRules: an imported entry goes through
// domain.Entry.Validate like every other path that makes an entry
// (ARCHITECTURE.md, "Who owns what"), its data bounded by MaxDataBytes as
// a write's (README, "Export and import").
func TestImportHoldsEntriesToTheEntryRules(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	const id, who = "0190A000-0000-7000-8000-000000000001", "A11CE000-0000-4000-8000-000000000001"
	good := domain.Entry{ID: id, Key: "k", Type: "t", AssigneeID: who, Data: []byte(`"v"`), Version: 3,
		DateCreated: now.Add(-time.Hour), DateUpdated: now.Add(-time.Minute)}
	run := func(e domain.Entry) (*loadRecorder, error) {
		w := &loadRecorder{}
		a := &application.Archive{Writer: w, Clock: clockAt(now), Entities: map[string]string{"user": "cache"}, MaxDataBytes: 1000}
		done := false
		_, err := a.Import(t.Context(), application.ImportInput{Next: func() (application.ArchiveRecord, error) {
			if done {
				return application.ArchiveRecord{}, io.EOF
			}
			done = true
			return application.ArchiveRecord{Entry: &e, Entity: "user", Line: 7}, nil
		}})
		return w, err
	}

	t.Run("a good entry is loaded with its ids in lower case and data up to the limit", func(t *testing.T) {
		t.Parallel()
		e := good
		e.Data = []byte(`"` + strings.Repeat("x", 998) + `"`)
		w, err := run(e)
		if err != nil || !w.committed || len(w.entries) != 1 {
			t.Fatalf("import: %v (committed %v, %d entries)", err, w.committed, len(w.entries))
		}
		if got := w.entries[0]; got.ID != strings.ToLower(id) || got.AssigneeID != strings.ToLower(who) || got.Version != 3 {
			t.Errorf("loaded %+v", got)
		}
	})
	for name, change := range map[string]func(*domain.Entry){
		"key":         func(e *domain.Entry) { e.Key = strings.Repeat("k", 256) },
		"type":        func(e *domain.Entry) { e.Type = "a\x00b" },
		"assignee.id": func(e *domain.Entry) { e.AssigneeID = "bob" },
		"data":        func(e *domain.Entry) { e.Data = []byte(`{`) },
		"data size":   func(e *domain.Entry) { e.Data = []byte(`"` + strings.Repeat("x", 999) + `"`) },
		"id":          func(e *domain.Entry) { e.ID = "42" },
	} {
		t.Run("an entry with a bad "+name+" stops the import, naming its line", func(t *testing.T) {
			t.Parallel()
			e := good
			change(&e)
			w, err := run(e)
			var de *domain.Error
			field, _, _ := strings.Cut(name, " ")
			if !errors.As(err, &de) || len(de.Details) != 1 || de.Details[0].Field != field || !strings.HasPrefix(err.Error(), "line 7: entry: ") {
				t.Fatalf("import error %v, want line 7 and field %s", err, name)
			}
			if w.committed || len(w.entries) != 0 {
				t.Errorf("a refused import loaded %d entries (committed %v)", len(w.entries), w.committed)
			}
		})
	}
}

// TestImportRefusesAUserARequestWouldRefuse: a user record is held to
// domain.User.Validate (a username with a control character, a hash of
// another shape) and stops the import, naming its line, before anything
// is committed.
func TestImportRefusesAUserARequestWouldRefuse(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	good := domain.User{ID: "0190a000-0000-7000-8000-000000000001", Username: "alice",
		PasswordHash: "$2a$04$abcdefghijklmnopqrstuu5RxK6Xn8m8G6l2V7yVnqQ3R1V9X2dA6", DateCreated: at, DateUpdated: at}
	for name, c := range map[string]struct {
		field  string
		change func(*domain.User)
	}{
		"a username with a line feed":        {"username", func(u *domain.User) { u.Username = "ctl\nname" }},
		"a username with an escape sequence": {"username", func(u *domain.User) { u.Username = "esc\x1b[2J" }},
		"a password hash in clear":           {"passwordHash", func(u *domain.User) { u.PasswordHash = "hunter22" }},
	} {
		t.Run(name+" stops the import, naming its line", func(t *testing.T) {
			t.Parallel()
			bad := good
			bad.ID = "0190a000-0000-7000-8000-000000000002"
			c.change(&bad)
			recs := []application.ArchiveRecord{{User: &good, Line: 2}, {User: &bad, Line: 3}}
			w := &loadRecorder{}
			a := &application.Archive{Writer: w, Clock: clockAt(at)}
			_, err := a.Import(t.Context(), application.ImportInput{Next: func() (application.ArchiveRecord, error) {
				if len(recs) == 0 {
					return application.ArchiveRecord{}, io.EOF
				}
				r := recs[0]
				recs = recs[1:]
				return r, nil
			}})
			var de *domain.Error
			if !errors.As(err, &de) || len(de.Details) != 1 || de.Details[0].Field != c.field || !strings.HasPrefix(err.Error(), "line 3: user: ") {
				t.Fatalf("import error %v, want line 3 and field %s", err, c.field)
			}
			if w.committed {
				t.Error("a refused import was committed")
			}
		})
	}
}
