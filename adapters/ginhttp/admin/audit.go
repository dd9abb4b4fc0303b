package admin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// auditEventDTO is an audit event as the admin API shows it.
type auditEventDTO struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	Time      jsonTime  `json:"time"`
	UserID    string    `json:"userId"`
	Username  string    `json:"username"`
	Address   string    `json:"address"`
	RequestID string    `json:"requestId"`
	Count     int       `json:"count"`
	LastSeen  jsonTime  `json:"lastSeen"`
	Family    string    `json:"family,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Actor     *actorDTO `json:"actor,omitempty"`
	Detail    string    `json:"detail,omitempty"`
}

type actorDTO struct {
	ID       string `json:"id"`
	Username string `json:"username"`
}

func toAuditEventDTO(e domain.AuditEvent) auditEventDTO {
	d := auditEventDTO{ID: e.ID, Type: string(e.Type), Time: jsonTime(e.Time), UserID: e.UserID, Username: e.Username,
		Address: e.Address, RequestID: e.RequestID, Count: e.Attempts(), LastSeen: jsonTime(e.LastSeen),
		Family: e.Family, Reason: e.Reason, Detail: e.Detail}
	if e.ActorID != "" {
		d.Actor = &actorDTO{ID: e.ActorID, Username: e.ActorUsername}
	}
	return d
}

// encodeAuditCursor makes the opaque cursor of the next page:
// base64url("<unix microseconds>.<event id>").
func encodeAuditCursor(c ports.AuditCursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.Time.UnixMicro(), 10) + "." + c.ID))
}

func decodeAuditCursor(s string) (ports.AuditCursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) > 100 {
		return ports.AuditCursor{}, false
	}
	us, id, ok := strings.Cut(string(b), ".")
	n, err := strconv.ParseInt(us, 10, 64)
	if !ok || err != nil || id == "" || !domain.IsUUID(id) {
		return ports.AuditCursor{}, false
	}
	return ports.AuditCursor{Time: time.UnixMicro(n).UTC(), ID: id}, true
}

// auditConditions are GET /admin/audit's filtering parameters
// (docs/admin.md, "Audit trail"), each one condition of the list query
// language on domain.AuditFields.
var auditConditions = map[string]struct {
	field domain.QueryField
	op    domain.QueryOp
}{
	"type":    {domain.FieldType, domain.OpEq},
	"user":    {domain.FieldUsername, domain.OpEq},
	"address": {domain.FieldAddress, domain.OpEq},
	"since":   {domain.FieldTime, domain.OpGte},
	"until":   {domain.FieldTime, domain.OpLt},
}

// parseAuditQuery reads GET /admin/audit's parameters, each at most
// once: the conditions of auditConditions, ANDed (an empty user or
// address is none), limit and before.
func parseAuditQuery(raw string) (application.AuditPageInput, error) {
	var in application.AuditPageInput
	values, err := queryValues(raw)
	if err != nil {
		return in, err
	}
	var (
		errs  web.Problems
		conds []domain.Filter
	)
	for name, vs := range values {
		if len(vs) != 1 {
			errs.Add(web.Clip(name), "may be given once")
			continue
		}
		v := vs[0]
		if p, ok := auditConditions[name]; ok {
			if v == "" && (name == "user" || name == "address") {
				continue
			}
			c, err := domain.AuditFields.Condition(name, p.field, p.op, false, []string{v})
			if err != nil {
				errs.AddErr(err)
				continue
			}
			conds = append(conds, domain.Where(c))
			continue
		}
		switch name {
		case "limit":
			if p := web.IntParam(&errs, name, v, 1, application.MaxAuditPage); p != nil {
				in.Limit = *p
			}
		case "before":
			c, ok := decodeAuditCursor(v)
			if !ok {
				errs.Add("before", "is not a cursor this server gave")
				continue
			}
			in.Before = c
		default:
			errs.Add(web.Clip(name), "is not a parameter of the audit trail")
		}
	}
	if len(errs) > 0 {
		return in, domain.Invalid(errs...)
	}
	in.Filter = domain.AllOf(conds...)
	return in, nil
}

func (r *routes) auditPage(c *gin.Context) error {
	in, err := parseAuditQuery(c.Request.URL.RawQuery)
	if err != nil {
		return err
	}
	events, next, err := r.o.Audit.Page(c.Request.Context(), in)
	if err != nil {
		return err
	}
	data := make([]auditEventDTO, len(events))
	for i, e := range events {
		data[i] = toAuditEventDTO(e)
	}
	var cursor *string
	if next != nil {
		s := encodeAuditCursor(*next)
		cursor = &s
	}
	return writeAdminJSON(c, http.StatusOK, struct {
		Data []auditEventDTO `json:"data"`
		Next *string         `json:"next"`
	}{data, cursor})
}

// auditEvents streams the audit trail as Server-Sent Events, framed as
// the change feed's (docs/admin.md, "Audit trail"). Admin streams are
// few, so it runs in its handler and reads the trail every AuditPoll,
// instead of taking the connection over as the change feed's streams do.
func (r *routes) auditEvents(c *gin.Context) error {
	if len(c.Request.URL.Query()) > 0 {
		return domain.InvalidField("query", "the audit stream takes no parameters")
	}
	held, ok := r.s.Caps.Stream(c)
	if !ok {
		return nil
	}
	defer held.Release()
	ctx := c.Request.Context()
	watch, err := r.o.Audit.Watch(ctx)
	if err != nil {
		return err
	}
	p := web.Actor(c).Principal
	h := c.Writer.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	c.Status(http.StatusOK)
	rc := http.NewResponseController(c.Writer)
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(r.s.Stream.WriteTimeout))
		if _, err := c.Writer.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write([]byte("retry: " + strconv.FormatInt(r.s.Stream.Retry.Milliseconds(), 10) + "\n: stream open\n\n")) {
		return nil
	}
	poll := r.o.AuditPoll
	if poll <= 0 {
		poll = 500 * time.Millisecond
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	lastWrite := time.Now()
	end := func(reason string) {
		write(append(web.AppendString([]byte("event: end\ndata: {\"reason\":"), reason), "}\n\n"...))
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.s.Shutdown.Done():
			end("shutdown")
			return nil
		case <-tick.C:
		}
		now := time.Now()
		if reason := r.auditStreamEnded(ctx, p, now); reason != "" {
			end(reason)
			return nil
		}
		events, err := watch.Next(ctx)
		if err != nil {
			if ctx.Err() == nil {
				r.s.Log.WarnContext(ctx, "audit stream: read the trail", "err", err)
			}
			continue // the next tick tries again; the stream stays open
		}
		for _, e := range events {
			b, _ := json.Marshal(toAuditEventDTO(e))
			msg := append([]byte("id: "+e.ID+"\nevent: audit\ndata: "), b...)
			if !write(append(msg, "\n\n"...)) {
				return nil
			}
			lastWrite = now
		}
		if now.Sub(lastWrite) >= r.s.Stream.Heartbeat {
			if !write(web.Heartbeat) {
				return nil
			}
			lastWrite = now
		}
	}
}

// auditStreamEnded says why an audit stream must end now, or "".
func (r *routes) auditStreamEnded(ctx context.Context, p domain.Principal, now time.Time) string {
	if !p.ExpiresAt.IsZero() && !now.Before(p.ExpiresAt) {
		return "token expired"
	}
	if f := r.s.Stream.Recheck; f != nil && f(ctx, p, now) != nil {
		return "session ended"
	}
	if ok, err := r.o.Check.IsAdmin(ctx, p.ID); err == nil && !ok {
		return "not an admin"
	}
	return ""
}
