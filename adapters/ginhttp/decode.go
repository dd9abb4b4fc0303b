package ginhttp

import "github.com/cachegate/cachegate/adapters/ginhttp/internal/web"

// cacheBody is the DTO of the POST, PUT and PATCH bodies; its tags are
// the members' names, its field types how each is read (web.Table), and
// every field records its presence so that PATCH can tell absent from
// null.
type cacheBody struct {
	Key       web.String   `json:"key"`
	Type      web.String   `json:"type"`
	Data      web.Raw      `json:"data"` // raw JSON exactly as sent
	Assignee  assigneeBody `json:"assignee"`
	ExpiresIn web.Duration `json:"expiresIn"`
}

// assigneeBody is the assignee member of a cache body.
type assigneeBody struct {
	web.Object
	ID web.String `json:"id"`
}

// cacheBodyTable is cacheBody's table, built once.
var cacheBodyTable = web.NewTable[cacheBody]()

// decodeCacheBody decodes a cache body strictly (web.Table): UTF-8,
// exactly one JSON object; members key, type (strings), data (any JSON
// value but null), assignee (an object with the string member id) and
// expiresIn (a string or null). The returned Data aliases b.
func decodeCacheBody(b []byte) (cacheBody, error) {
	return cacheBodyTable.Decode(b)
}
