package bunstore

import "github.com/uptrace/bun/migrate"

// authMigrations returns the schema migrations of the authentication
// tables, in order.
func authMigrations() []migrate.Migration { return nil }
