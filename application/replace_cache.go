package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/cachegate/cachegate/domain"
)

// ReplaceCacheInput asks to replace the entry with ID, or create it with
// that id when none exists (HTTP PUT).
type ReplaceCacheInput struct {
	Assignment string
	Actor      domain.Actor
	ID         string
	Cache      CacheInput
	Pre        Preconditions
}

// ReplaceCache is create-or-replace by id.
type ReplaceCache struct {
	deps   CacheConfig
	create *CreateCache
}

// Execute replaces every client field of the entry, moves dateUpdated,
// recomputes the expiry from now and increments the version; created
// reports that no entry had the id and one was created with it.
//
// With Pre.IfMatch it replaces only that version and returns
// domain.ErrVersionMismatch otherwise, also when no entry exists. With
// Pre.IfNoneMatchAny it only creates and returns domain.ErrEntryExists when
// the entry exists. A natural key taken by another live entry is
// domain.ErrCacheEntityAlreadyExists; a replacement or creation that would
// take the assignee past its quota is domain.ErrCacheQuotaExceeded.
func (uc *ReplaceCache) Execute(ctx context.Context, in ReplaceCacheInput) (e domain.Entry, created bool, err error) {
	r, err := traced(ctx, uc.deps.Tracer, "ReplaceCache", uc, in, (*ReplaceCache).execute)
	return r.entry, r.created, err
}

// replaced is Execute's two results as traced's one.
type replaced struct {
	entry   domain.Entry
	created bool
}

func (uc *ReplaceCache) execute(ctx context.Context, in ReplaceCacheInput) (replaced, error) {
	st, repo, now, err := uc.deps.open(in.Assignment, in.Actor)
	if err != nil {
		return replaced{}, err
	}
	c, err := in.Cache.validate(uc.deps.maxData())
	if err != nil {
		return replaced{}, err
	}
	if err := mayAssign(in.Actor, st, c.AssigneeID); err != nil {
		return replaced{}, err
	}
	id, ok := normalizeID(in.ID)
	if !ok {
		// docs/api.md ("Error codes"): a malformed id is an unknown id, 404; no entry can
		// be created with it.
		return replaced{}, domain.ErrCacheNotFound
	}
	createIn := CreateCacheInput{Assignment: in.Assignment, Actor: in.Actor, Cache: in.Cache, ID: id}
	if in.Pre.IfNoneMatchAny {
		e, err := uc.create.Execute(ctx, createIn)
		if errors.Is(err, domain.ErrCacheIDTaken) {
			return replaced{}, domain.ErrEntryExists
		}
		return replaced{e, err == nil}, err
	}
	// An entry created between our update and our create makes the create
	// fail with ErrCacheIDTaken; the next round replaces it instead.
	for range 3 {
		e, err := repo.Update(ctx, id, now, st.Quota, func(cur *domain.Entry) error {
			if err := mayChange(in.Actor, st, in.Pre, *cur); err != nil {
				return err
			}
			c.Apply(cur, now, st.DefaultExpiresIn)
			return nil
		})
		switch {
		case err == nil:
			return replaced{entry: e}, nil
		case errors.Is(err, errInvisible):
			return replaced{}, domain.ErrCacheNotFound
		case !errors.Is(err, domain.ErrCacheNotFound):
			return replaced{}, fmt.Errorf("replace cache entry: %w", err)
		case in.Pre.IfMatch != nil:
			return replaced{}, domain.ErrVersionMismatch
		}
		e, err = uc.create.Execute(ctx, createIn)
		if !errors.Is(err, domain.ErrCacheIDTaken) {
			return replaced{e, err == nil}, err
		}
	}
	return replaced{}, fmt.Errorf("replace cache entry %s: lost the race three times", id)
}
