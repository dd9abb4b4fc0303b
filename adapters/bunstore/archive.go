package bunstore

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/bound"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/writegate"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// Archive reads and loads whole databases for `cachegate export` and
// `cachegate import`. Reads are pages in primary-key order (keyset), each
// its own bounded statement; loads are multi-row INSERTs in one
// transaction, so an import is all or nothing. Writes go straight to the
// tables, so a row keeps the id, version and dates it had.
type Archive struct {
	db     *DB
	bounds bound.Bounds
}

var (
	_ ports.ArchiveReader = (*Archive)(nil)
	_ ports.ArchiveWriter = (*Archive)(nil)
)

// NewArchive returns the archive of db, which must come from Open and have
// been migrated. Each page read or batch written is bounded by the
// repository timeout (WithTimeout).
func NewArchive(db *DB) *Archive {
	return &Archive{db: db, bounds: db.bounds}
}

// archivePage is how many rows one read fetches.
const archivePage = 1000

// eachPage runs query (which must select in primary-key order and take,
// as its last two arguments, the key to start after and the page size)
// page after page, calling fn with each row scan read; key is a row's
// primary key.
func eachPage[T any](ctx context.Context, a *Archive, op, query string, args []any, scan func(rowScanner) (T, error),
	key func(T) string, fn func(T) error) error {
	after := ""
	for {
		n, last, err := page(ctx, a, op, query, append(append([]any(nil), args...), after, archivePage), scan, key, fn)
		if err != nil {
			return err
		}
		if n < archivePage {
			return nil
		}
		after = last
	}
}

func page[T any](ctx context.Context, a *Archive, op, query string, args []any, scan func(rowScanner) (T, error),
	key func(T) string, fn func(T) error) (n int, last string, err error) {
	ctx, call := a.bounds.Enter(ctx)
	defer call.Done(&err)
	rows, err := a.db.sql.QueryContext(ctx, query, args...)
	if err != nil {
		return 0, "", dberr.Wrap(op, err)
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return n, last, dberr.Wrap(op, err)
		}
		if err := fn(v); err != nil {
			return n, last, err
		}
		n, last = n+1, key(v)
	}
	if err := rows.Err(); err != nil {
		return n, last, dberr.Wrap(op, err)
	}
	return n, last, nil
}

// EachUser implements ports.ArchiveReader.
func (a *Archive) EachUser(ctx context.Context, fn func(domain.User) error) error {
	return eachPage(ctx, a, "export users", "SELECT "+userColumns+" FROM users WHERE id > ? ORDER BY id LIMIT ?", nil,
		scanUser, func(u domain.User) string { return u.ID }, fn)
}

// EachSigningKey implements ports.ArchiveReader.
func (a *Archive) EachSigningKey(ctx context.Context, fn func(domain.SigningKey) error) error {
	return eachPage(ctx, a, "export signing keys", `SELECT id, algorithm, "private", "public", date_created, retired_at, revoked_at
		FROM signing_keys WHERE id > ? ORDER BY id LIMIT ?`, nil,
		func(rows rowScanner) (domain.SigningKey, error) {
			var r signingKeyRow
			err := rows.Scan(&r.ID, &r.Algorithm, &r.Private, &r.Public, &r.DateCreated, &r.RetiredAt, &r.RevokedAt)
			return toDomainSigningKey(r), err
		}, func(k domain.SigningKey) string { return k.ID }, fn)
}

// EachRefreshFamily implements ports.ArchiveReader.
func (a *Archive) EachRefreshFamily(ctx context.Context, now time.Time, fn func(domain.RefreshFamily) error) error {
	return eachPage(ctx, a, "export refresh families", `SELECT `+familyColumns+`
		FROM refresh_families WHERE expires_at > ? AND family_id > ? ORDER BY family_id LIMIT ?`, []any{engine.TimeArg(now)},
		scanFamily, func(f domain.RefreshFamily) string { return f.ID }, fn)
}

// EachEntry implements ports.ArchiveReader.
func (a *Archive) EachEntry(ctx context.Context, table string, now time.Time, fn func(domain.Entry) error) error {
	if err := ValidateTableName(table); err != nil {
		return err
	}
	return eachPage(ctx, a, "export entries", "SELECT "+cacheColumns+" FROM ? WHERE "+liveAt+" AND id > ? ORDER BY id LIMIT ?",
		[]any{bun.Ident(table), engine.TimeArg(now)}, scanEntry, func(e domain.Entry) string { return e.ID }, fn)
}

