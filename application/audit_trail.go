package application

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// AuditTrail reads the audit trail (the `cachegate audit` command).
type AuditTrail struct {
	store ports.AuditLog
	clock ports.Clock
}

// NewAuditTrail returns the use case.
func NewAuditTrail(store ports.AuditLog, clock ports.Clock) (*AuditTrail, error) {
	if store == nil || clock == nil {
		return nil, errors.New("the audit trail needs an audit log and a clock")
	}
	return &AuditTrail{store: store, clock: clock}, nil
}

// AuditQuery selects events; zero fields select everything.
type AuditQuery struct {
	Username string
	Type     domain.AuditType
	// Since keeps the events of the last Since.
	Since time.Duration
	Limit int
}

// List returns the events q selects, newest first. An unknown type or a
// negative duration is a validation error.
func (a *AuditTrail) List(ctx context.Context, q AuditQuery) ([]domain.AuditEvent, error) {
	if q.Type != "" && !q.Type.Valid() {
		return nil, domain.InvalidField("type", fmt.Sprintf("must be one of %v", domain.AuditTypes()))
	}
	if q.Since < 0 {
		return nil, domain.InvalidField("since", "must not be negative")
	}
	f := ports.AuditFilter{Username: q.Username, Type: q.Type, Limit: q.Limit}
	if q.Since > 0 {
		f.Since = a.clock.Now().Add(-q.Since)
	}
	events, err := a.store.Events(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("list audit events: %w", err)
	}
	return events, nil
}
