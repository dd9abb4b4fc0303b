package ginhttp

import (
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/domain"
)

// Entries are written by hand: the shape is fixed, data is already JSON
// and is copied verbatim, and encoding is on every read's hot path. The
// output is what encoding/json would produce for the entry DTO, except that
// '<', '>' and '&' are not escaped (nothing here is embedded in HTML).

// appendEntry appends e as the entry JSON of docs/api.md, "Cache entries".
func appendEntry(b []byte, e *domain.Entry) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, e.ID)
	b = append(b, `,"dateCreated":`...)
	b = appendTime(b, e.DateCreated)
	b = append(b, `,"dateUpdated":`...)
	b = appendTime(b, e.DateUpdated)
	b = append(b, `,"dateDeleted":`...)
	b = appendTimePtr(b, e.DateDeleted)
	b = append(b, `,"version":`...)
	b = strconv.AppendInt(b, int64(e.Version), 10)
	b = append(b, `,"key":`...)
	b = appendString(b, e.Key)
	b = append(b, `,"type":`...)
	b = appendString(b, e.Type)
	b = append(b, `,"data":`...)
	if len(e.Data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, e.Data...)
	}
	b = append(b, `,"assignee":{"id":`...)
	b = appendString(b, e.AssigneeID)
	b = append(b, `},"expirationDate":`...)
	b = appendTimePtr(b, e.ExpiresAt)
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

func appendTimePtr(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	return appendTime(b, *t)
}

// appendTime appends t as a quoted RFC 3339 UTC time with exactly three
// fractional digits ("2026-11-25T10:00:00.123Z"); finer precision is
// truncated, not rounded, so a time never moves into the next second.
func appendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		b = append(b, '"')
		b = t.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
		return append(b, '"')
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / int(time.Millisecond)
	b = append(b, '"')
	b = append4(b, year)
	b = append(b, '-')
	b = append2(b, int(month))
	b = append(b, '-')
	b = append2(b, day)
	b = append(b, 'T')
	b = append2(b, hour)
	b = append(b, ':')
	b = append2(b, minute)
	b = append(b, ':')
	b = append2(b, sec)
	b = append(b, '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z', '"')
	return b
}

func append2(b []byte, v int) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }

func append4(b []byte, v int) []byte {
	return append(b, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Control characters, '"' and
// '\\' are escaped, and so are U+2028 and U+2029 (as encoding/json does, so
// the output is also valid JavaScript); invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// bufPool recycles response buffers; a buffer that grew past maxPooled is
// dropped so one huge list does not pin its memory.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxPooled = 64 << 10

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > maxPooled {
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}

// etag returns the strong entity tag of a version: "<version>".
func etag(version int) string {
	var a [24]byte
	b := append(a[:0], '"')
	b = strconv.AppendInt(b, int64(version), 10)
	return string(append(b, '"'))
}

// writeEntry answers one entry with its ETag.
func writeEntry(c *gin.Context, status int, e *domain.Entry) {
	c.Writer.Header()["Etag"] = []string{etag(e.Version)}
	bp := getBuf()
	*bp = appendEntry(*bp, e)
	writeJSON(c, status, *bp)
	putBuf(bp)
}
