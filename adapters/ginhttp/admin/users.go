package admin

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// userDTO is a user as the admin API shows it: never its password hash.
type userDTO struct {
	ID          string   `json:"id"`
	Username    string   `json:"username"`
	Active      bool     `json:"active"`
	Admin       bool     `json:"admin"`
	DateCreated jsonTime `json:"dateCreated"`
	DateUpdated jsonTime `json:"dateUpdated"`
}

func toUserDTO(u domain.User) userDTO {
	return userDTO{ID: u.ID, Username: u.Username, Active: u.Active, Admin: u.Admin,
		DateCreated: jsonTime(u.DateCreated), DateUpdated: jsonTime(u.DateUpdated)}
}

// sessionDTO is a session (a refresh family).
type sessionDTO struct {
	ID          string   `json:"id"`
	UserID      string   `json:"userId"`
	DateCreated jsonTime `json:"dateCreated"`
	LastUsed    jsonTime `json:"lastUsed"`
	Address     string   `json:"address"`
	UserAgent   string   `json:"userAgent"`
	ExpiresAt   jsonTime `json:"expiresAt"`
	Current     *bool    `json:"current,omitempty"`
}

func toSessionDTO(s domain.Session) sessionDTO {
	return sessionDTO{ID: s.ID, UserID: s.UserID, DateCreated: jsonTime(s.DateCreated), LastUsed: jsonTime(s.LastUsed),
		Address: s.Address, UserAgent: s.UserAgent, ExpiresAt: jsonTime(s.ExpiresAt)}
}

// parseUserQuery parses the user list's query: filter and or (repeatable,
// <field>||<operator>||<value>, combined as the cache lists combine
// them), one sort (<field>[,ASC|DESC]), limit, page, offset; the grammar
// and the parser of the cache lists (web.ParseCondition, web.ParseSort)
// on the user fields.
func parseUserQuery(raw string) (q application.UserList, page int, err error) {
	values, err := queryValues(raw)
	if err != nil {
		return q, 0, err
	}
	var (
		errs         web.Problems
		filters, ors []domain.Filter
	)
	lp := newListPage()
	for name, vs := range values {
		switch name {
		case "filter", "filter[]", "or", "or[]":
			for _, v := range vs {
				c, err := web.ParseCondition(domain.UserFields, name, v)
				if err != nil {
					errs.AddErr(err)
					continue
				}
				if strings.HasPrefix(name, "or") {
					ors = append(ors, domain.Where(c))
				} else {
					filters = append(filters, domain.Where(c))
				}
			}
		case "sort", "sort[]":
			if len(vs) > 1 {
				errs.Add("sort", "sorts on one user field at most")
				continue
			}
			k, err := web.ParseSort(domain.UserFields, vs[0])
			if err != nil {
				errs.AddErr(err)
				continue
			}
			q.Sort = []domain.SortKey{k}
		default:
			if !lp.param(&errs, name, vs) {
				errs.Add(name, "is not a parameter of the user list")
			}
		}
	}
	if len(filters)+len(ors) > domain.MaxQueryConditions {
		errs.Add("filter", "has more than "+strconv.Itoa(domain.MaxQueryConditions)+" conditions")
	}
	if len(errs) > 0 {
		return q, 0, domain.Invalid(errs...)
	}
	q.Filter, q.Limit = web.Combine(filters, ors), lp.limit
	q.Offset, page = lp.resolve()
	return q, page, nil
}

func (r *routes) listUsers(c *gin.Context) error {
	q, page, err := parseUserQuery(c.Request.URL.RawQuery)
	if err != nil {
		return err
	}
	users, total, err := r.o.Users.List(c.Request.Context(), q)
	if err != nil {
		return err
	}
	data := make([]userDTO, len(users))
	for i, u := range users {
		data[i] = toUserDTO(u)
	}
	return writeAdminJSON(c, http.StatusOK, newAdminPage(data, total, page, q.Limit))
}

