package ginhttp

import (
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// toCacheInput converts a POST or PUT body into the use-case input. Every
// member but expiresIn is required; a missing expiresIn is null, the
// configured default (CONTRACT.md section 6: Rockets' settings storage
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

// listQuery is the list endpoint's query, parsed.
type listQuery struct {
	in    application.ListCachesInput
	paged bool
	// empty is set when two filters contradict each other: the answer is
	// empty whatever is stored.
	empty bool
	page  int
}

// filterFields are the fields of the simple and the CRUD filter forms.
var filterFields = map[string]bool{"key": true, "type": true, "assignee.id": true}

var sortFields = map[string]ports.SortField{
	"dateCreated": ports.SortDateCreated,
	"dateUpdated": ports.SortDateUpdated,
	"key":         ports.SortKey,
	"type":        ports.SortType,
}

// maxOffset bounds offsets (and page*limit) far beyond any real table, so
// arithmetic on them cannot overflow.
const maxOffset = 1 << 30

// toListInput converts the list endpoint's query string.
//
// Filters: key=, type= and assignee.id=, and the CRUD form
// filter=<field>||$eq||<value> (repeatable). Giving one field two different
// values matches nothing. sort=<field>[,ASC|DESC] (direction defaults to
// ASC, case-insensitive) with field dateCreated, dateUpdated, key or type.
// limit is 1..maxLimit (default defLimit; 1000 and 100 unless configured). page (from 1) or offset (from 0), not
// both, ask for the paged answer. The parameter cache (the CRUD modules'
// cache buster) is accepted and ignored; any other parameter is a 400, so a
// typo never silently widens a query.
func toListInput(rawQuery string, defLimit, maxLimit int) (listQuery, error) {
	var (
		q    listQuery
		errs problems
	)
	values, err := url.ParseQuery(rawQuery)
	if err != nil {
		return q, domain.InvalidField("query", "is not a valid URL query string")
	}
	filters := map[string]string{}
	setFilter := func(field, v string) {
		if !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
			errs.add(field, "must be valid UTF-8 without NUL characters")
			return
		}
		if old, ok := filters[field]; ok && old != v {
			q.empty = true
		}
		filters[field] = v
	}
	var offset, page, limit *int
	for _, name := range slices.Sorted(maps.Keys(values)) {
		vs := values[name]
		switch name {
		case "key", "type", "assignee.id":
			for _, v := range vs {
				setFilter(name, v)
			}
		case "filter":
			for _, v := range vs {
				field, rest, ok1 := strings.Cut(v, "||")
				op, val, ok2 := strings.Cut(rest, "||")
				switch {
				case !ok1 || !ok2:
					errs.add("filter", "must be <field>||$eq||<value>")
				case !filterFields[field]:
					errs.add("filter", "cannot filter on "+strconv.Quote(clip(field))+"; use key, type or assignee.id")
				case op != "$eq":
					errs.add("filter", "operator "+strconv.Quote(clip(op))+" is not supported; use $eq")
				default:
					setFilter(field, val)
				}
			}
		case "sort":
			if len(vs) > 1 {
				errs.add("sort", "may be given once")
				continue
			}
			field, dir, _ := strings.Cut(vs[0], ",")
			sf, ok := sortFields[field]
			if !ok {
				errs.add("sort", "cannot sort by "+strconv.Quote(clip(field))+"; use dateCreated, dateUpdated, key or type")
				continue
			}
			q.in.Sort = sf
			switch {
			case dir == "" || strings.EqualFold(dir, "ASC"):
			case strings.EqualFold(dir, "DESC"):
				q.in.Desc = true
			default:
				errs.add("sort", "direction must be ASC or DESC")
			}
		case "limit":
			limit = intParam(&errs, name, vs, 1, maxLimit)
		case "offset":
			offset = intParam(&errs, name, vs, 0, maxOffset)
		case "page":
			page = intParam(&errs, name, vs, 1, maxOffset)
		case "cache":
		default:
			errs.add(clip(name), "is not a known query parameter")
		}
	}
	if offset != nil && page != nil {
		errs.add("page", "cannot be combined with offset")
	}
	if len(errs) > 0 {
		return listQuery{}, domain.Invalid(errs...)
	}
	q.in.Key, q.in.Type, q.in.AssigneeID = filters["key"], filters["type"], filters["assignee.id"]
	q.in.Limit = defLimit
	if limit != nil {
		q.in.Limit = *limit
	}
	switch {
	case page != nil:
		if (*page-1)*q.in.Limit > maxOffset {
			return listQuery{}, domain.InvalidField("page", "is too large")
		}
		q.paged, q.in.Offset = true, (*page-1)*q.in.Limit
	case offset != nil:
		q.paged, q.in.Offset = true, *offset
	}
	q.in.CountTotal = q.paged
	q.page = q.in.Offset/q.in.Limit + 1
	return q, nil
}

// intParam parses a single integer parameter within [lo, hi].
func intParam(errs *problems, name string, vs []string, lo, hi int) *int {
	msg := "must be an integer from " + strconv.Itoa(lo) + " to " + strconv.Itoa(hi)
	if len(vs) != 1 {
		errs.add(name, "may be given once")
		return nil
	}
	n, err := strconv.Atoi(vs[0])
	if err != nil || n < lo || n > hi {
		errs.add(name, msg)
		return nil
	}
	return &n
}

// toPage converts a list result into the paged DTO.
func toPage(q listQuery, out application.ListCachesOutput) pageDTO {
	limit := q.in.Limit
	return pageDTO{Entries: out.Entries, Total: out.Total, Page: q.page,
		PageCount: (out.Total + limit - 1) / limit}
}
