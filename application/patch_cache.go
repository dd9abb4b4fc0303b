package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/cachegate/cachegate/domain"
)

// CachePatch holds the fields a PATCH changes; nil fields stay. It mirrors
// domain.EntryPatch, which checks it.
type CachePatch struct {
	Key        *string
	Type       *string
	AssigneeID *string
	Data       []byte
	// ExpiresInSet says expiresIn was given; ExpiresIn nil then asks for
	// the store's default expiry, computed from now.
	ExpiresInSet bool
	ExpiresIn    *string
}

// PatchCacheInput asks to change some fields of the entry with ID.
type PatchCacheInput struct {
	Assignment string
	Actor      domain.Actor
	ID         string
	Patch      CachePatch
	Pre        Preconditions
}

// PatchCache updates part of an entry.
type PatchCache struct{ deps CacheConfig }

// Execute applies the patch and increments the version. It returns
// domain.ErrCacheNotFound when no visible live entry has the id,
// domain.ErrVersionMismatch for a stale Pre.IfMatch, domain.ErrForbidden
// when an owner-policy caller moves the entry to another assignee,
// domain.ErrCacheEntityAlreadyExists when the new natural key is taken, and
// domain.ErrCacheQuotaExceeded when the change would take the (new)
// assignee past its quota.
func (uc *PatchCache) Execute(ctx context.Context, in PatchCacheInput) (domain.Entry, error) {
	return traced(ctx, uc.deps.Tracer, "PatchCache", uc, in, (*PatchCache).execute)
}

func (uc *PatchCache) execute(ctx context.Context, in PatchCacheInput) (domain.Entry, error) {
	st, repo, now, err := uc.deps.open(in.Assignment, in.Actor)
	if err != nil {
		return domain.Entry{}, err
	}
	p, err := domain.EntryPatch(in.Patch).Validate(uc.deps.maxData())
	if err != nil {
		return domain.Entry{}, err
	}
	if p.AssigneeID != nil {
		if err := mayAssign(in.Actor, st, *p.AssigneeID); err != nil {
			return domain.Entry{}, err
		}
	}
	id, ok := normalizeID(in.ID)
	if !ok {
		return domain.Entry{}, domain.ErrCacheNotFound
	}
	e, err := repo.Update(ctx, id, now, st.Quota, func(cur *domain.Entry) error {
		if err := mayChange(in.Actor, st, in.Pre, *cur); err != nil {
			return err
		}
		p.Apply(cur, now, st.DefaultExpiresIn)
		return nil
	})
	if errors.Is(err, errInvisible) {
		return domain.Entry{}, domain.ErrCacheNotFound
	}
	if err != nil {
		return domain.Entry{}, fmt.Errorf("patch cache entry: %w", err)
	}
	return e, nil
}
