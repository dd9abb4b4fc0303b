package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

const someone = "0B9F0E4C-6A51-4D6A-9D54-1F6B7A1C2D3E"

func strp(s string) *string { return &s }

// problemsOf returns "field: message" for each detail of a validation
// error, or nil when err is nil.
func problemsOf(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var de *domain.Error
	if !errors.As(err, &de) || de.Kind != domain.KindInvalid || de.Code != domain.CodeValidation {
		t.Fatalf("not a validation error: %#v", err)
	}
	out := make([]string, len(de.Details))
	for i, d := range de.Details {
		out[i] = d.Field + ": " + d.Message
	}
	return out
}

func sameProblems(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The messages below are what clients read (test/contract checks the
// fields over HTTP); a change to one is a change of the API.
func TestEntryInputValidateAppliesEachRule(t *testing.T) {
	t.Parallel()
	good := domain.EntryInput{Key: "k", Type: "t", AssigneeID: someone, Data: []byte(`{"a":1}`), ExpiresIn: strp("1h")}
	// expiresIn's messages are ParseDuration's own.
	durationProblem := func(s string) string {
		_, err := domain.ParseDuration(s)
		return "expiresIn: " + err.Error()
	}
	for _, tc := range []struct {
		name   string
		change func(*domain.EntryInput)
		want   []string
	}{
		{"a good input passes", func(*domain.EntryInput) {}, nil},
		{"no expiresIn (the default) passes", func(in *domain.EntryInput) { in.ExpiresIn = nil }, nil},
		{"a 255-character key passes", func(in *domain.EntryInput) { in.Key = strings.Repeat("é", 255) }, nil},
		{"an empty key is refused", func(in *domain.EntryInput) { in.Key = "" }, []string{"key: must be a non-empty string"}},
		{"a 256-character key is refused", func(in *domain.EntryInput) { in.Key = strings.Repeat("é", 256) }, []string{"key: must be at most 255 characters"}},
		{"a key with NUL is refused", func(in *domain.EntryInput) { in.Key = "a\x00" }, []string{"key: must not contain the NUL character"}},
		{"a key of invalid UTF-8 is refused", func(in *domain.EntryInput) { in.Key = "\xff" }, []string{"key: must be valid UTF-8"}},
		{"an empty type is refused", func(in *domain.EntryInput) { in.Type = "" }, []string{"type: must be a non-empty string"}},
		{"a 256-character type is refused", func(in *domain.EntryInput) { in.Type = strings.Repeat("t", 256) }, []string{"type: must be at most 255 characters"}},
		{"an assignee that is not a UUID is refused", func(in *domain.EntryInput) { in.AssigneeID = "bob" }, []string{"assignee.id: must be a UUID"}},
		{"missing data is refused", func(in *domain.EntryInput) { in.Data = nil }, []string{"data: is required"}},
		{"data that is not JSON is refused", func(in *domain.EntryInput) { in.Data = []byte(`{`) }, []string{"data: must be a JSON value"}},
		{"data over the limit is refused", func(in *domain.EntryInput) { in.Data = []byte(`"` + strings.Repeat("x", 99) + `"`) }, []string{"data: is larger than the limit of 100 bytes"}},
		{"a bare number as expiresIn is refused", func(in *domain.EntryInput) { in.ExpiresIn = strp("10") }, []string{durationProblem("10")}},
		{"every problem is listed, in field order", func(in *domain.EntryInput) {
			*in = domain.EntryInput{Key: "", Type: "", AssigneeID: "x", Data: []byte("nope"), ExpiresIn: strp("0s")}
		}, []string{"key: must be a non-empty string", "type: must be a non-empty string",
			"assignee.id: must be a UUID", "data: must be a JSON value", durationProblem("0s")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := good
			tc.change(&in)
			_, err := in.Validate(100)
			got := problemsOf(t, err)
			if !sameProblems(got, tc.want) {
				t.Errorf("problems %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEntryInputValidateNormalisesTheAssignee(t *testing.T) {
	t.Parallel()
	in, err := domain.EntryInput{Key: "k", Type: "t", AssigneeID: someone, Data: []byte(`1`)}.Validate(0)
	if err != nil {
		t.Fatal(err)
	}
	if in.AssigneeID != strings.ToLower(someone) {
		t.Errorf("assignee %q, want it in lower case", in.AssigneeID)
	}
	// 0 is no data limit.
	if _, err := (domain.EntryInput{Key: "k", Type: "t", AssigneeID: someone,
		Data: []byte(`"` + strings.Repeat("x", domain.DefaultMaxDataBytes) + `"`)}).Validate(0); err != nil {
		t.Errorf("no limit refused data: %v", err)
	}
}

func TestEntryInputApply(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 123456789, time.UTC)
	data := []byte(`"v"`)
	in := domain.EntryInput{Key: "k", Type: "t", AssigneeID: "a", Data: data, ExpiresIn: strp("1h")}
	var e domain.Entry
	in.Apply(&e, now, 5*time.Minute)
	data[1] = 'X'
	if e.Key != "k" || e.Type != "t" || e.AssigneeID != "a" || string(e.Data) != `"v"` || !e.DateUpdated.Equal(now) {
		t.Errorf("applied %+v", e)
	}
	if want := domain.Normalize(now.Add(time.Hour)); e.ExpiresAt == nil || !e.ExpiresAt.Equal(want) {
		t.Errorf("expires %v, want %v", e.ExpiresAt, want)
	}
	in.ExpiresIn = nil
	in.Apply(&e, now, 5*time.Minute)
	if want := domain.Normalize(now.Add(5 * time.Minute)); e.ExpiresAt == nil || !e.ExpiresAt.Equal(want) {
		t.Errorf("default expiry %v, want %v", e.ExpiresAt, want)
	}
	in.Apply(&e, now, 0)
	if e.ExpiresAt != nil {
		t.Errorf("no default and no expiresIn expires at %v", e.ExpiresAt)
	}
}

func TestEntryPatchValidateChecksOnlyWhatItChanges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		p    domain.EntryPatch
		want []string
	}{
		{"an empty patch passes", domain.EntryPatch{}, nil},
		{"expiresIn null (the default) passes", domain.EntryPatch{ExpiresInSet: true}, nil},
		{"an empty key is refused", domain.EntryPatch{Key: strp("")}, []string{"key: must be a non-empty string"}},
		{"a long type is refused", domain.EntryPatch{Type: strp(strings.Repeat("t", 256))}, []string{"type: must be at most 255 characters"}},
		{"a bad assignee is refused", domain.EntryPatch{AssigneeID: strp("x")}, []string{"assignee.id: must be a UUID"}},
		{"data that is not JSON is refused", domain.EntryPatch{Data: []byte(`[`)}, []string{"data: must be a JSON value"}},
		{"data over the limit is refused", domain.EntryPatch{Data: []byte(`"` + strings.Repeat("x", 10) + `"`)}, []string{"data: is larger than the limit of 10 bytes"}},
		{"problems come in field order", domain.EntryPatch{Data: []byte(`[`), Key: strp("")},
			[]string{"key: must be a non-empty string", "data: must be a JSON value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := tc.p.Validate(10)
			if got := problemsOf(t, err); !sameProblems(got, tc.want) {
				t.Errorf("problems %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("a bad expiresIn is refused with ParseDuration's message", func(t *testing.T) {
		t.Parallel()
		_, perr := domain.ParseDuration("-1h")
		_, err := domain.EntryPatch{ExpiresInSet: true, ExpiresIn: strp("-1h")}.Validate(0)
		if got, want := problemsOf(t, err), []string{"expiresIn: " + perr.Error()}; !sameProblems(got, want) {
			t.Errorf("problems %q, want %q", got, want)
		}
	})
	t.Run("the assignee comes back in lower case, the caller's copy untouched", func(t *testing.T) {
		t.Parallel()
		a := someone
		p, err := domain.EntryPatch{AssigneeID: &a}.Validate(0)
		if err != nil || *p.AssigneeID != strings.ToLower(someone) || a != someone {
			t.Errorf("assignee %q (caller's %q), %v", *p.AssigneeID, a, err)
		}
	})
}

func TestEntryPatchApplyChangesOnlyWhatItNames(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	exp := now.Add(time.Hour)
	base := domain.Entry{Key: "k", Type: "t", AssigneeID: "a", Data: []byte(`1`), ExpiresAt: &exp}
	e := base
	domain.EntryPatch{Type: strp("t2")}.Apply(&e, now, 0)
	if e.Key != "k" || e.Type != "t2" || e.AssigneeID != "a" || string(e.Data) != `1` || e.ExpiresAt != &exp || !e.DateUpdated.Equal(now) {
		t.Errorf("after a type patch: %+v", e)
	}
	domain.EntryPatch{ExpiresInSet: true}.Apply(&e, now, 0)
	if e.ExpiresAt != nil {
		t.Errorf("expiresIn null without a default keeps expiry %v", e.ExpiresAt)
	}
}

func TestNaturalKeyAndIDRules(t *testing.T) {
	t.Parallel()
	k, err := domain.NaturalKey{Key: "k", Type: "t", AssigneeID: someone}.Validate()
	if err != nil || k.AssigneeID != strings.ToLower(someone) {
		t.Errorf("good natural key: %+v %v", k, err)
	}
	_, err = domain.NaturalKey{Key: "", Type: strings.Repeat("t", 256), AssigneeID: "x"}.Validate()
	want := []string{"key: must be a non-empty string", "type: must be at most 255 characters", "assignee.id: must be a UUID"}
	if got := problemsOf(t, err); !sameProblems(got, want) {
		t.Errorf("bad natural key: %q, want %q", got, want)
	}
	if a, err := domain.ParseAssigneeID(someone); err != nil || a != strings.ToLower(someone) {
		t.Errorf("ParseAssigneeID: %q %v", a, err)
	}
	if _, err := domain.ParseAssigneeID(someone[1:]); !sameProblems(problemsOf(t, err), []string{"assignee.id: must be a UUID"}) {
		t.Errorf("ParseAssigneeID of a short id: %v", err)
	}
	if id, err := domain.ParseEntryID(someone); err != nil || id != strings.ToLower(someone) {
		t.Errorf("ParseEntryID: %q %v", id, err)
	}
	if _, err := domain.ParseEntryID("01"); !sameProblems(problemsOf(t, err), []string{"id: must be a UUID"}) {
		t.Errorf("ParseEntryID of a short id: %v", err)
	}
}

func TestEntryValidateHoldsAStoredEntryToTheRules(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	good := domain.Entry{ID: someone, Key: "k", Type: "t", AssigneeID: someone, Data: []byte(`"v"`),
		Version: 1, DateCreated: now, DateUpdated: now}
	for _, tc := range []struct {
		name   string
		change func(*domain.Entry)
		want   []string
	}{
		{"a good entry passes", func(*domain.Entry) {}, nil},
		{"data of any size passes without a limit", func(e *domain.Entry) {
			e.Data = []byte(`"` + strings.Repeat("x", domain.DefaultMaxDataBytes) + `"`)
		}, nil},
		{"an id that is not a UUID is refused", func(e *domain.Entry) { e.ID = "1" }, []string{"id: must be a UUID"}},
		{"a long key is refused", func(e *domain.Entry) { e.Key = strings.Repeat("k", 256) }, []string{"key: must be at most 255 characters"}},
		{"an empty type is refused", func(e *domain.Entry) { e.Type = "" }, []string{"type: must be a non-empty string"}},
		{"a bad assignee is refused", func(e *domain.Entry) { e.AssigneeID = "x" }, []string{"assignee.id: must be a UUID"}},
		{"data that is not JSON is refused", func(e *domain.Entry) { e.Data = []byte(`x`) }, []string{"data: must be a JSON value"}},
		{"version 0 is refused", func(e *domain.Entry) { e.Version = 0 }, []string{"version: must be at least 1"}},
		{"missing dates are refused", func(e *domain.Entry) { e.DateCreated, e.DateUpdated = time.Time{}, time.Time{} },
			[]string{"dateCreated: is required", "dateUpdated: is required"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := good
			tc.change(&e)
			got, err := e.Validate(0)
			if p := problemsOf(t, err); !sameProblems(p, tc.want) {
				t.Errorf("problems %q, want %q", p, tc.want)
			}
			if err == nil && (got.ID != strings.ToLower(someone) || got.AssigneeID != strings.ToLower(someone)) {
				t.Errorf("ids not in lower case: %q %q", got.ID, got.AssigneeID)
			}
		})
	}
}
