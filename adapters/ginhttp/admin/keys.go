package admin

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/cachegate/cachegate/adapters/ginhttp/internal/web"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// keyDTO is a signing key as the admin API shows it: never a private
// half.
type keyDTO struct {
	Kid         string   `json:"kid"`
	Algorithm   string   `json:"algorithm"`
	State       string   `json:"state"`
	DateCreated jsonTime `json:"dateCreated"`
	SignsFrom   jsonTime `json:"signsFrom"`
	RetiredAt   jsonTime `json:"retiredAt"`
	RevokedAt   jsonTime `json:"revokedAt"`
}

func toKeyDTO(k domain.SigningKey, state string) keyDTO {
	return keyDTO{Kid: k.ID, Algorithm: k.Algorithm, State: state, DateCreated: jsonTime(k.DateCreated),
		SignsFrom: jsonTime(k.SignsFrom), RetiredAt: timePtr(k.RetiredAt), RevokedAt: timePtr(k.RevokedAt)}
}

func (r *routes) listKeys(c *gin.Context) error {
	keys, err := r.o.Keys.List(c.Request.Context())
	if err != nil {
		return err
	}
	data := make([]keyDTO, len(keys))
	for i, k := range keys {
		data[i] = toKeyDTO(k.SigningKey, k.State)
	}
	return writeAdminJSON(c, http.StatusOK, struct {
		Data []keyDTO `json:"data"`
	}{data})
}

func (r *routes) rotateKey(c *gin.Context) error {
	var body rotateBody
	// The body is optional: none rotates with the publish-ahead.
	if c.Request.ContentLength != 0 || len(c.Request.Header.Values("Content-Type")) > 0 {
		var err error
		if body, err = web.Decode(r.s.Host, c, rotateTable); err != nil {
			return err
		}
	}
	ctx := c.Request.Context()
	k, err := r.o.Keys.Rotate(ctx, web.Actor(c), application.RotateKeyInput{Now: body.Now.Value})
	if err != nil {
		return err
	}
	state := domain.KeyPublished
	if list, err := r.o.Keys.List(ctx); err == nil {
		for _, s := range list {
			if s.ID == k.ID {
				state = s.State
			}
		}
	}
	return writeAdminJSON(c, http.StatusCreated, toKeyDTO(k, state))
}

func (r *routes) revokeKey(c *gin.Context) error {
	return done(c, r.o.Keys.Revoke(c.Request.Context(), web.Actor(c), c.Param("kid")))
}