func (r *routes) addUser(c *gin.Context) error {
	body, err := web.Decode(r.s.Host, c, addUserTable)
	if err != nil {
		return err
	}
	if !body.Username.Given || !body.Password.Given {
		return domain.InvalidField("body", "needs username and password")
	}
	u, err := r.o.Users.Add(c.Request.Context(), web.Actor(c),
		application.AddUserInput{Username: body.Username.Value, Password: body.Password.Value, Active: true, Admin: body.Admin.Value})
	if err != nil {
		return err
	}
	c.Header("Location", "/admin/users/"+u.ID)
	return writeAdminJSON(c, http.StatusCreated, toUserDTO(u))
}

func (r *routes) getUser(c *gin.Context) error {
	u, err := r.o.Users.Get(c.Request.Context(), c.Param("id"))
	if err != nil {
		return err
	}
	return writeAdminJSON(c, http.StatusOK, toUserDTO(u))
}

func (r *routes) patchUser(c *gin.Context) error {
	body, err := web.Decode(r.s.Host, c, patchUserTable)
	if err != nil {
		return err
	}
	u, err := r.o.Users.Patch(c.Request.Context(), web.Actor(c), c.Param("id"),
		application.UserPatch{Active: body.Active.Ptr(), Admin: body.Admin.Ptr()})
	if err != nil {
		return err
	}
	return writeAdminJSON(c, http.StatusOK, toUserDTO(u))
}

func (r *routes) setPassword(c *gin.Context) error {
	body, err := web.Decode(r.s.Host, c, passwordTable)
	if err != nil {
		return err
	}
	if !body.Password.Given {
		return domain.InvalidField("password", "is required")
	}
	return done(c, r.o.Users.ResetPassword(c.Request.Context(), web.Actor(c), c.Param("id"), body.Password.Value))
}

func (r *routes) deleteUser(c *gin.Context) error {
	return done(c, r.o.Users.Delete(c.Request.Context(), web.Actor(c), c.Param("id")))
}

func (r *routes) userSessions(c *gin.Context) error {
	p, lp, err := parseSessionPage(c.Request.URL.RawQuery)
	if err != nil {
		return err
	}
	list, err := r.o.Users.Sessions(c.Request.Context(), c.Param("id"), p)
	if err != nil {
		return err
	}
	return writeSessions(c, list, lp, "")
}

// writeSessions writes a page of sessions; with current set, each is
// marked current or not.
func writeSessions(c *gin.Context, list application.SessionList, lp listPage, current string) error {
	data := make([]sessionDTO, len(list.Page))
	for i, s := range list.Page {
		data[i] = toSessionDTO(s)
		if current != "" {
			cur := s.ID == current
			data[i].Current = &cur
		}
	}
	return writeAdminJSON(c, http.StatusOK, newAdminPage(data, list.Total, lp.page, lp.limit))
}

// allSessionDTO is a session of GET /admin/sessions: a Session with its
// user's name ("" for a user deleted since).
type allSessionDTO struct {
	sessionDTO
	Username string `json:"username"`
}

// allSessions is GET /admin/sessions: every user's live sessions, the
// last used first, paged as the other session lists (docs/admin.md,
// "Sessions").
func (r *routes) allSessions(c *gin.Context) error {
	p, lp, err := parseSessionPage(c.Request.URL.RawQuery)
	if err != nil {
		return err
	}
	list, err := r.o.Users.AllSessions(c.Request.Context(), p)
	if err != nil {
		return err
	}
	data := make([]allSessionDTO, len(list.Page))
	for i, s := range list.Page {
		data[i] = allSessionDTO{sessionDTO: toSessionDTO(s.Session), Username: s.Username}
	}
	return writeAdminJSON(c, http.StatusOK, newAdminPage(data, list.Total, lp.page, lp.limit))
}

func (r *routes) revokeUserSessions(c *gin.Context) error {
	return done(c, r.o.Users.RevokeSessions(c.Request.Context(), web.Actor(c), c.Param("id")))
}

func (r *routes) revokeSession(c *gin.Context) error {
	return done(c, r.o.Users.RevokeSession(c.Request.Context(), web.Actor(c), c.Param("sid")))
}
