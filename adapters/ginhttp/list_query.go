package ginhttp

import (
	"encoding/json"
	"io"
	"maps"
	"math"
	"math/big"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// The lists' query string (docs/api.md, "Listing: the query language") is
// parsed here into the core's query value (domain.Filter,
// domain.SortKey); what a condition means lives in domain, every
// translation in the stores.

// listQuery is the list endpoint's query, parsed.
type listQuery struct {
	in    application.ListCachesInput
	paged bool
	page  int
	// fields is the set of entry members to write; zero writes all.
	fields entryFields
}

// maxOffset bounds offset and page far beyond any real table, so
// arithmetic on them cannot overflow.
const maxOffset = 1 << 30

// pageOffset is the offset of page (from 1) of limit entries. Any page
// the document admits is answered: a page past the end of the list is an
// empty page with the true total, however far past, never a 400
// (README.md, "Listing: the CRUD query language"). (page-1)*limit is at
// most 2^40, which a 64-bit int holds; where int has 32 bits it is
// clamped to the largest int, still past any table.
func pageOffset(page, limit int) int {
	off := int64(page-1) * int64(limit)
	if off > math.MaxInt {
		return math.MaxInt
	}
	return int(off)
}

// maxQueryBytes bounds the raw query string of a list.
const maxQueryBytes = 4 << 10

// ParseListQuery parses the query string of GET /cache/<assignment> into
// the use case's input (without assignment and actor), as the route does;
// embedders and tests may use it to build the same queries. defLimit is
// the page size of a paged list without limit, maxLimit the largest
// limit and the size of a bare list without one. Refusals are
// domain.KindInvalid errors naming the parameter.
func ParseListQuery(rawQuery string, defLimit, maxLimit int) (application.ListCachesInput, error) {
	q, err := toListInput(rawQuery, defLimit, maxLimit)
	return q.in, err
}

// toListInput converts the list endpoint's query string (docs/api.md,
// "Listing: the query language"): s replaces filter and or (which are
// still checked); page or offset ask for the paged answer, whose default
// limit is defLimit, a bare list's maxLimit; any unknown parameter is a
// 400, so a typo never silently widens a query.
func toListInput(rawQuery string, defLimit, maxLimit int) (listQuery, error) {
	var (
		q    listQuery
		errs web.Problems
	)
	if len(rawQuery) > maxQueryBytes {
		return q, domain.InvalidField("query", "is longer than 4 KiB")
	}
	params, err := splitQuery(rawQuery)
	if err != nil {
		return q, err
	}
	var (
		filters, ors, exact []domain.Filter
		search              *domain.Filter
		offset, page, limit *int
	)
	for _, p := range params {
		name := arrayBase(p.name)
		if name != p.name && !arrayForms[name] {
			errs.Add(web.Clip(p.name), "is not a known query parameter")
			continue
		}
		switch name {
		case "key", "type", "assignee.id":
			f, _ := domain.EntryFields.Field(name, name)
			c, err := domain.NewCondition(name, f, domain.OpEq, false, []string{p.value})
			if err != nil {
				errs.AddErr(err)
				continue
			}
			exact = append(exact, domain.Where(c))
		case "filter", "or":
			c, err := web.ParseCondition(domain.EntryFields, name, p.value)
			if err != nil {
				errs.AddErr(err)
				continue
			}
			if name == "filter" {
				filters = append(filters, domain.Where(c))
			} else {
				ors = append(ors, domain.Where(c))
			}
		case "s":
			if search != nil {
				errs.Add("s", "may be given once")
				continue
			}
			f, err := parseSearch(p.value)
			if err != nil {
				errs.AddErr(err)
				continue
			}
			search = &f
		case "sort":
			k, err := web.ParseSort(domain.EntryFields, p.value)
			if err != nil {
				errs.AddErr(err)
				continue
			}
			q.in.Sort = append(q.in.Sort, k)
		case "fields", "select":
			fs, err := parseFields(name, p.value)
			if err != nil {
				errs.AddErr(err)
				continue
			}
			q.fields |= fs | fieldID
		case "limit", "per_page":
			if limit != nil {
				errs.Add(name, "may be given once (limit and per_page are the same)")
				continue
			}
			limit = web.IntParam(&errs, name, p.value, 1, maxLimit)
		case "offset":
			offset = onceInt(&errs, offset, name, p.value, 0, maxOffset)
		case "page":
			page = onceInt(&errs, page, name, p.value, 1, maxOffset)
		case "cache":
		case "join":
			errs.Add("join", "is not supported: cache entries have no relations")
		default:
			errs.Add(web.Clip(name), "is not a known query parameter")
		}
	}
	if offset != nil && page != nil {
		errs.Add("page", "cannot be combined with offset")
	}
	if len(errs) > 0 {
		return listQuery{}, domain.Invalid(errs...)
	}
	f := web.Combine(filters, ors)
	if search != nil {
		f = *search
	}
	if len(exact) > 0 {
		if !f.IsAll() {
			exact = append(exact, f)
		}
		f = domain.AllOf(exact...)
	}
	if err := domain.ValidateFilter("query", f); err != nil {
		return listQuery{}, err
	}
	q.in.Filter = f
	q.in.Limit = maxLimit
	if page != nil || offset != nil {
		q.in.Limit = defLimit
	}
	if limit != nil {
		q.in.Limit = *limit
	}
	switch {
	case page != nil:
		q.paged, q.in.Offset = true, pageOffset(*page, q.in.Limit)
	case offset != nil:
		q.paged, q.in.Offset = true, *offset
	}
	q.in.CountTotal = q.paged
	q.page = q.in.Offset/q.in.Limit + 1
	return q, nil
}

// arrayForms are the parameters that may be written name[] or name[N].
var arrayForms = map[string]bool{"filter": true, "or": true, "sort": true, "fields": true, "select": true, "join": true}

// arrayBase returns name without a trailing "[]" or "[N]".
func arrayBase(name string) string {
	i := strings.IndexByte(name, '[')
	if i < 0 || !strings.HasSuffix(name, "]") {
		return name
	}
	if idx := name[i+1 : len(name)-1]; len(idx) > 6 || strings.Trim(idx, "0123456789") != "" {
		return name
	}
	return name[:i]
}

type queryParam struct{ name, value string }

// splitQuery splits a raw query into its parameters in order (the order
// of sort keys matters), decoding each name and value.
func splitQuery(raw string) ([]queryParam, error) {
	var out []queryParam
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		name, err1 := url.QueryUnescape(k)
		value, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil || strings.Contains(k, ";") {
			return nil, domain.InvalidField("query", "is not a valid URL query string")
		}
		if !utf8.ValidString(name) || !utf8.ValidString(value) {
			return nil, domain.InvalidField("query", "must be valid UTF-8")
		}
		out = append(out, queryParam{name, value})
	}
	return out, nil
}

