package bunstore

import (
	"context"
	"fmt"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

// The authentication tables:
//
//   - users: local accounts. username keeps the name as given;
//     username_norm (domain.NormalizeUsername) is unique and is what
//     lookups and ListUsers' order use.
//   - refresh_families: one row per refresh family (refresh_schema.go).
//     No foreign key to users: subjects may come from an integrator's
//     UserLookup rather than this table.
//   - signing_keys: token signing keys; private holds the key material,
//     sealed when a key encryption secret is configured (josejwt), empty
//     once the key is retired or revoked; signs_from is when the key
//     starts signing (keys.go), retired_at when it stops.
//   - login_failures: one row per failed login, by throttle key.
//
// Times and compared text use the engine's columns (internal/engine).

// authTables lists the tables the authentication migrations leave; no
// cache table may take one of these names, nor one of retiredAuthTables.
func authTables() []string {
	return []string{"users", "refresh_families", "signing_keys", "login_failures", "auth_events"}
}

// retiredAuthTables lists tables that earlier migrations create and later
// ones drop: still reserved, since every migration runs on a new database.
func retiredAuthTables() []string { return []string{"refresh_tokens"} }

// authMigrations returns the schema migrations of the authentication
// tables, in order. Their names sort after the cache tables' migrations
// (20261125000100_cache_…), so Migrate runs them last. Every statement
// is idempotent, so processes racing on one SQLite file may both run it.
func authMigrations(eng engine.Engine) []migrate.Migration {
	const auth = "create the authentication tables"
	return []migrate.Migration{{
		Name: "20261125000200_auth_tables",
		Up:   ddlMigration(auth, authTablesDDL(eng)...),
		Down: ddlMigration(auth, authDropDDL...),
	}, {
		Name: "20261126000200_auth_sessions_keys",
		Up:   withEngine(eng, sessionsKeysMigration),
		Down: func(context.Context, *migrate.Migrator, *migrate.Migration) error { return nil },
	}, {
		Name: "20261126000300_auth_events",
		Up:   ddlMigration(auth, auditDDL(eng)...),
		Down: ddlMigration(auth, `DROP TABLE IF EXISTS auth_events`),
	}, {
		Name: "20261127000100_auth_refresh_families",
		Up:   withEngine(eng, refreshFamiliesMigration),
		Down: ddlMigration(auth, `DROP TABLE IF EXISTS refresh_families`),
	}, {
		Name: "20261127002500_signing_keys_signs_from",
		Up:   withEngine(eng, signsFromMigration),
		Down: func(context.Context, *migrate.Migrator, *migrate.Migration) error { return nil },
	}, {
		Name: "20261128000700_auth_events_fold",
		Up:   withEngine(eng, auditFoldMigration),
		Down: func(context.Context, *migrate.Migrator, *migrate.Migration) error { return nil },
	}, {
		Name: "20261129002700_admin",
		Up:   withEngine(eng, adminMigration),
		Down: func(context.Context, *migrate.Migrator, *migrate.Migration) error { return nil },
	}, {
		Name: "20261130000100_refresh_families_digest",
		Up:   withEngine(eng, refreshDigestMigration),
		Down: func(context.Context, *migrate.Migrator, *migrate.Migration) error { return nil },
	}, {
		Name: "20261215000100_refresh_families_live",
		Up:   ddlMigration(auth, refreshLiveIndexDDL),
		Down: ddlMigration(auth, `DROP INDEX IF EXISTS refresh_families_live_idx`),
	}}
}

// sessionsKeysMigration adds what sessions that end everywhere and key
// revocation need (docs/api.md, "Authentication"): an index of revoked
// refresh tokens by revocation time, signing_keys.revoked_at, and erases
// the private halves of keys already retired. Each step is idempotent.
func sessionsKeysMigration(ctx context.Context, eng engine.Engine, m *migrate.Migrator) error {
	return m.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := eng.AddColumnIfMissing(ctx, tx, "signing_keys", "revoked_at", eng.TimeColumn()); err != nil {
			return fmt.Errorf("bunstore: add signing_keys.revoked_at: %w", err)
		}
		// refresh_tokens is gone when a process migrating the same SQLite
		// file at once already ran 20261127000100, which replaces it.
		if exists, err := tableExists(ctx, eng, tx, "refresh_tokens"); err != nil {
			return err
		} else if exists {
			if _, err := tx.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS refresh_tokens_revoked_at_idx
				ON refresh_tokens (revoked_at) WHERE revoked_at IS NOT NULL`); err != nil {
				return fmt.Errorf("bunstore: index revoked refresh tokens: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE signing_keys SET "private" = ?
			WHERE retired_at IS NOT NULL OR revoked_at IS NOT NULL`, []byte{}); err != nil {
			return fmt.Errorf("bunstore: erase retired private keys: %w", err)
		}
		return nil
	})
}

// withEngine returns the migration step fn on the database of eng.
func withEngine(eng engine.Engine, fn func(ctx context.Context, eng engine.Engine, m *migrate.Migrator) error) func(context.Context, *migrate.Migrator, *migrate.Migration) error {
	return func(ctx context.Context, m *migrate.Migrator, _ *migrate.Migration) error { return fn(ctx, eng, m) }
}