// Holds implements ports.ArchiveWriter.
func (a *Archive) Holds(ctx context.Context, tables []string) (_ bool, err error) {
	ctx, call := a.bounds.Enter(ctx)
	defer call.Done(&err)
	// Signing keys are left out: every start creates one, `migrate` too,
	// and Import retires it when the archive brings its own
	// (KeepSigningKey).
	for _, t := range append([]string{"users", "refresh_families"}, tables...) {
		if err := ValidateTableName(t); err != nil && !slices.Contains(authTables(), t) {
			return false, err
		}
		var one int
		err := a.db.sql.QueryRowContext(ctx, "SELECT 1 FROM ? LIMIT 1", bun.Ident(t)).Scan(&one)
		switch {
		case err == nil:
			return true, nil
		case err != sql.ErrNoRows:
			return false, dberr.Wrap("look into "+t, err)
		}
	}
	return false, nil
}

// BeginLoad implements ports.ArchiveWriter. The transaction is not bounded
// by the repository timeout (a load of millions of rows takes longer);
// each batch is.
func (a *Archive) BeginLoad(ctx context.Context, merge bool) (ports.ArchiveLoad, error) {
	leave, err := writegate.Enter(ctx, a.db.gate, nil)
	if err != nil {
		return nil, dberr.Wrap("begin the import", err)
	}
	tx, err := a.db.sql.BeginTx(ctx, nil)
	if err != nil {
		leave()
		return nil, dberr.Translate(ctx, dberr.Wrap("begin the import", err))
	}
	return &archiveLoad{tx: tx, eng: a.db.eng, merge: merge, bounds: a.bounds, leave: leave}, nil
}

// archiveLoad is one import's transaction.
type archiveLoad struct {
	tx     bun.Tx
	eng    engine.Engine
	merge  bool
	bounds bound.Bounds
	leave  func()
	ended  bool
	// tokens is set while the temporary table of AddRefreshTokens exists.
	tokens bool
}

// insert runs one multi-row INSERT of n rows of width columns, whose
// values args holds row after row; with merge, rows in conflict with one
// already stored are skipped. It returns how many rows it inserted.
func (l *archiveLoad) insert(ctx context.Context, op, head string, width, n int, args []any) (inserted int, err error) {
	if n == 0 {
		return 0, nil
	}
	ctx, call := l.bounds.Enter(ctx)
	defer call.Done(&err)
	res, err := l.tx.ExecContext(ctx, valuesStatement(head, width, n, l.merge), args...)
	if err != nil {
		return 0, l.insertError(op, err)
	}
	m, err := res.RowsAffected()
	return int(m), err
}

// insertError names a failed insert of op; nil stays nil.
func (l *archiveLoad) insertError(op string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := dberr.AsUniqueViolation(err); ok {
		return dberr.Wrap(op+": a row of this batch is already stored (use --merge to keep the stored one)", err)
	}
	return dberr.Wrap(op, err)
}

func (l *archiveLoad) AddUsers(ctx context.Context, us []domain.User) (int, error) {
	args := make([]any, 0, 9*len(us))
	for _, u := range us {
		args = append(args, u.ID, u.Username, domain.NormalizeUsername(u.Username), u.PasswordHash, u.PasswordSalt,
			u.Active, engine.TimeArg(u.DateCreated), engine.TimeArg(u.DateUpdated), u.Admin)
	}
	return l.insert(ctx, "import users", `INSERT INTO users
		(id, username, username_norm, password_hash, password_salt, active, date_created, date_updated, admin)`, 9, len(us), args)
}

func (l *archiveLoad) AddSigningKeys(ctx context.Context, ks []domain.SigningKey) (int, error) {
	args := make([]any, 0, 7*len(ks))
	for _, k := range ks {
		args = append(args, k.ID, k.Algorithm, authBytes(k.Private), authBytes(k.Public), engine.TimeArg(k.DateCreated),
			engine.NullTimeArg(k.RetiredAt), engine.NullTimeArg(k.RevokedAt))
	}
	return l.insert(ctx, "import signing keys", `INSERT INTO signing_keys
		(id, algorithm, "private", "public", date_created, retired_at, revoked_at)`, 7, len(ks), args)
}

