package application

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cachegate/cachegate/domain"
)

// CachePatch holds the fields a PATCH changes; nil fields stay.
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

func (p CachePatch) validate(maxData int) error {
	var problems []domain.FieldError
	add := func(fe *domain.FieldError) {
		if fe != nil {
			problems = append(problems, *fe)
		}
	}
	if p.Key != nil {
		add(domain.ValidateKey("key", *p.Key))
	}
	if p.Type != nil {
		add(domain.ValidateKey("type", *p.Type))
	}
	if p.AssigneeID != nil {
		add(domain.ValidateAssigneeID("assignee.id", *p.AssigneeID))
	}
	if p.Data != nil {
		add(domain.ValidateData("data", p.Data, maxData))
	}
	if p.ExpiresIn != nil {
		if _, err := domain.ParseDuration(*p.ExpiresIn); err != nil {
			problems = append(problems, domain.FieldError{Field: "expiresIn", Message: err.Error()})
		}
	}
	return domain.Invalid(problems...)
}

// Execute applies the patch and increments the version. It returns
// domain.ErrCacheNotFound when no visible live entry has the id,
// domain.ErrVersionMismatch for a stale Pre.IfMatch, domain.ErrForbidden
// when an owner-policy caller moves the entry to another assignee,
// domain.ErrCacheEntityAlreadyExists when the new natural key is taken, and
// domain.ErrCacheQuotaExceeded when the change would take the (new)
// assignee past its quota.
func (uc *PatchCache) Execute(ctx context.Context, in PatchCacheInput) (domain.Entry, error) {
	ctx, span := uc.deps.Tracer.Start(ctx, "PatchCache")
	e, err := uc.execute(ctx, in)
	span.End(err)
	return e, err
}

// execute is Execute inside its span.
func (uc *PatchCache) execute(ctx context.Context, in PatchCacheInput) (domain.Entry, error) {
	st, now, err := uc.deps.open(in.Assignment, in.Actor)
	if err != nil {
		return domain.Entry{}, err
	}
	p := in.Patch
	if err := p.validate(uc.deps.maxData()); err != nil {
		return domain.Entry{}, err
	}
	if p.AssigneeID != nil {
		a := strings.ToLower(*p.AssigneeID)
		p.AssigneeID = &a
		if err := mayAssign(in.Actor, st, a); err != nil {
			return domain.Entry{}, err
		}
	}
	id, ok := normalizeID(in.ID)
	if !ok {
		return domain.Entry{}, domain.ErrCacheNotFound
	}
	e, err := st.Repo.Update(ctx, id, now, st.Quota, func(cur *domain.Entry) error {
		if !canSee(in.Actor, st, *cur) {
			return errInvisible
		}
		if err := in.Pre.check(*cur); err != nil {
			return err
		}
		if p.Key != nil {
			cur.Key = *p.Key
		}
		if p.Type != nil {
			cur.Type = *p.Type
		}
		if p.AssigneeID != nil {
			cur.AssigneeID = *p.AssigneeID
		}
		if p.Data != nil {
			cur.Data = append([]byte(nil), p.Data...)
		}
		if p.ExpiresInSet {
			cur.ExpiresAt = expiry(st, p.ExpiresIn, now)
		}
		cur.DateUpdated = now
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
