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
