package application

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// CacheConfig is what every cache use case is built from.
type CacheConfig struct {
	Assignments *Assignments
	Clock       ports.Clock
	IDs         ports.IDGenerator
	// MaxDataBytes limits an entry's data; zero means
	// domain.DefaultMaxDataBytes.
	MaxDataBytes int
	Metrics      ports.Metrics // optional
	// ListDefault and ListMax are the default and largest page size of
	// lists; zero means DefaultListLimit and MaxListLimit.
	ListDefault int
	ListMax     int
	// Feed, when set, serves Watch (background.Feed implements it);
	// without it Watch answers ErrFeedUnavailable.
	Feed ChangeFeed
	// Tracer, when set, wraps each use case in a span.
	Tracer ports.Tracer
}

func (d *CacheConfig) validate() error {
	d.Metrics = metricsOrNop(d.Metrics)
	d.Tracer = cmp.Or[ports.Tracer](d.Tracer, ports.NopTracer{})
	d.ListMax = positive(d.ListMax, MaxListLimit)
	if d.ListDefault <= 0 || d.ListDefault > d.ListMax {
		d.ListDefault = min(DefaultListLimit, d.ListMax)
	}
	if d.Assignments == nil || d.Clock == nil || d.IDs == nil {
		return fmt.Errorf("cache use cases need stores, a clock and an id generator")
	}
	return nil
}

func (d CacheConfig) maxData() int {
	return positive(d.MaxDataBytes, domain.DefaultMaxDataBytes)
}

// open resolves the assignment, admits the actor, binds the assignment's
// repository to the actor's caller (ports.CacheRepository.For) and reads
// the clock.
func (d CacheConfig) open(assignment string, actor domain.Actor) (*Assignment, ports.CacheRepository, time.Time, error) {
	st, err := d.Assignments.Lookup(assignment)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	if err := admit(actor, st); err != nil {
		return nil, nil, time.Time{}, err
	}
	return st, st.Repo.For(actor.Caller()), domain.Normalize(d.Clock.Now()), nil
}

// visible returns the live entry with id if actor may see it.
func (d CacheConfig) visible(ctx context.Context, st *Assignment, repo ports.CacheRepository, actor domain.Actor, id string, now time.Time) (domain.Entry, error) {
	id, ok := normalizeID(id)
	if !ok {
		return domain.Entry{}, domain.ErrCacheNotFound
	}
	e, err := repo.Get(ctx, id, now)
	if err != nil {
		return domain.Entry{}, err
	}
	if !canSee(actor, st, e) {
		return domain.Entry{}, domain.ErrCacheNotFound
	}
	return e, nil
}

// byRef returns the live entry with a natural key if actor may see it.
func (d CacheConfig) byRef(ctx context.Context, st *Assignment, repo ports.CacheRepository, actor domain.Actor, ref CacheRef, now time.Time) (domain.Entry, error) {
	k, err := domain.NaturalKey(ref).Validate()
	if err != nil {
		return domain.Entry{}, err
	}
	if err := mayAssign(actor, st, k.AssigneeID); err != nil {
		return domain.Entry{}, domain.ErrCacheNotFound
	}
	return repo.GetByKey(ctx, k, now)
}

// positive returns v, or def when v is zero or less.
func positive[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}
