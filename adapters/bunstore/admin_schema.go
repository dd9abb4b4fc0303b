package bunstore

import (
	"context"
	"fmt"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

// adminMigration adds what the admin API needs (docs/admin.md):
// users.admin; refresh_families.created_at (the login, NULL for families
// stored before), address and user_agent (of the last login or refresh);
// auth_events.actor_id, actor_username and detail (the acting admin of an
// admin event). Each step is idempotent, as the other auth migrations'.
func adminMigration(ctx context.Context, eng engine.Engine, m *migrate.Migrator) error {
	return m.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		text := eng.TextColumn() + " NOT NULL DEFAULT ''"
		for _, c := range []struct{ table, name, typ string }{
			{"users", "admin", "BOOLEAN NOT NULL DEFAULT FALSE"},
			{"refresh_families", "created_at", eng.TimeColumn()},
			{"refresh_families", "address", text},
			{"refresh_families", "user_agent", text},
			{"auth_events", "actor_id", text},
			{"auth_events", "actor_username", text},
			{"auth_events", "detail", text},
		} {
			if err := eng.AddColumnIfMissing(ctx, tx, c.table, c.name, c.typ); err != nil {
				return fmt.Errorf("bunstore: add %s.%s: %w", c.table, c.name, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS auth_events_address_at_idx ON auth_events (address, "at")`); err != nil {
			return fmt.Errorf("bunstore: index audit events by address: %w", err)
		}
		return nil
	})
}
