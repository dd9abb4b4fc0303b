package ginhttp

import (
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/domain"
)

// entryFields is a set of an entry's JSON members, for fields= and
// select=: bit 1<<i is entryMembers[i].
type entryFields uint16

// fieldID is the id member, always returned.
const fieldID entryFields = 1

// entryMember is one JSON member of an entry and how its value is written.
type entryMember struct {
	name  string
	value func(b []byte, e *domain.Entry) []byte
}

// entryMembers are an entry's members in the order of the full entry
// (appendEntry).
var entryMembers = []entryMember{
	{"id", func(b []byte, e *domain.Entry) []byte { return web.AppendString(b, e.ID) }},
	{"dateCreated", func(b []byte, e *domain.Entry) []byte { return web.AppendTime(b, e.DateCreated) }},
	{"dateUpdated", func(b []byte, e *domain.Entry) []byte { return web.AppendTime(b, e.DateUpdated) }},
	{"dateDeleted", func(b []byte, e *domain.Entry) []byte { return web.AppendTimePtr(b, e.DateDeleted) }},
	{"version", func(b []byte, e *domain.Entry) []byte { return strconv.AppendInt(b, int64(e.Version), 10) }},
	{"key", func(b []byte, e *domain.Entry) []byte { return web.AppendString(b, e.Key) }},
	{"type", func(b []byte, e *domain.Entry) []byte { return web.AppendString(b, e.Type) }},
	{"data", func(b []byte, e *domain.Entry) []byte {
		if len(e.Data) == 0 {
			return append(b, "null"...)
		}
		return append(b, e.Data...)
	}},
	{"assignee", func(b []byte, e *domain.Entry) []byte {
		return append(web.AppendString(append(b, `{"id":`...), e.AssigneeID), '}')
	}},
	{"expirationDate", func(b []byte, e *domain.Entry) []byte { return web.AppendTimePtr(b, e.ExpiresAt) }},
}

// parseFields parses a comma-separated list of entry members;
// "assignee.id" is the assignee.
func parseFields(name, v string) (entryFields, error) {
	var fs entryFields
	for n := range strings.SplitSeq(v, ",") {
		member := n
		if n == "assignee.id" {
			member = "assignee"
		}
		i := slices.IndexFunc(entryMembers, func(m entryMember) bool { return m.name == member })
		if i < 0 {
			return 0, domain.InvalidField(name, "unknown field "+strconv.Quote(web.Clip(n))+
				"; use id, dateCreated, dateUpdated, dateDeleted, version, key, type, data, assignee or expirationDate")
		}
		fs |= 1 << i
	}
	return fs, nil
}

// appendEntryFields appends e with only the members in fs (all when fs is
// zero), in the order of the full entry.
func appendEntryFields(b []byte, e *domain.Entry, fs entryFields) []byte {
	if fs == 0 {
		return appendEntry(b, e)
	}
	sep := byte('{')
	for i, m := range entryMembers {
		if fs&(1<<i) != 0 {
			b = append(append(append(b, sep, '"'), m.name...), '"', ':')
			b = m.value(b, e)
			sep = ','
		}
	}
	return append(b, '}')
}

// listWriteTimeout bounds each write of a list to the client: a list
// waiting on its client holds no database connection (ARCHITECTURE.md,
// "Lists and the query language"), but still its goroutine, buffer and
// connection, which a client that stops reading has cut past this.
const listWriteTimeout = 30 * time.Second

// streamFlushBytes is how much a list response gathers before writing it
// to the connection.
const streamFlushBytes = 32 << 10

// listStream writes a list response as the entries arrive: the status
// and the opening are written with the first entry (or at the end), so an
// error found before any entry still gets its proper status; at most
// about one entry plus streamFlushBytes is held at a time.
type listStream struct {
	c       *gin.Context
	buf     *[]byte
	paged   bool
	fields  entryFields
	started bool
	n       int
	werr    error
}

// errClientWrite marks a failure to write to the client.
var errClientWrite = errors.New("writing the list response")

func (w *listStream) begin() {
	w.started = true
	h := w.c.Writer.Header()
	h["Content-Type"] = web.JSONContentType
	w.c.Writer.WriteHeader(http.StatusOK)
	if w.paged {
		*w.buf = append(*w.buf, `{"data":[`...)
	} else {
		*w.buf = append(*w.buf, '[')
	}
}

// entry writes one entry; it is the callback of the list use case.
func (w *listStream) entry(e domain.Entry) error {
	if !w.started {
		w.begin()
	}
	if w.n > 0 {
		*w.buf = append(*w.buf, ',')
	}
	*w.buf = appendEntryFields(*w.buf, &e, w.fields)
	w.n++
	if len(*w.buf) >= streamFlushBytes {
		w.flush()
	}
	return w.werr
}

func (w *listStream) flush() {
	if w.werr != nil || len(*w.buf) == 0 {
		return
	}
	rc := http.NewResponseController(w.c.Writer)
	// Not every writer supports deadlines (tests' recorders); then the
	// server's own timeouts are all there is.
	_ = rc.SetWriteDeadline(time.Now().Add(listWriteTimeout))
	if _, err := w.c.Writer.Write(*w.buf); err != nil {
		w.werr = errClientWrite
	}
	*w.buf = (*w.buf)[:0]
}

// finish closes the response; for a paged list it adds the counts.
func (w *listStream) finish(total, page, limit int) {
	if !w.started {
		w.begin()
	}
	defer func() { _ = http.NewResponseController(w.c.Writer).SetWriteDeadline(time.Time{}) }()
	*w.buf = append(*w.buf, ']')
	if w.paged {
		for _, m := range [...]struct {
			name string
			n    int
		}{{`,"count":`, w.n}, {`,"total":`, total}, {`,"page":`, page}, {`,"pageCount":`, (total + limit - 1) / limit}} {
			*w.buf = strconv.AppendInt(append(*w.buf, m.name...), int64(m.n), 10)
		}
		*w.buf = append(*w.buf, '}')
	}
	w.flush()
}

// failList ends a list that failed. Before the first entry the error is
// returned, to be answered as any other; after it, the status is gone, so
// the connection is aborted (the client sees a broken response, never a
// short list that looks whole) and the error is logged once, unless the
// client itself went away.
func (r *cacheRoutes) failList(w *listStream, err error) error {
	if !w.started {
		return err
	}
	if !errors.Is(err, errClientWrite) {
		r.s.log.LogAttrs(w.c.Request.Context(), slog.LevelError, "list failed while streaming",
			slog.String("request_id", requestID(w.c)), slog.Int("entries_written", w.n), slog.Any("error", err))
	}
	panic(http.ErrAbortHandler)
}
