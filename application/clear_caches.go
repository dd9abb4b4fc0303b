package application

import (
	"context"
	"fmt"

	"github.com/cachegate/cachegate/domain"
)

// ClearCachesInput names the assignee whose entries to delete.
type ClearCachesInput struct {
	Assignment string
	Actor      domain.Actor
	AssigneeID string
}

// ClearCaches deletes every entry of one assignee (docs/api.md, "The Go API": Clear).
type ClearCaches struct{ deps CacheConfig }

// Execute deletes the assignee's live entries and returns how many.
func (uc *ClearCaches) Execute(ctx context.Context, in ClearCachesInput) (int, error) {
	return traced(ctx, uc.deps.Tracer, "ClearCaches", uc, in, (*ClearCaches).execute)
}

func (uc *ClearCaches) execute(ctx context.Context, in ClearCachesInput) (int, error) {
	st, repo, now, err := uc.deps.open(in.Assignment, in.Actor)
	if err != nil {
		return 0, err
	}
	a, err := domain.ParseAssigneeID(in.AssigneeID)
	if err != nil {
		return 0, err
	}
	if err := mayAssign(in.Actor, st, a); err != nil {
		return 0, err
	}
	n, err := repo.DeleteByAssignee(ctx, a, now)
	if err != nil {
		return 0, fmt.Errorf("clear cache entries: %w", err)
	}
	return n, nil
}
