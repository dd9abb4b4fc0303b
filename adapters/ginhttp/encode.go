package ginhttp

import (
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/domain"
)

// appendEntry appends e as the entry JSON of docs/api.md, "Cache entries"
// (entryMembers).
func appendEntry(b []byte, e *domain.Entry) []byte { return appendEntryFields(b, e, 0) }

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
