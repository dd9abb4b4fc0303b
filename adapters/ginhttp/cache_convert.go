package ginhttp

import (
	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// cacheBody is the DTO of the POST, PUT and PATCH bodies; its tags are
// the members' names, its field types how each is read (web.Table), and
// every field records its presence so that PATCH can tell absent from
// null.
type cacheBody struct {
	Key       web.String   `json:"key"`
	Type      web.String   `json:"type"`
	Data      web.Raw      `json:"data"` // raw JSON exactly as sent
	Assignee  assigneeBody `json:"assignee"`
	ExpiresIn web.Duration `json:"expiresIn"`
}

// assigneeBody is the assignee member of a cache body.
type assigneeBody struct {
	web.Object
	ID web.String `json:"id"`
}

// cacheBodyTable is cacheBody's table, built once; the Data it decodes
// aliases the body.
var cacheBodyTable = web.NewTable[cacheBody]()

// toCacheInput converts a POST or PUT body into the use-case input. Every
// member but expiresIn is required; a missing expiresIn is null, the
// configured default (docs/api.md, "Coming from Rockets": Rockets' settings storage
// sends none). Whether the values are valid is the use case's business.
func toCacheInput(b cacheBody) (application.CacheInput, error) {
	var errs web.Problems
	if !b.Key.Given {
		errs.Add("key", "is required")
	}
	if !b.Type.Given {
		errs.Add("type", "is required")
	}
	if !b.Data.Given {
		errs.Add("data", "is required")
	}
	switch {
	case !b.Assignee.Given:
		errs.Add("assignee", "is required: an object with the assignee's id")
	case !b.Assignee.ID.Given:
		errs.Add("assignee.id", "is required")
	}
	if len(errs) > 0 {
		return application.CacheInput{}, domain.Invalid(errs...)
	}
	return application.CacheInput{Key: b.Key.Value, Type: b.Type.Value, AssigneeID: b.Assignee.ID.Value,
		Data: b.Data.Value, ExpiresIn: b.ExpiresIn.Value}, nil
}

// toCachePatch converts a PATCH body: every member is optional, and a
// present expiresIn (even null) is told apart from an absent one.
func toCachePatch(b cacheBody) (application.CachePatch, error) {
	var p application.CachePatch
	if b.Key.Given {
		p.Key = &b.Key.Value
	}
	if b.Type.Given {
		p.Type = &b.Type.Value
	}
	if b.Assignee.Given {
		if !b.Assignee.ID.Given {
			return p, domain.InvalidField("assignee.id", "is required when assignee is given")
		}
		p.AssigneeID = &b.Assignee.ID.Value
	}
	p.Data = b.Data.Value
	p.ExpiresInSet, p.ExpiresIn = b.ExpiresIn.Given, b.ExpiresIn.Value
	return p, nil
}
