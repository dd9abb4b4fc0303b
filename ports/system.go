package ports

import "time"

// Clock tells the time. Use cases never call time.Now themselves.
type Clock interface {
	Now() time.Time
}

// IDGenerator makes unique ids: UUIDv7 strings, so index order follows
// creation time.
type IDGenerator interface {
	NewID() string
}

// Metrics records business events for monitoring. Implementations must be
// cheap and safe for concurrent use; they never fail.
type Metrics interface {
	// LoginOutcome counts one login attempt: "success", "failure" or
	// "throttled".
	LoginOutcome(outcome string)
	// RefreshOutcome counts one refresh: "rotated", "reissued", "reused" or
	// "rejected".
	RefreshOutcome(outcome string)
	// CacheEntryCreated counts one entry created in an assignment.
	CacheEntryCreated(assignment string)
	// CacheRowsSwept counts rows the sweeper removed (expired or deleted).
	CacheRowsSwept(store string, n int)
	// AuditEvent counts one audit event of type typ (a domain.AuditType).
	AuditEvent(typ string)
}

// SecretSource makes unguessable secrets (a one-time set-up token).
type SecretSource interface {
	// Secret returns n bytes from a cryptographically secure source.
	Secret(n int) ([]byte, error)
}
