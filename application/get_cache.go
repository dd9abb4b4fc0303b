package application

import (
	"context"

	"github.com/cachegate/cachegate/domain"
)

// GetCacheInput names one entry by id or, when ID is empty, by its
// natural key.
type GetCacheInput struct {
	Assignment string
	Actor      domain.Actor
	ID         string
	Ref        CacheRef
}

// GetCache reads one live entry.
type GetCache struct{ deps CacheConfig }

// Execute returns the entry, or domain.ErrCacheNotFound when it is missing,
// deleted, expired, malformed or invisible to the actor.
func (uc *GetCache) Execute(ctx context.Context, in GetCacheInput) (domain.Entry, error) {
	return traced(ctx, uc.deps.Tracer, "GetCache", uc, in, (*GetCache).execute)
}

func (uc *GetCache) execute(ctx context.Context, in GetCacheInput) (domain.Entry, error) {
	st, repo, now, err := uc.deps.open(in.Assignment, in.Actor)
	if err != nil {
		return domain.Entry{}, err
	}
	if in.ID != "" {
		return uc.deps.visible(ctx, st, repo, in.Actor, in.ID, now)
	}
	return uc.deps.byRef(ctx, st, repo, in.Actor, in.Ref, now)
}
