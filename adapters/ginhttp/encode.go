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

// Answer answers one entry with its ETag, or returns err (admin.Cache
// too).
func (r *cacheRoutes) Answer(c *gin.Context, status int, e domain.Entry, err error) error {
	if err == nil {
		writeEntry(c, status, &e)
	}
	return err
}

// writeEntry answers one entry with its ETag.
func writeEntry(c *gin.Context, status int, e *domain.Entry) {
	var a [24]byte
	bp := web.GetBuf()
	*bp = appendEntry(*bp, e)
	web.WriteJSONWithETag(c, status, appendETag(a[:0], e.Version), *bp)
	web.PutBuf(bp)
}
