package admin

import (
	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/domain"
)

// listEntries is GET /admin/cache/<assignment>: the cache list of every
// assignee, the same query language and answer as GET /cache/<a>, run
// as the trusted system actor (no owner restriction) once the admin
// check passed.
func (r *routes) listEntries(c *gin.Context) { r.cache.ListAs(c, domain.System()) }