// parseSearch parses the s parameter: a JSON object whose members are
// ANDed, each "$and" or "$or" with a non-empty array of such objects, or a
// field with a value ($eq; null is $isnull) or an object of operators
// (docs/api.md, "Listing: the query language").
func parseSearch(s string) (domain.Filter, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return domain.Filter{}, domain.InvalidField("s", "is not valid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return domain.Filter{}, domain.InvalidField("s", "is not valid JSON")
	}
	return searchObject(v, 1)
}

// errSearchTooDeep refuses an s nested beyond domain.MaxQueryDepth.
var errSearchTooDeep = domain.InvalidField("s", "nests too deep; at most "+strconv.Itoa(domain.MaxQueryDepth)+" levels")

func searchObject(v any, depth int) (domain.Filter, error) {
	if depth > domain.MaxQueryDepth {
		return domain.Filter{}, errSearchTooDeep
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return domain.Filter{}, domain.InvalidField("s", "must be a JSON object")
	}
	var all []domain.Filter
	// Sorted so that errors and the tree do not depend on map order.
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		val := obj[name]
		switch name {
		case "$and", "$or":
			arr, ok := val.([]any)
			if !ok || len(arr) == 0 {
				return domain.Filter{}, domain.InvalidField("s", name+" must be a non-empty array of objects")
			}
			subs := make([]domain.Filter, len(arr))
			for i, x := range arr {
				f, err := searchObject(x, depth+1)
				if err != nil {
					return domain.Filter{}, err
				}
				subs[i] = f
			}
			if name == "$and" {
				all = append(all, domain.AllOf(subs...))
			} else {
				all = append(all, domain.AnyOf(subs...))
			}
		default:
			field, err := domain.EntryFields.Field("s", name)
			if err != nil {
				return domain.Filter{}, err
			}
			f, err := searchField(field, val, depth)
			if err != nil {
				return domain.Filter{}, err
			}
			all = append(all, f)
		}
	}
	if len(all) == 1 {
		return all[0], nil
	}
	return domain.AllOf(all...), nil
}

