package domain_test

import (
	"strings"
	"testing"

	"github.com/cachegate/cachegate/domain"
)

// The audit fields take the comparisons their stores translate to SQL,
// with values in the form the stores compare (docs/admin.md, "Audit
// trail").
func TestAuditFieldsConditions(t *testing.T) {
	t.Parallel()
	ok := []struct {
		field domain.QueryField
		op    domain.QueryOp
		vals  []string
		want  string
	}{
		{domain.FieldUsername, domain.OpEq, []string{" Ann "}, "ann"},
		{domain.FieldUsername, domain.OpIn, []string{strings.Repeat("é", 100)}, strings.Repeat("é", domain.MaxAuditUsernameLen)},
		{domain.FieldType, domain.OpNotIn, []string{"logout"}, "logout"},
		{domain.FieldAddress, domain.OpNe, []string{"10.0.0.1"}, "10.0.0.1"},
		{domain.FieldTime, domain.OpBetween, []string{"2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"}, ""},
		{domain.FieldTime, domain.OpGt, []string{"2026-01-01T00:00:00+01:00"}, ""},
	}
	for _, tc := range ok {
		c, err := domain.AuditFields.Condition("filter", tc.field, tc.op, false, tc.vals)
		if err != nil || c.Values[0].Text != tc.want {
			t.Errorf("%s %s %q = %+v, %v; want the text %q", tc.field, tc.op, tc.vals, c, err, tc.want)
		}
	}
	bad := []struct {
		field domain.QueryField
		op    domain.QueryOp
		fold  bool
		vals  []string
	}{
		{domain.FieldType, domain.OpEq, false, []string{"nope"}},
		{domain.FieldAddress, domain.OpEq, false, []string{"10.0.0.1\x00"}},
		{domain.FieldAddress, domain.OpEq, false, []string{"\xff"}},
		{domain.FieldAddress, domain.OpEq, false, []string{strings.Repeat("a", 1025)}},
		{domain.FieldAddress, domain.OpStarts, false, []string{"10."}},
		{domain.FieldAddress, domain.OpGt, false, []string{"10."}},
		{domain.FieldUsername, domain.OpEq, true, []string{"ann"}},
		{domain.FieldAddress, domain.OpIsNull, false, nil},
		{domain.FieldTime, domain.OpNotNull, false, nil},
		{domain.FieldTime, domain.OpEq, false, []string{"0001-01-01T00:00:00+23:59"}},
		{domain.FieldID, domain.OpEq, false, []string{"0190a000-0000-7000-8000-0000000000a1"}},
	}
	for _, tc := range bad {
		if c, err := domain.AuditFields.Condition("filter", tc.field, tc.op, tc.fold, tc.vals); err == nil {
			t.Errorf("%s %s (fold %v) %q = %+v; want an error", tc.field, tc.op, tc.fold, tc.vals, c)
		}
	}
	if _, err := domain.AuditFields.Field("sort", "dateCreated"); err == nil {
		t.Error("dateCreated is an audit field")
	}
}
