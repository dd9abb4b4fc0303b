package ginhttp

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

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

const (
	defaultUserPage = 100
	maxUserPage     = 1000
)

// parseUserQuery parses the user list's query: filter and or (repeatable,
// <field>||<operator>||<value>), sort (<field>[,ASC|DESC]), limit, page,
// offset; the same grammar as the cache lists on the user fields.
func parseUserQuery(raw string) (q domain.UserQuery, page int, err error) {
	if len(raw) > 4096 {
		return q, 0, domain.InvalidField("query", "is longer than 4096 bytes")
	}
	values, perr := url.ParseQuery(raw)
	if perr != nil || strings.ContainsRune(raw, 0) {
		return q, 0, domain.InvalidField("query", "is not a valid query string")
	}
	var errs problems
	q.Limit, page = defaultUserPage, 1
	var offset *int
	for name, vs := range values {
		switch name {
		case "filter", "filter[]", "or", "or[]":
			for _, v := range vs {
				c, err := parseUserCondition(name, v)
				if err != nil {
					errs.addErr(err)
					continue
				}
				if strings.HasPrefix(name, "or") {
					q.Any = append(q.Any, c)
				} else {
					q.All = append(q.All, c)
				}
			}
		case "sort", "sort[]":
			if len(vs) > 1 {
				errs.add("sort", "sorts on one user field at most")
				continue
			}
			field, dir, _ := strings.Cut(vs[0], ",")
			if err := domain.ParseUserSort(field); err != nil {
				errs.addErr(err)
				continue
			}
			q.Sort = field
			switch {
			case dir == "" || strings.EqualFold(dir, "ASC"):
			case strings.EqualFold(dir, "DESC"):
				q.Desc = true
			default:
				errs.add("sort", "direction must be ASC or DESC")
			}
		case "limit", "per_page":
			if p := intParam(&errs, name, vs[len(vs)-1], 1, maxUserPage); p != nil {
				q.Limit = *p
			}
		case "page":
			if p := intParam(&errs, name, vs[len(vs)-1], 1, 1<<20); p != nil {
				page = *p
			}
		case "offset":
			offset = intParam(&errs, name, vs[len(vs)-1], 0, 1<<30)
		default:
			errs.add(name, "is not a parameter of the user list")
		}
	}
	if len(q.All)+len(q.Any) > domain.MaxQueryConditions {
		errs.add("filter", "has more than "+strconv.Itoa(domain.MaxQueryConditions)+" conditions")
	}
	if len(errs) > 0 {
		return q, 0, domain.Invalid(errs...)
	}
	q.Offset = (page - 1) * q.Limit
	if offset != nil {
		q.Offset, page = *offset, *offset/q.Limit+1
	}
	return q, page, nil
}

func parseUserCondition(where, s string) (domain.UserCondition, error) {
	field, rest, ok := strings.Cut(s, "||")
	if !ok {
		return domain.UserCondition{}, domain.InvalidField(where, strconv.Quote(clip(s))+" is not <field>||<operator>||<value>")
	}
	opName, value, hasValue := strings.Cut(rest, "||")
	op, fold, err := domain.ParseQueryOp(where, opName)
	if err != nil {
		return domain.UserCondition{}, err
	}
	var vals []string
	if hasValue {
		switch op {
		case domain.OpIn, domain.OpNotIn, domain.OpBetween:
			vals = strings.Split(value, ",")
		default:
			vals = []string{value}
		}
	}
	return domain.NewUserCondition(where, field, op, fold, vals)
}

func (r *adminRoutes) listUsers(c *gin.Context) {
	q, page, err := parseUserQuery(c.Request.URL.RawQuery)
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	users, total, err := r.o.Users.List(c.Request.Context(), q)
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	data := make([]userDTO, len(users))
	for i, u := range users {
		data[i] = toUserDTO(u)
	}
	writeAdminJSON(c, http.StatusOK, struct {
		Data      []userDTO `json:"data"`
		Count     int       `json:"count"`
		Total     int       `json:"total"`
		Page      int       `json:"page"`
		PageCount int       `json:"pageCount"`
	}{data, len(data), total, page, (total + q.Limit - 1) / q.Limit})
}

func (r *adminRoutes) addUser(c *gin.Context) {
	var body struct {
		Username *string `json:"username"`
		Password *string `json:"password"`
		Admin    bool    `json:"admin"`
	}
	if !r.decodeAdminBody(c, &body) {
		return
	}
	if body.Username == nil || body.Password == nil {
		r.s.writeError(c, domain.InvalidField("body", "needs username and password"))
		return
	}
	u, err := r.o.Users.Add(c.Request.Context(), actorFrom(c).Principal,
		application.AdminAddUserInput{Username: *body.Username, Password: *body.Password, Admin: body.Admin})
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	c.Header("Location", "/admin/users/"+u.ID)
	writeAdminJSON(c, http.StatusCreated, toUserDTO(u))
}

func (r *adminRoutes) getUser(c *gin.Context) {
	u, err := r.o.Users.Get(c.Request.Context(), c.Param("id"))
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	writeAdminJSON(c, http.StatusOK, toUserDTO(u))
}

func (r *adminRoutes) patchUser(c *gin.Context) {
	var body struct {
		Active *bool `json:"active"`
		Admin  *bool `json:"admin"`
	}
	if !r.decodeAdminBody(c, &body) {
		return
	}
	u, err := r.o.Users.Patch(c.Request.Context(), actorFrom(c).Principal, c.Param("id"),
		application.UserPatch{Active: body.Active, Admin: body.Admin})
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	writeAdminJSON(c, http.StatusOK, toUserDTO(u))
}

func (r *adminRoutes) setPassword(c *gin.Context) {
	var body struct {
		Password *string `json:"password"`
	}
	if !r.decodeAdminBody(c, &body) {
		return
	}
	if body.Password == nil {
		r.s.writeError(c, domain.InvalidField("password", "is required"))
		return
	}
	if err := r.o.Users.SetPassword(c.Request.Context(), actorFrom(c).Principal, c.Param("id"), *body.Password); err != nil {
		r.s.writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (r *adminRoutes) deleteUser(c *gin.Context) {
	if err := r.o.Users.Delete(c.Request.Context(), actorFrom(c).Principal, c.Param("id")); err != nil {
		r.s.writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (r *adminRoutes) userSessions(c *gin.Context) {
	list, err := r.o.Users.Sessions(c.Request.Context(), c.Param("id"))
	if err != nil {
		r.s.writeError(c, err)
		return
	}
	writeSessions(c, list, "")
}

func writeSessions(c *gin.Context, list []domain.Session, current string) {
	data := make([]sessionDTO, len(list))
	for i, s := range list {
		data[i] = toSessionDTO(s)
		if current != "" {
			cur := s.ID == current
			data[i].Current = &cur
		}
	}
	writeAdminJSON(c, http.StatusOK, struct {
		Data []sessionDTO `json:"data"`
	}{data})
}

func (r *adminRoutes) revokeUserSessions(c *gin.Context) {
	if err := r.o.Users.RevokeSessions(c.Request.Context(), actorFrom(c).Principal, c.Param("id")); err != nil {
		r.s.writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

func (r *adminRoutes) revokeSession(c *gin.Context) {
	if err := r.o.Users.RevokeSession(c.Request.Context(), actorFrom(c).Principal, c.Param("sid")); err != nil {
		r.s.writeError(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}
