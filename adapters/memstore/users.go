package memstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// UserRepository is an in-memory ports.UserRepository, safe for
// concurrent use.
type UserRepository struct {
	mu       sync.Mutex
	byID     map[string]domain.User
	byName   map[string]string // normalized username → id
	audit    *AuditLog
	sessions *RefreshStore
}

var _ ports.UserRepository = (*UserRepository)(nil)

// NewUserRepository returns an empty repository whose changes append their
// events to audit and end sessions in sessions, under its lock. Either may
// be nil: a change that needs it then fails.
func NewUserRepository(audit *AuditLog, sessions *RefreshStore) *UserRepository {
	return &UserRepository{byID: map[string]domain.User{}, byName: map[string]string{}, audit: audit, sessions: sessions}
}

// CreateUser implements ports.UserRepository. A second user with an id
// already stored is an error (ids are the caller's to make unique).
func (r *UserRepository) CreateUser(_ context.Context, u domain.User, events ...domain.AuditEvent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := eventsSink(r.audit, "create user", events); err != nil {
		return err
	}
	norm := domain.NormalizeUsername(u.Username)
	if _, taken := r.byName[norm]; taken {
		return domain.ErrUserExists
	}
	if _, taken := r.byID[u.ID]; taken {
		return fmt.Errorf("memstore: create user: id %q is already stored", u.ID)
	}
	r.byID[u.ID] = authUser(u)
	r.byName[norm] = u.ID
	r.audit.appendEvents(events)
	return nil
}

// UserByUsername implements ports.UserRepository.
func (r *UserRepository) UserByUsername(_ context.Context, username string) (domain.User, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, ok := r.byName[domain.NormalizeUsername(username)]
	if !ok {
		return domain.User{}, domain.ErrUserNotFound
	}
	return r.byID[id], nil
}

// UserByID implements ports.UserRepository.
func (r *UserRepository) UserByID(_ context.Context, id string) (domain.User, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	u, ok := r.byID[id]
	if !ok {
		return domain.User{}, domain.ErrUserNotFound
	}
	return u, nil
}

// ListUsers implements ports.UserDirectory, ordering normalized usernames
// byte by byte as the database stores do.
func (r *UserRepository) ListUsers(context.Context) ([]domain.User, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Collect(maps.Values(r.byID))
	slices.SortFunc(out, func(a, b domain.User) int {
		return cmp.Compare(domain.NormalizeUsername(a.Username), domain.NormalizeUsername(b.Username))
	})
	return out, nil
}

// UpdateUser implements ports.UserRepository under the repository's lock;
// a rename onto a taken username is domain.ErrUserExists. fn cannot change
// the id and keeps DateUpdated current itself.
func (r *UserRepository) UpdateUser(ctx context.Context, id string, fn func(*domain.User) error, events ...domain.AuditEvent) (domain.User, error) {
	return r.update(ctx, id, nil, fn, events)
}

// UpdateUserEndingSessions implements ports.UserRepository; without a
// refresh store attached (NewUserRepository) it fails and changes nothing.
func (r *UserRepository) UpdateUserEndingSessions(ctx context.Context, id string, now time.Time, fn func(*domain.User) error, events ...domain.AuditEvent) (domain.User, error) {
	return r.update(ctx, id, &now, fn, events)
}

// update is UpdateUser, revoking the user's families at *endSessions when
// it is set. Locks are taken in the order users, refresh tokens, audit log.
func (r *UserRepository) update(ctx context.Context, id string, endSessions *time.Time, fn func(*domain.User) error, events []domain.AuditEvent) (domain.User, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if endSessions != nil && r.sessions == nil {
		return domain.User{}, errors.New("memstore: update user: no refresh store attached to end the user's sessions (NewUserRepository)")
	}
	if err := eventsSink(r.audit, "update user", events); err != nil {
		return domain.User{}, err
	}
	old, ok := r.byID[id]
	if !ok {
		return domain.User{}, domain.ErrUserNotFound
	}
	u := old
	if err := fn(&u); err != nil {
		return domain.User{}, err
	}
	if old.ActiveAdmin() && !u.ActiveAdmin() && !r.otherActiveAdmin(id) {
		return domain.User{}, domain.ErrLastAdmin
	}
	u.ID = id
	u = authUser(u)
	oldNorm, newNorm := domain.NormalizeUsername(old.Username), domain.NormalizeUsername(u.Username)
	if _, taken := r.byName[newNorm]; taken && newNorm != oldNorm {
		return domain.User{}, domain.ErrUserExists
	}
	// Nothing fails past the revocation, so all or nothing is stored.
	if endSessions != nil {
		if err := r.sessions.RevokeUser(ctx, id, *endSessions); err != nil {
			return domain.User{}, err
		}
	}
	delete(r.byName, oldNorm)
	r.byName[newNorm] = id
	r.byID[id] = u
	r.audit.appendEvents(events)
	return u, nil
}

// otherActiveAdmin reports whether an active admin other than the user
// id exists; the caller holds r.mu, so the check and the change it
// guards are one step (docs/admin.md: at least one active admin remains).
func (r *UserRepository) otherActiveAdmin(id string) bool {
	for _, u := range r.byID {
		if u.ID != id && u.ActiveAdmin() {
			return true
		}
	}
	return false
}

// authUser returns u with its times as a database returns them.
func authUser(u domain.User) domain.User {
	u.DateCreated = domain.Normalize(u.DateCreated)
	u.DateUpdated = domain.Normalize(u.DateUpdated)
	return u
}
