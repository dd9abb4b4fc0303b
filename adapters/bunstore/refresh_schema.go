package bunstore

import (
	"context"
	"fmt"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

// refresh_families holds one row per refresh family (domain.RefreshFamily):
// the live token (current_id, issued_at, expires_at), the rotation count,
// the two tokens it replaced last with their first use (prev_…, prev2_…)
// and the family's revocation. A rotation updates the row in place, so
// the table grows with live sessions, not with refreshes.
//
// The CHECK keeps a successor's id apart from the tokens the family
// remembers: a rotation to such an id fails as a statement, which the
// group commit of SQLite rotations (rotation_group.go) needs to tell a
// broken rotation from a refused one.
func refreshFamiliesDDL(eng engine.Engine) []string {
	text, tm := eng.TextColumn(), eng.TimeColumn()
	return []string{
		`CREATE TABLE IF NOT EXISTS refresh_families (
			family_id ` + text + ` NOT NULL,
			user_id ` + text + ` NOT NULL,
			current_id ` + text + ` NOT NULL,
			issued_at ` + tm + ` NOT NULL,
			expires_at ` + tm + ` NOT NULL,
			generation BIGINT NOT NULL DEFAULT 0,
			prev_id ` + text + `,
			prev_used_at ` + tm + `,
			prev2_id ` + text + `,
			prev2_used_at ` + tm + `,
			revoked_at ` + tm + `,
			CONSTRAINT refresh_families_pkey PRIMARY KEY (family_id),
			CONSTRAINT refresh_families_ids_check CHECK (current_id <> prev_id AND current_id <> prev2_id)
		)`,
		`CREATE INDEX IF NOT EXISTS refresh_families_user_id_idx ON refresh_families (user_id)`,
		`CREATE INDEX IF NOT EXISTS refresh_families_expires_at_idx ON refresh_families (expires_at)`,
		`CREATE INDEX IF NOT EXISTS refresh_families_revoked_at_idx ON refresh_families (revoked_at) WHERE revoked_at IS NOT NULL`,
	}
}

// refreshLiveIndexDDL indexes each user's unrevoked families by last
// use, what a login beyond --max-sessions-per-user reads to evict the
// least recently used (RefreshStore.EvictSessions) and the session lists
// read: the families it revokes stay until they expire, so without it
// each login of a user who logs in in a loop would read every family the
// loop left.
const refreshLiveIndexDDL = `CREATE INDEX IF NOT EXISTS refresh_families_live_idx
	ON refresh_families (user_id, issued_at) WHERE revoked_at IS NULL`

// refreshDigestMigration adds refresh_families.current_digest, the live
// token's domain.TokenDigest, against which a refresh presenting claims
// read without their signature checked is matched (RotateRefresh). Rows
// stored before have none: their next refresh checks the signature, and
// its rotation stores the successor's digest. Idempotent, as the other
// auth migrations.
func refreshDigestMigration(ctx context.Context, eng engine.Engine, m *migrate.Migrator) error {
	return m.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := eng.AddColumnIfMissing(ctx, tx, "refresh_families", "current_digest", eng.BytesColumn()); err != nil {
			return fmt.Errorf("bunstore: add refresh_families.current_digest: %w", err)
		}
		return nil
	})
}

// refreshFamiliesMigration creates refresh_families, converts the rows of
// refresh_tokens (one per issued token, the schema before it) into
// families, and drops refresh_tokens, in one transaction: a database
// upgraded while sessions are live keeps them, every token that worked
// before the upgrade works after it as it did (live, within the grace of
// its first use, or reuse). Processes racing on one SQLite file may both
// run it: the second finds refresh_tokens gone and converts nothing.
func refreshFamiliesMigration(ctx context.Context, eng engine.Engine, m *migrate.Migrator) error {
	return m.DB().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := execAll(ctx, tx, refreshFamiliesDDL(eng)); err != nil {
			return fmt.Errorf("bunstore: create refresh_families: %w", err)
		}
		exists, err := tableExists(ctx, eng, tx, "refresh_tokens")
		if err != nil || !exists {
			return err
		}
		if _, err := tx.ExecContext(ctx, convertRefreshTokens("refresh_tokens", true)); err != nil {
			return fmt.Errorf("bunstore: convert refresh_tokens into refresh_families: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DROP TABLE refresh_tokens`); err != nil {
			return fmt.Errorf("bunstore: drop refresh_tokens: %w", err)
		}
		return nil
	})
}

// tableExists reports whether the schema in use has table.
func tableExists(ctx context.Context, eng engine.Engine, db bun.IDB, table string) (bool, error) {
	q := eng.TableExistsQuery()
	var n int
	if err := db.QueryRowContext(ctx, q, table).Scan(&n); err != nil {
		return false, fmt.Errorf("bunstore: look for table %s: %w", table, err)
	}
	return n > 0, nil
}

// convertRefreshTokens returns the statement that stores the families of
// the token rows of source (the columns of refresh_tokens: id, family_id,
// user_id, issued_at, expires_at, used_at, revoked_at), the rule being
// what the token rows meant:
//
//   - the live token is the family's newest unused token (none when every
//     token was used: current_id is then empty, and no token rotates);
//   - the used tokens it remembers are the two used last, with their
//     first use;
//   - the family is revoked when any token was, at the latest revocation
//     (what RevokedFamilies answered before);
//   - generation is the number of used tokens.
//
// With skipTaken, a family already stored is kept and the converted one
// skipped; otherwise it is a unique violation. (The WHERE true keeps
// SQLite from reading the ON of ON CONFLICT as a join's.)
func convertRefreshTokens(source string, skipTaken bool) string {
	q := `INSERT INTO refresh_families (family_id, user_id, current_id, issued_at, expires_at, generation,
			prev_id, prev_used_at, prev2_id, prev2_used_at, revoked_at)
		SELECT family_id, MIN(user_id),
			COALESCE(MAX(CASE WHEN live_rank = 1 AND used_at IS NULL THEN id END), ''),
			COALESCE(MAX(CASE WHEN live_rank = 1 AND used_at IS NULL THEN issued_at END), MAX(issued_at)),
			COALESCE(MAX(CASE WHEN live_rank = 1 AND used_at IS NULL THEN expires_at END), MAX(expires_at)),
			COUNT(used_at),
			MAX(CASE WHEN used_rank = 1 AND used_at IS NOT NULL THEN id END),
			MAX(CASE WHEN used_rank = 1 AND used_at IS NOT NULL THEN used_at END),
			MAX(CASE WHEN used_rank = 2 AND used_at IS NOT NULL THEN id END),
			MAX(CASE WHEN used_rank = 2 AND used_at IS NOT NULL THEN used_at END),
			MAX(revoked_at)
		FROM (SELECT id, family_id, user_id, issued_at, expires_at, used_at, revoked_at,
				ROW_NUMBER() OVER (PARTITION BY family_id
					ORDER BY CASE WHEN used_at IS NULL THEN 0 ELSE 1 END, issued_at DESC, id DESC) AS live_rank,
				ROW_NUMBER() OVER (PARTITION BY family_id
					ORDER BY CASE WHEN used_at IS NULL THEN 1 ELSE 0 END, used_at DESC, id DESC) AS used_rank
			FROM ` + source + `) tokens
		WHERE true
		GROUP BY family_id`
	if skipTaken {
		q += ` ON CONFLICT (family_id) DO NOTHING`
	}
	return q
}
