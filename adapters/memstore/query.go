package memstore

import (
	"cmp"
	"strings"

	"github.com/cachegate/cachegate/domain"
)

// The list query language is evaluated by domain.Filter.Match, the
// answers the SQL stores give; this file gives it an entry's values.

// matches reports whether e satisfies f.
func matches(f domain.Filter, e *domain.Entry) bool { return f.Match(entryValues(e)) }

// entryValues returns e's values of the query fields: none for a NULL
// expirationDate.
func entryValues(e *domain.Entry) domain.FieldValues {
	return func(field domain.QueryField) (domain.QueryValue, bool) {
		switch field {
		case domain.FieldID:
			return domain.QueryValue{Text: e.ID}, true
		case domain.FieldKey:
			return domain.QueryValue{Text: e.Key}, true
		case domain.FieldType:
			return domain.QueryValue{Text: e.Type}, true
		case domain.FieldAssigneeID:
			return domain.QueryValue{Text: e.AssigneeID}, true
		case domain.FieldVersion:
			return domain.QueryValue{Int: int64(e.Version)}, true
		case domain.FieldDateCreated:
			return domain.QueryValue{Time: e.DateCreated}, true
		case domain.FieldDateUpdated:
			return domain.QueryValue{Time: e.DateUpdated}, true
		case domain.FieldExpirationDate:
			if e.ExpiresAt != nil {
				return domain.QueryValue{Time: *e.ExpiresAt}, true
			}
		}
		return domain.QueryValue{}, false
	}
}

// compareBy orders a and b by keys, then by id ascending. A missing
// expirationDate sorts after every date.
func compareBy(keys []domain.SortKey, a, b *domain.Entry) int {
	return cmp.Or(domain.CompareBy(keys, entryValues(a), entryValues(b)), strings.Compare(a.ID, b.ID))
}

// defaultSort is the order of a list that names none.
var defaultSort = []domain.SortKey{{Field: domain.FieldDateCreated}}
