package memstore

import "github.com/cachegate/cachegate/domain"

// entryValues returns e's values of the query fields, for domain.Filter.Match
// and domain.CompareBy: none for a NULL expirationDate.
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

// defaultSort is the order of a list that names none.
var defaultSort = []domain.SortKey{{Field: domain.FieldDateCreated}}
