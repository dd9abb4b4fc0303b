package ginhttp

import (
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// toCacheInput converts a POST or PUT body into the use-case input. Every
// member but expiresIn is required; a missing expiresIn is null, the
// configured default (docs/api.md, "Coming from Rockets": Rockets' settings storage
// sends none). Whether the values are valid is the use case's business.
func toCacheInput(b cacheBody) (application.CacheInput, error) {
	var errs problems
	if !b.HasKey {
		errs.add("key", "is required")
	}
	if !b.HasType {
		errs.add("type", "is required")
	}
	if !b.HasData {
		errs.add("data", "is required")
	}
	switch {
	case !b.HasAssignee:
		errs.add("assignee", "is required: an object with the assignee's id")
	case !b.HasAssigneeID:
		errs.add("assignee.id", "is required")
	}
	if len(errs) > 0 {
		return application.CacheInput{}, domain.Invalid(errs...)
	}
	return application.CacheInput{Key: b.Key, Type: b.Type, AssigneeID: b.AssigneeID,
		Data: b.Data, ExpiresIn: b.ExpiresIn}, nil
}

// toCachePatch converts a PATCH body: every member is optional, and a
// present expiresIn (even null) is told apart from an absent one.
func toCachePatch(b cacheBody) (application.CachePatch, error) {
	var p application.CachePatch
	if b.HasKey {
		p.Key = &b.Key
	}
	if b.HasType {
		p.Type = &b.Type
	}
	if b.HasAssignee {
		if !b.HasAssigneeID {
			return p, domain.InvalidField("assignee.id", "is required when assignee is given")
		}
		p.AssigneeID = &b.AssigneeID
	}
	p.Data = b.Data
	p.ExpiresInSet, p.ExpiresIn = b.HasExpiresIn, b.ExpiresIn
	return p, nil
}