// searchField converts one field's value in s.
func searchField(field domain.QueryField, val any, depth int) (domain.Filter, error) {
	where := "s"
	ops, ok := val.(map[string]any)
	if !ok {
		if val == nil {
			c, err := domain.NewCondition(where, field, domain.OpIsNull, false, nil)
			return domain.Where(c), err
		}
		raw, err := searchScalar(where, field, val)
		if err != nil {
			return domain.Filter{}, err
		}
		c, err := domain.NewCondition(where, field, domain.OpEq, false, []string{raw})
		return domain.Where(c), err
	}
	if len(ops) == 0 {
		return domain.Filter{}, domain.InvalidField(where, "names no operator")
	}
	if depth+1 > domain.MaxQueryDepth {
		return domain.Filter{}, errSearchTooDeep
	}
	var subs []domain.Filter
	for _, opName := range slices.Sorted(maps.Keys(ops)) {
		arg := ops[opName]
		if opName == "$or" || opName == "$and" {
			f, err := searchField(field, arg, depth+1)
			if err != nil {
				return domain.Filter{}, err
			}
			if _, isObj := arg.(map[string]any); !isObj {
				return domain.Filter{}, domain.InvalidField(where, opName+" must be an object of operators")
			}
			if opName == "$or" && f.Kind == domain.FilterAll {
				f.Kind = domain.FilterAny
			}
			subs = append(subs, f)
			continue
		}
		op, fold, err := domain.ParseQueryOp(where, opName)
		if err != nil {
			return domain.Filter{}, err
		}
		var raw []string
		switch op {
		case domain.OpIsNull, domain.OpNotNull:
		case domain.OpIn, domain.OpNotIn, domain.OpBetween:
			arr, ok := arg.([]any)
			if !ok {
				return domain.Filter{}, domain.InvalidField(where, op.String()+" takes an array")
			}
			for _, x := range arr {
				s, err := searchScalar(where, field, x)
				if err != nil {
					return domain.Filter{}, err
				}
				raw = append(raw, s)
			}
		default:
			s, err := searchScalar(where, field, arg)
			if err != nil {
				return domain.Filter{}, err
			}
			raw = []string{s}
		}
		c, err := domain.NewCondition(where, field, op, fold, raw)
		if err != nil {
			return domain.Filter{}, err
		}
		subs = append(subs, domain.Where(c))
	}
	if len(subs) == 1 {
		return subs[0], nil
	}
	return domain.AllOf(subs...), nil
}

// searchScalar returns a JSON value of s as the text NewCondition parses:
// a string, or for version a number.
func searchScalar(where string, field domain.QueryField, v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case json.Number:
		if field.Kind() == domain.KindInteger {
			return integralNumber(v), nil
		}
	}
	want := "a string"
	if field.Kind() == domain.KindInteger {
		want = "an integer"
	}
	return "", domain.InvalidField(where, "value must be "+want)
}

// integralNumber writes a JSON number that is an integer in plain digits
// ("1.0", "1e3" and "-0.5e1" are 1, 1000 and -5), as JSON Schema's
// "integer" admits them (README.md, "Listing: the CRUD query language");
// any other number is returned as written, for NewCondition to refuse.
func integralNumber(n json.Number) string {
	s := n.String()
	if strings.IndexAny(s, ".eE") < 0 || len(s) > 64 {
		return s
	}
	// An exponent beyond ±100 cannot give a 64-bit integer from at most
	// 64 digits, and big.Rat would build 10^exponent: refuse it unread.
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		if e, err := strconv.Atoi(s[i+1:]); err != nil || e > 100 || e < -100 {
			return s
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || !r.IsInt() {
		return s
	}
	return r.Num().String()
}

// onceInt is web.IntParam for a parameter that may be given once.
func onceInt(errs *web.Problems, prev *int, name, v string, lo, hi int) *int {
	if prev != nil {
		errs.Add(name, "may be given once")
		return prev
	}
	return web.IntParam(errs, name, v, lo, hi)
}
