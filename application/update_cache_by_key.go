package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/cachegate/cachegate/domain"
)

// UpdateCacheByKeyInput asks to update the entry named by the natural key in
// Cache (docs/api.md, "The Go API": Update).
type UpdateCacheByKeyInput struct {
	Assignment string
	Actor      domain.Actor
	// Cache names the entry by key, type and assignee and carries the new
	// data; a nil ExpiresIn keeps the current expiry.
	Cache CacheInput
	Pre   Preconditions
}

// UpdateCacheByKey replaces the data (and optionally the expiry) of an entry
// found by its natural key.
type UpdateCacheByKey struct{ deps CacheConfig }

// Execute updates the entry and increments its version. It returns
// domain.ErrCacheNotFound when no visible live entry has the natural key and
// domain.ErrCacheQuotaExceeded when larger data would take the assignee
// past its quota.
func (uc *UpdateCacheByKey) Execute(ctx context.Context, in UpdateCacheByKeyInput) (domain.Entry, error) {
	return traced(ctx, uc.deps.Tracer, "UpdateCacheByKey", uc, in, (*UpdateCacheByKey).execute)
}

func (uc *UpdateCacheByKey) execute(ctx context.Context, in UpdateCacheByKeyInput) (domain.Entry, error) {
	st, repo, now, err := uc.deps.open(in.Assignment, in.Actor)
	if err != nil {
		return domain.Entry{}, err
	}
	c, err := in.Cache.validate(uc.deps.maxData())
	if err != nil {
		return domain.Entry{}, err
	}
	ref := CacheRef{Key: c.Key, Type: c.Type, AssigneeID: c.AssigneeID}
	cur, err := uc.deps.byRef(ctx, st, repo, in.Actor, ref, now)
	if err != nil {
		return domain.Entry{}, err
	}
	e, err := repo.Update(ctx, cur.ID, now, st.Quota, func(e *domain.Entry) error {
		if e.NaturalKey() != cur.NaturalKey() {
			// Renamed by a concurrent PATCH: the entry we were asked
			// about is gone.
			return domain.ErrCacheNotFound
		}
		if err := in.Pre.check(*e); err != nil {
			return err
		}
		e.Data = append([]byte(nil), c.Data...)
		if c.ExpiresIn != nil {
			e.ExpiresAt = domain.ExpiryAt(c.ExpiresIn, st.DefaultExpiresIn, now)
		}
		e.DateUpdated = now
		return nil
	})
	if err != nil && !errors.Is(err, domain.ErrCacheNotFound) {
		return domain.Entry{}, fmt.Errorf("update cache entry: %w", err)
	}
	return e, err
}
