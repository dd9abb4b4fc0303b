package admin

import (
	"net/url"
	"strings"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// Paging of the admin API's user and session lists (docs/admin.md).
const (
	defaultAdminPage = 100
	maxAdminPage     = 1000
)

// listPage is the paging of an admin list, as the cache lists take it:
// limit (or per_page), page (from 1) or offset (from 0); the last value
// of a parameter given twice counts.
type listPage struct {
	limit, page int
	offset      *int
}

func newListPage() listPage { return listPage{limit: defaultAdminPage, page: 1} }

// param reads the paging parameter name; false when name is none.
func (p *listPage) param(errs *web.Problems, name string, vs []string) bool {
	switch name {
	case "limit", "per_page":
		if n := web.IntParam(errs, name, vs[len(vs)-1], 1, maxAdminPage); n != nil {
			p.limit = *n
		}
	case "page":
		if n := web.IntParam(errs, name, vs[len(vs)-1], 1, 1<<20); n != nil {
			p.page = *n
		}
	case "offset":
		p.offset = web.IntParam(errs, name, vs[len(vs)-1], 0, 1<<30)
	default:
		return false
	}
	return true
}

// resolve returns the rows to skip and the page's number: offset wins
// over page.
func (p listPage) resolve() (offset, page int) {
	if p.offset != nil {
		return *p.offset, *p.offset/p.limit + 1
	}
	return (p.page - 1) * p.limit, p.page
}

// adminPage is a page of an admin list: data, its count, the total the
// list holds, the page's number and how many pages there are.
type adminPage[T any] struct {
	Data      []T `json:"data"`
	Count     int `json:"count"`
	Total     int `json:"total"`
	Page      int `json:"page"`
	PageCount int `json:"pageCount"`
}

func newAdminPage[T any](data []T, total, page, limit int) adminPage[T] {
	return adminPage[T]{Data: data, Count: len(data), Total: total, Page: page, PageCount: (total + limit - 1) / limit}
}

// queryValues parses raw, an admin list's query string of at most 4096
// bytes.
func queryValues(raw string) (url.Values, error) {
	if len(raw) > 4096 {
		return nil, domain.InvalidField("query", "is longer than 4096 bytes")
	}
	values, err := url.ParseQuery(raw)
	if err != nil || strings.ContainsRune(raw, 0) {
		return nil, domain.InvalidField("query", "is not a valid query string")
	}
	return values, nil
}

// parseSessionPage reads the paging of a session list, its only
// parameters.
func parseSessionPage(raw string) (application.SessionPage, listPage, error) {
	values, err := queryValues(raw)
	if err != nil {
		return application.SessionPage{}, listPage{}, err
	}
	var errs web.Problems
	lp := newListPage()
	for name, vs := range values {
		if !lp.param(&errs, name, vs) {
			errs.Add(web.Clip(name), "is not a parameter of the session list")
		}
	}
	if len(errs) > 0 {
		return application.SessionPage{}, listPage{}, domain.Invalid(errs...)
	}
	offset, page := lp.resolve()
	lp.page = page
	return application.SessionPage{Limit: lp.limit, Offset: offset}, lp, nil
}
