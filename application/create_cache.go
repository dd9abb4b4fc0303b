package application

import (
	"context"
	"fmt"

	"github.com/cachegate/cachegate/domain"
)

// CreateCacheInput asks to create one entry.
type CreateCacheInput struct {
	Assignment string
	Actor      domain.Actor
	Cache      CacheInput
	// ID, when set, is the new entry's id (PUT to an unused id); otherwise
	// one is generated.
	ID string
	// Idempotency, when set, makes a retry of this create answer the
	// first answer instead of writing again (README, "Idempotent
	// retries").
	Idempotency *IdempotencyKey
}

// CreateCache creates an entry, unique by (key, type, assignee).
type CreateCache struct{ deps CacheConfig }

// Execute creates the entry with version 1. It returns
// domain.ErrCacheEntityAlreadyExists when a live entry has the same natural
// key, domain.ErrForbidden when an owner-policy caller names another
// assignee, domain.ErrCacheQuotaExceeded when the assignee's quota in the
// assignment is used up, and a validation error for bad input. With
// in.Idempotency, a create whose key the caller already used in the
// assignment within IdempotencyLifetime writes nothing: it returns the
// entry as the first create made it when the request is the same, and
// domain.ErrIdempotencyKeyReused when it is not.
func (uc *CreateCache) Execute(ctx context.Context, in CreateCacheInput) (domain.Entry, error) {
	return traced(ctx, uc.deps.Tracer, "CreateCache", uc, in, (*CreateCache).execute)
}

func (uc *CreateCache) execute(ctx context.Context, in CreateCacheInput) (domain.Entry, error) {
	st, repo, now, err := uc.deps.open(in.Assignment, in.Actor)
	if err != nil {
		return domain.Entry{}, err
	}
	c, err := in.Cache.validate(uc.deps.maxData())
	if err != nil {
		return domain.Entry{}, err
	}
	if err := mayAssign(in.Actor, st, c.AssigneeID); err != nil {
		return domain.Entry{}, err
	}
	var idem IdempotencyKey
	if in.Idempotency != nil {
		if idem, err = in.Idempotency.check(in.Cache); err != nil {
			return domain.Entry{}, err
		}
		rec, ok, err := repo.IdempotencyRecord(ctx, idempotencyScope(st, in.Actor), idem.Key, now)
		if err != nil {
			return domain.Entry{}, fmt.Errorf("read the idempotency record: %w", err)
		}
		if ok {
			return replay(rec, idem)
		}
	}
	id := uc.deps.IDs.NewID()
	if in.ID != "" {
		if id, err = domain.ParseEntryID(in.ID); err != nil {
			return domain.Entry{}, err
		}
	}
	e := domain.Entry{ID: id, Version: 1, DateCreated: now}
	c.Apply(&e, now, st.DefaultExpiresIn)
	if in.Idempotency != nil {
		e, replayed, err := uc.createIdempotent(ctx, st, repo, in.Actor, idem, e, now)
		if err != nil {
			return domain.Entry{}, fmt.Errorf("create cache entry: %w", err)
		}
		if !replayed {
			uc.deps.Metrics.CacheEntryCreated(st.Name)
		}
		return e, nil
	}
	if err := repo.Create(ctx, e, now, st.Quota); err != nil {
		return domain.Entry{}, fmt.Errorf("create cache entry: %w", err)
	}
	uc.deps.Metrics.CacheEntryCreated(st.Name)
	return e, nil
}