// KeepSigningKey implements ports.ArchiveLoad.
func (l *archiveLoad) KeepSigningKey(ctx context.Context, id string, at time.Time) (_ int, err error) {
	ctx, call := l.bounds.Enter(ctx)
	defer call.Done(&err)
	res, err := l.tx.ExecContext(ctx, `UPDATE signing_keys SET retired_at = ?, "private" = ?
		WHERE retired_at IS NULL AND revoked_at IS NULL AND id <> ?
		AND EXISTS (SELECT 1 FROM signing_keys k WHERE k.id = ? AND k.retired_at IS NULL AND k.revoked_at IS NULL)`,
		engine.TimeArg(at), []byte{}, id, id)
	if err != nil {
		return 0, dberr.Wrap("retire the signing keys the import replaces", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

func (l *archiveLoad) AddRefreshFamilies(ctx context.Context, fs []domain.RefreshFamily) (n int, err error) {
	ctx, call := l.bounds.Enter(ctx)
	defer call.Done(&err)
	n, err = insertFamilies(ctx, l.tx, l.merge, fs)
	return n, l.insertError("import refresh families", err)
}

// tokensTable is the temporary table AddRefreshTokens fills, in the
// columns of the refresh_tokens table of old.
const tokensTable = "cachegate_import_refresh_tokens"

func (l *archiveLoad) AddRefreshTokens(ctx context.Context, rs []domain.RefreshRecord) (int, error) {
	if len(rs) == 0 {
		return 0, nil
	}
	if !l.tokens {
		text, tm := l.eng.TextColumn(), l.eng.TimeColumn()
		_, err := l.tx.ExecContext(ctx, `CREATE TEMPORARY TABLE `+tokensTable+` (
			id `+text+` NOT NULL, family_id `+text+` NOT NULL, user_id `+text+` NOT NULL,
			issued_at `+tm+` NOT NULL, expires_at `+tm+` NOT NULL, used_at `+tm+`, revoked_at `+tm+`,
			PRIMARY KEY (id))`)
		if err != nil {
			return 0, dberr.Wrap("import refresh tokens: create a temporary table", err)
		}
		l.tokens = true
	}
	args := make([]any, 0, 7*len(rs))
	for _, r := range rs {
		args = append(args, r.ID, r.FamilyID, r.UserID, engine.TimeArg(r.IssuedAt), engine.TimeArg(r.ExpiresAt),
			engine.NullTimeArg(r.UsedAt), engine.NullTimeArg(r.RevokedAt))
	}
	return l.insert(ctx, "import refresh tokens", `INSERT INTO `+tokensTable+`
		(id, family_id, user_id, issued_at, expires_at, used_at, revoked_at)`, 7, len(rs), args)
}

// ConvertRefreshTokens stores the families of the tokens AddRefreshTokens
// took, with the statement of the schema migration that converted
// refresh_tokens (convertRefreshTokens), and drops the temporary table.
func (l *archiveLoad) ConvertRefreshTokens(ctx context.Context) (stored, skipped int, err error) {
	if !l.tokens {
		return 0, 0, nil
	}
	var families int
	if err := l.tx.QueryRowContext(ctx, `SELECT count(DISTINCT family_id) FROM `+tokensTable).Scan(&families); err != nil {
		return 0, 0, dberr.Wrap("import refresh tokens: count their families", err)
	}
	res, err := l.tx.ExecContext(ctx, convertRefreshTokens(tokensTable, l.merge))
	if err != nil {
		return 0, 0, l.insertError("import refresh tokens: store their families", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, 0, dberr.Wrap("import refresh tokens", err)
	}
	if _, err := l.tx.ExecContext(ctx, `DROP TABLE `+tokensTable); err != nil {
		return 0, 0, dberr.Wrap("import refresh tokens: drop the temporary table", err)
	}
	l.tokens = false
	return int(n), families - int(n), nil
}

func (l *archiveLoad) AddEntries(ctx context.Context, table string, es []domain.Entry) (int, error) {
	if err := ValidateTableName(table); err != nil {
		return 0, err
	}
	args := make([]any, 0, 12*len(es))
	for _, e := range es {
		e = e.Normalized()
		args = append(args, e.ID, e.Key, e.Type, e.AssigneeID, string(e.Data), e.Version,
			engine.TimeArg(e.DateCreated), engine.TimeArg(e.DateUpdated), engine.NullTimeArg(e.DateDeleted), engine.NullTimeArg(e.ExpiresAt),
			foldedArg(e.Key), foldedArg(e.Type))
	}
	// The name passed ValidateTableName: quoting it is enough.
	return l.insert(ctx, "import entries", `INSERT INTO "`+table+`" (`+cacheWriteColumns+`)`, 12, len(es), args)
}

func (l *archiveLoad) Commit() error {
	return l.end(func() error {
		if err := l.tx.Commit(); err != nil {
			return dberr.Translate(context.Background(), dberr.Wrap("commit the import", err))
		}
		return nil
	})
}

func (l *archiveLoad) Rollback() error { return l.end(l.tx.Rollback) }

// end runs fn, the transaction's commit or rollback, unless one ran
// already, and leaves the write gate.
func (l *archiveLoad) end(fn func() error) error {
	if l.ended {
		return nil
	}
	l.ended = true
	defer l.leave()
	return fn()
}
