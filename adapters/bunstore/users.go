package bunstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore/internal/bound"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/dberr"
	"github.com/cachegate/cachegate/adapters/bunstore/internal/engine"
	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// UserRepository is the ports.UserRepository of the users table.
type UserRepository struct {
	db     *DB
	bounds bound.Bounds
	// byID is UserByID's statement on SQLite, prepared once: every
	// refresh reads its user by id.
	byID *engine.Prepared
}

var _ ports.UserRepository = (*UserRepository)(nil)

// NewUserRepository returns the repository over db, which must come from
// Open and have been migrated.
func NewUserRepository(db *DB) *UserRepository {
	return &UserRepository{db: db, bounds: db.bounds,
		byID: engine.NewPrepared(db.sql, db.eng, "SELECT "+userColumns+" FROM users WHERE id = ?")}
}

// userRow is a row of users as read.
type userRow struct {
	ID           string          `bun:"id"`
	Username     string          `bun:"username"`
	PasswordHash string          `bun:"password_hash"`
	PasswordSalt string          `bun:"password_salt"`
	Active       bool            `bun:"active"`
	Admin        bool            `bun:"admin"`
	DateCreated  engine.NullTime `bun:"date_created"`
	DateUpdated  engine.NullTime `bun:"date_updated"`
}

const userColumns = "id, username, password_hash, password_salt, active, date_created, date_updated, admin"

// toDomainUser converts a row to the domain type.
func toDomainUser(r userRow) domain.User {
	return domain.User{
		ID:           r.ID,
		Username:     r.Username,
		PasswordHash: r.PasswordHash,
		PasswordSalt: r.PasswordSalt,
		Active:       r.Active,
		Admin:        r.Admin,
		DateCreated:  r.DateCreated.Time,
		DateUpdated:  r.DateUpdated.Time,
	}
}

// CreateUser stores u, or returns domain.ErrUserExists when a user has the
// same username case-insensitively (the unique index on username_norm).
// An id already stored is an internal error. The events are inserted into
// auth_events in the same transaction as u: both are stored or neither.
func (r *UserRepository) CreateUser(ctx context.Context, u domain.User, events ...domain.AuditEvent) (err error) {
	ctx, call := r.bounds.Enter(ctx)
	defer call.Done(&err)
	if len(events) == 0 {
		return gated(ctx, call, r.db, func() error { return r.createUser(ctx, r.db.sql, u) })
	}
	return authInTx(ctx, call, r.db, "create user", func(ctx context.Context, tx bun.Tx) error {
		if err := r.createUser(ctx, tx, u); err != nil {
			return err
		}
		return insertEvents(ctx, tx, events)
	})
}

