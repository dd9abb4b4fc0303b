package ginhttp

import (
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/domain"
)

// Entries are written by hand: the shape is fixed, data is already JSON
// and is copied verbatim, and encoding is on every read's hot path. The
// output is what encoding/json would produce for the entry DTO, except that
// '<', '>' and '&' are not escaped (nothing here is embedded in HTML).

// appendEntry appends e as the entry JSON of docs/api.md, "Cache entries".
func appendEntry(b []byte, e *domain.Entry) []byte {
	b = append(b, `{"id":`...)
	b = web.AppendString(b, e.ID)
	b = append(b, `,"dateCreated":`...)
	b = web.AppendTime(b, e.DateCreated)
	b = append(b, `,"dateUpdated":`...)
	b = web.AppendTime(b, e.DateUpdated)
	b = append(b, `,"dateDeleted":`...)
	b = web.AppendTimePtr(b, e.DateDeleted)
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, int64(e.Version), 10)
	b = append(b, `,"key":`...)
	b = web.AppendString(b, e.Key)
	b = append(b, `,"type":`...)
	b = web.AppendString(b, e.Type)
	b = append(b, `,"data":`...)
	if len(e.Data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, e.Data...)
	}
	b = append(b, `,"assignee":{"id":`...)
	b = web.AppendString(b, e.AssigneeID)
	b = append(b, `},"expirationDate":`...)
	b = web.AppendTimePtr(b, e.ExpiresAt)
	return append(b, '}')
}

// appendEntries appends es as a JSON array.
func appendEntries(b []byte, es []domain.Entry) []byte {
	b = append(b, '[')
	for i := range es {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendEntry(b, &es[i])
	}
	return append(b, ']')
}

// pageDTO is the paged answer of a list: data, count = len(data), total,
// page and pageCount.
type pageDTO struct {
	Entries   []domain.Entry
	Total     int
	Page      int
	PageCount int
}

// appendPage appends p as {"data":[...],"count":n,"total":n,"page":n,"pageCount":n}.
func appendPage(b []byte, p pageDTO) []byte {
	b = append(b, `{"data":`...)
	b = appendEntries(b, p.Entries)
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, int64(len(p.Entries)), 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(p.Total), 10)
	b = append(b, `,"page":`...)
	b = strconv.AppendInt(b, int64(p.Page), 10)
	b = append(b, `,"pageCount":`...)
	b = strconv.AppendInt(b, int64(p.PageCount), 10)
	return append(b, '}')
}

// etag returns the strong entity tag of a version: "<version>".
func etag(version int) string {
	var a [24]byte
	return string(appendETag(a[:0], version))
}

// appendETag appends etag(version) to b.
func appendETag(b []byte, version int) []byte {
	b = append(b, '"')
	b = strconv.AppendInt(b, int64(version), 10)
	return append(b, '"')
}

// Answer answers one entry with its ETag, or err (admin.Cache too).
func (r *cacheRoutes) Answer(c *gin.Context, status int, e domain.Entry, err error) {
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	writeEntry(c, status, &e)
}

// writeEntry answers one entry with its ETag.
func writeEntry(c *gin.Context, status int, e *domain.Entry) {
	var a [24]byte
	bp := web.GetBuf()
	*bp = appendEntry(*bp, e)
	web.WriteJSONWithETag(c, status, appendETag(a[:0], e.Version), *bp)
	web.PutBuf(bp)
}
