package admin

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/application"
)

// SetupPath is the route that spends the one-time set-up link on the
// first admin (docs/admin.md, "The first admin"); the console's set-up
// page (console.SetupPath) posts to it.
const SetupPath = "/auth/setup"

// SetupOptions mount POST /auth/setup.
type SetupOptions struct {
	Link *application.FirstAdmin
}

// setupBody is the DTO of POST /auth/setup (web.Table).
type setupBody struct {
	Token    web.String `json:"token"`
	Username web.String `json:"username"`
	Password web.String `json:"password"`
}

// setupBodyTable is setupBody's table, built once.
var setupBodyTable = web.NewTable[setupBody]()

type setupRoutes struct {
	host *web.Host
	o    SetupOptions
}

// MountSetup mounts POST /auth/setup.
func MountSetup(o SetupOptions, host *web.Host) error {
	if o.Link == nil {
		return errors.New("ginhttp: the set-up route needs the set-up link")
	}
	r := &setupRoutes{host: host, o: o}
	return host.Mount(web.Route{Method: http.MethodPost, Path: SetupPath, Access: web.Public, Handler: host.Handler(r.create),
		Pre: []gin.HandlerFunc{setNoStore}})
}

// create answers 201 with the new admin. The token travels in the body
// only: it is never in a URL, so never in a log line.
func (r *setupRoutes) create(c *gin.Context) error {
	dto, err := web.Decode(r.host, c, setupBodyTable)
	if err != nil {
		return err
	}
	u, err := r.o.Link.Create(c.Request.Context(), application.SetupInput{Token: dto.Token.Value,
		Username: dto.Username.Value, Password: dto.Password.Value, Local: fromThisMachine(c.Request)})
	if err != nil {
		return err
	}
	return writeAdminJSON(c, http.StatusCreated, toUserDTO(u))
}

// fromThisMachine reports whether r came from the server's own machine:
// its TCP peer (never a header) is a loopback address, and it carries no
// Forwarded or X-Forwarded-For header, since a proxy on the same machine
// makes every client's peer a loopback address.
func fromThisMachine(r *http.Request) bool {
	peer, ok := web.ParseHop(r.RemoteAddr)
	if !ok || !peer.IsLoopback() {
		return false
	}
	return len(r.Header.Values(web.HeaderForwardedFor)) == 0 && len(r.Header.Values("Forwarded")) == 0
}
