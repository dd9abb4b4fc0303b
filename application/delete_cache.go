package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/cachegate/cachegate/domain"
)

// DeleteCacheInput names the entry to delete by id or, when ID is empty,
// by its natural key.
type DeleteCacheInput struct {
	Assignment string
	Actor      domain.Actor
	ID         string
	Ref        CacheRef
	Pre        Preconditions
}

// DeleteCache marks an entry deleted: reads stop returning it at once and
// its natural key is free again; the sweeper removes the row later.
type DeleteCache struct{ deps CacheConfig }

// Execute deletes the entry and returns it as deleted. It returns
// domain.ErrCacheNotFound when no visible live entry matches and
// domain.ErrVersionMismatch for a stale Pre.IfMatch.
func (uc *DeleteCache) Execute(ctx context.Context, in DeleteCacheInput) (domain.Entry, error) {
	return traced(ctx, uc.deps.Tracer, "DeleteCache", uc, in, (*DeleteCache).execute)
}

func (uc *DeleteCache) execute(ctx context.Context, in DeleteCacheInput) (domain.Entry, error) {
	st, repo, now, err := uc.deps.open(in.Assignment, in.Actor)
	if err != nil {
		return domain.Entry{}, err
	}
	id := in.ID
	if id == "" {
		e, err := uc.deps.byRef(ctx, st, repo, in.Actor, in.Ref, now)
		if err != nil {
			return domain.Entry{}, err
		}
		id = e.ID
	}
	id, ok := normalizeID(id)
	if !ok {
		return domain.Entry{}, domain.ErrCacheNotFound
	}
	e, err := repo.Delete(ctx, id, now, func(cur domain.Entry) error { return mayChange(in.Actor, st, in.Pre, cur) })
	switch {
	case errors.Is(err, errInvisible):
		return domain.Entry{}, domain.ErrCacheNotFound
	case err != nil:
		return domain.Entry{}, fmt.Errorf("delete cache entry: %w", err)
	}
	return e, nil
}