func (r *UserRepository) createUser(ctx context.Context, db bun.IDB, u domain.User) error {
	_, err := db.ExecContext(ctx, `INSERT INTO users
		(id, username, username_norm, password_hash, password_salt, active, date_created, date_updated, admin)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		u.ID, u.Username, domain.NormalizeUsername(u.Username), u.PasswordHash, u.PasswordSalt,
		u.Active, engine.TimeArg(u.DateCreated), engine.TimeArg(u.DateUpdated), u.Admin)
	return userWriteError("create user", err)
}

// userWriteError is err of a write of a user named op: ErrUserExists for a
// taken username, nil for none.
func userWriteError(op string, err error) error {
	if v, ok := dberr.AsUniqueViolation(err); ok && !v.PrimaryKey {
		return domain.ErrUserExists
	}
	if err != nil {
		return dberr.Wrap(op, err)
	}
	return nil
}

// UserByUsername returns the user whose username equals username after
// domain.NormalizeUsername, or domain.ErrUserNotFound.
func (r *UserRepository) UserByUsername(ctx context.Context, username string) (_ domain.User, err error) {
	ctx, call := r.bounds.Enter(ctx)
	defer call.Done(&err)
	return r.userWhere(ctx, r.db.sql, "username_norm", domain.NormalizeUsername(username), false)
}

// UserByID returns the user, or domain.ErrUserNotFound.
func (r *UserRepository) UserByID(ctx context.Context, id string) (_ domain.User, err error) {
	ctx, call := r.bounds.Enter(ctx)
	defer call.Done(&err)
	if !r.db.eng.Prepares() {
		return r.userWhere(ctx, r.db.sql, "id", id, false)
	}
	stmts, err := r.byID.Get(ctx)
	if err != nil {
		return domain.User{}, dberr.Wrap("prepare the user read", err)
	}
	return userFrom(scanUser(stmts[0].QueryRowContext(ctx, id)))
}

// scanUser converts one row of userColumns to a user.
func scanUser(s rowScanner) (domain.User, error) {
	var r userRow
	err := s.Scan(&r.ID, &r.Username, &r.PasswordHash, &r.PasswordSalt, &r.Active, &r.DateCreated, &r.DateUpdated, &r.Admin)
	return toDomainUser(r), err
}

// ListUsers returns every user ordered by normalized username, compared
// byte by byte.
func (r *UserRepository) ListUsers(ctx context.Context) (_ []domain.User, err error) {
	ctx, call := r.bounds.Enter(ctx)
	defer call.Done(&err)
	var rows []userRow
	if err := r.db.sql.NewRaw("SELECT "+userColumns+" FROM users ORDER BY username_norm, id").Scan(ctx, &rows); err != nil {
		return nil, dberr.Wrap("list users", err)
	}
	users := make([]domain.User, len(rows))
	for i, row := range rows {
		users[i] = toDomainUser(row)
	}
	return users, nil
}

// UpdateUser loads the user with id, lets fn change it and stores it in
// one transaction that holds the user's row, so concurrent updates queue
// and none is lost. It returns domain.ErrUserNotFound when the user is
// missing, fn's error as is, domain.ErrUserExists when fn renamed the user
// onto a taken username, and domain.ErrLastAdmin when the change leaves no
// active admin (keepAnAdmin). fn cannot change the id, and keeps
// DateUpdated current. The user returned is as stored (UTC, microseconds);
// the events are inserted in the same transaction.
func (r *UserRepository) UpdateUser(ctx context.Context, id string, fn func(*domain.User) error, events ...domain.AuditEvent) (_ domain.User, err error) {
	return r.update(ctx, id, nil, fn, events)
}

// UpdateUserEndingSessions is UpdateUser that also revokes at now every
// refresh family of the user in refresh_families (what
// RefreshStore.RevokeUser does), in the same transaction as the change
// and the events: the user, the revocation and auth_events commit
// together or not at all.
func (r *UserRepository) UpdateUserEndingSessions(ctx context.Context, id string, now time.Time, fn func(*domain.User) error, events ...domain.AuditEvent) (domain.User, error) {
	return r.update(ctx, id, &now, fn, events)
}

// update is UpdateUser, revoking the user's refresh families at
// *endSessions when it is set.
func (r *UserRepository) update(ctx context.Context, id string, endSessions *time.Time, fn func(*domain.User) error, events []domain.AuditEvent) (_ domain.User, err error) {
	ctx, call := r.bounds.Enter(ctx)
	defer call.Done(&err)
	var out domain.User
	err = authInTx(ctx, call, r.db, "update user", func(ctx context.Context, tx bun.Tx) error {
		u, err := r.userWhere(ctx, tx, "id", id, true)
		if err != nil {
			return err
		}
		wasAdmin := u.ActiveAdmin()
		if err := fn(&u); err != nil {
			return err
		}
		if wasAdmin && !u.ActiveAdmin() {
			if err := keepAnAdmin(ctx, r.db.eng, tx, id); err != nil {
				return err
			}
		}
		u.ID = id
		// As the database gives them back: UTC, truncated to the microsecond.
		u.DateCreated, u.DateUpdated = domain.Normalize(u.DateCreated), domain.Normalize(u.DateUpdated)
		_, err = tx.ExecContext(ctx, `UPDATE users SET username = ?, username_norm = ?, password_hash = ?,
			password_salt = ?, active = ?, date_created = ?, date_updated = ?, admin = ? WHERE id = ?`,
			u.Username, domain.NormalizeUsername(u.Username), u.PasswordHash, u.PasswordSalt,
			u.Active, engine.TimeArg(u.DateCreated), engine.TimeArg(u.DateUpdated), u.Admin, id)
		if err := userWriteError("update user", err); err != nil {
			return err
		}
		out = u
		if endSessions != nil {
			// revokeIn (refresh_revoke.go) updates the user's family rows;
			// a rotation committing meanwhile changes one of those rows,
			// so the UPDATE waits for it and revokes the row as the
			// rotation left it: its successor is revoked too.
			if err := revokeIn(ctx, tx, "user_id", id, *endSessions); err != nil {
				return err
			}
		}
		return insertEvents(ctx, tx, events)
	})
	if err != nil {
		return domain.User{}, err
	}
	return out, nil
}

// keepAnAdmin returns domain.ErrLastAdmin unless an active admin other
// than the user id remains, within tx, the transaction of the change
// that makes id no active admin (docs/admin.md). Every such change takes
// the users table's writer lock first, so two admins demoting each other
// queue: the second counts after the first committed.
func keepAnAdmin(ctx context.Context, eng engine.Engine, tx bun.Tx, id string) error {
	if err := eng.LockTableForWriters(ctx, tx, "users"); err != nil {
		return dberr.Wrap("lock the admins", err)
	}
	var others int
	if err := tx.NewRaw("SELECT count(*) FROM users WHERE admin AND active AND id <> ?", id).Scan(ctx, &others); err != nil {
		return dberr.Wrap("count the admins", err)
	}
	if others == 0 {
		return domain.ErrLastAdmin
	}
	return nil
}

// userWhere reads the user whose column equals value; lock locks the
// row on PostgreSQL (SQLite's IMMEDIATE transactions already hold the
// database).
func (r *UserRepository) userWhere(ctx context.Context, db bun.IDB, column, value string, lock bool) (domain.User, error) {
	query := "SELECT " + userColumns + " FROM users WHERE ? = ?"
	if lock {
		query += r.db.eng.ForUpdate()
	}
	var row userRow
	err := db.NewRaw(query, bun.Ident(column), value).Scan(ctx, &row)
	return userFrom(toDomainUser(row), err)
}

// userFrom is the answer of a read of one user that read u, or failed
// with err.
func userFrom(u domain.User, err error) (domain.User, error) {
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return domain.User{}, domain.ErrUserNotFound
	case err != nil:
		return domain.User{}, dberr.Wrap("read user", err)
	}
	return u, nil
}