// authTablesDDL returns the statements creating the authentication tables.
func authTablesDDL(eng engine.Engine) []string {
	text, tm, bytes, serial := eng.TextColumn(), eng.TimeColumn(), eng.BytesColumn(), eng.SerialPrimaryKey()
	return []string{
		`CREATE TABLE IF NOT EXISTS users (
			id ` + text + ` NOT NULL,
			username ` + text + ` NOT NULL,
			username_norm ` + text + ` NOT NULL,
			password_hash ` + text + ` NOT NULL,
			password_salt ` + text + ` NOT NULL,
			active BOOLEAN NOT NULL,
			date_created ` + tm + ` NOT NULL,
			date_updated ` + tm + ` NOT NULL,
			CONSTRAINT users_pkey PRIMARY KEY (id),
			CONSTRAINT users_username_norm_key UNIQUE (username_norm)
		)`,
		`CREATE TABLE IF NOT EXISTS refresh_tokens (
			id ` + text + ` NOT NULL,
			family_id ` + text + ` NOT NULL,
			user_id ` + text + ` NOT NULL,
			issued_at ` + tm + ` NOT NULL,
			expires_at ` + tm + ` NOT NULL,
			used_at ` + tm + `,
			revoked_at ` + tm + `,
			CONSTRAINT refresh_tokens_pkey PRIMARY KEY (id)
		)`,
		`CREATE INDEX IF NOT EXISTS refresh_tokens_family_id_idx ON refresh_tokens (family_id)`,
		`CREATE INDEX IF NOT EXISTS refresh_tokens_user_id_idx ON refresh_tokens (user_id)`,
		`CREATE INDEX IF NOT EXISTS refresh_tokens_expires_at_idx ON refresh_tokens (expires_at)`,
		`CREATE TABLE IF NOT EXISTS signing_keys (
			id ` + text + ` NOT NULL,
			algorithm ` + text + ` NOT NULL,
			"private" ` + bytes + ` NOT NULL,
			"public" ` + bytes + ` NOT NULL,
			date_created ` + tm + ` NOT NULL,
			retired_at ` + tm + `,
			CONSTRAINT signing_keys_pkey PRIMARY KEY (id)
		)`,
		`CREATE TABLE IF NOT EXISTS login_failures (
			id ` + serial + `,
			"key" ` + text + ` NOT NULL,
			"at" ` + tm + ` NOT NULL
		)`,
		`CREATE INDEX IF NOT EXISTS login_failures_key_at_idx ON login_failures ("key", "at")`,
		`CREATE INDEX IF NOT EXISTS login_failures_at_idx ON login_failures ("at")`,
	}
}

// authDropDDL undoes authTablesDDL.
var authDropDDL = []string{
	`DROP TABLE IF EXISTS login_failures`,
	`DROP TABLE IF EXISTS signing_keys`,
	`DROP TABLE IF EXISTS refresh_tokens`,
	`DROP TABLE IF EXISTS users`,
}

// auditDDL creates auth_events: one row per security event (README.md,
// "Audit trail"), username_norm for --user, indexes for the newest-first
// listing and for retention. auditFoldDDL adds the columns of folded
// login attempts.
func auditDDL(eng engine.Engine) []string {
	text, tm := eng.TextColumn(), eng.TimeColumn()
	return []string{
		`CREATE TABLE IF NOT EXISTS auth_events (
			id ` + text + ` NOT NULL,
			"at" ` + tm + ` NOT NULL,
			type ` + text + ` NOT NULL,
			user_id ` + text + ` NOT NULL,
			username ` + text + ` NOT NULL,
			username_norm ` + text + ` NOT NULL,
			address ` + text + ` NOT NULL,
			request_id ` + text + ` NOT NULL,
			family ` + text + ` NOT NULL,
			reason ` + text + ` NOT NULL,
			CONSTRAINT auth_events_pkey PRIMARY KEY (id)
		)`,
		`CREATE INDEX IF NOT EXISTS auth_events_at_idx ON auth_events ("at", id)`,
		`CREATE INDEX IF NOT EXISTS auth_events_user_at_idx ON auth_events (username_norm, "at")`,
	}
}

// auditFoldMigration adds what folding failed and throttled logins needs
// (domain.AuditFold): attempts, last_at (NULL for a single event) and
// fold_key (domain.AuditFold.Keys), unique among the rows that have one,
// and an index of those rows by address and time. Both indexes are
// partial, so events that are not folded pay nothing for them.
func auditFoldMigration(ctx context.Context, eng engine.Engine, m *migrate.Migrator) error {
	return m.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for _, c := range []struct{ name, typ string }{
			{"attempts", "INTEGER NOT NULL DEFAULT 1"}, {"last_at", eng.TimeColumn()}, {"fold_key", eng.TextColumn()},
		} {
			if err := eng.AddColumnIfMissing(ctx, tx, "auth_events", c.name, c.typ); err != nil {
				return fmt.Errorf("bunstore: add auth_events.%s: %w", c.name, err)
			}
		}
		if err := execAll(ctx, tx, []string{
			`CREATE UNIQUE INDEX IF NOT EXISTS auth_events_fold_key_idx ON auth_events (fold_key) WHERE fold_key IS NOT NULL`,
			`CREATE INDEX IF NOT EXISTS auth_events_fold_address_idx ON auth_events (address, "at") WHERE fold_key IS NOT NULL`,
		}); err != nil {
			return fmt.Errorf("bunstore: index folded audit events: %w", err)
		}
		return nil
	})
}

// signsFromMigration adds signing_keys.signs_from, when a key starts
// signing (README.md, "Tokens"), so that every replica switches to a new
// key at the same instant. Keys stored before sign from their creation.
func signsFromMigration(ctx context.Context, eng engine.Engine, m *migrate.Migrator) error {
	return m.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := eng.AddColumnIfMissing(ctx, tx, "signing_keys", "signs_from", eng.TimeColumn()); err != nil {
			return fmt.Errorf("bunstore: add signing_keys.signs_from: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE signing_keys SET signs_from = date_created WHERE signs_from IS NULL`); err != nil {
			return fmt.Errorf("bunstore: set signing_keys.signs_from: %w", err)
		}
		return nil
	})
}
