package application

import (
	"context"
	"errors"
	"fmt"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// RepoUserLookup is the default ports.UserLookup: local users from a
// ports.UserRepository.
type RepoUserLookup struct {
	Users ports.UserRepository
}

// ByUsername implements ports.UserLookup.
func (l RepoUserLookup) ByUsername(ctx context.Context, username string) (domain.User, error) {
	return l.Users.UserByUsername(ctx, username)
}

// BySubject implements ports.UserLookup; an inactive user is
// domain.ErrUserNotFound.
func (l RepoUserLookup) BySubject(ctx context.Context, subject string) (domain.Principal, error) {
	if !domain.IsUUID(subject) {
		return domain.Principal{}, domain.ErrUserNotFound
	}
	u, err := l.Users.UserByID(ctx, subject)
	if err != nil {
		return domain.Principal{}, err
	}
	if !u.Active {
		return domain.Principal{}, domain.ErrUserNotFound
	}
	return domain.Principal{ID: u.ID, Username: u.Username, Admin: u.Admin}, nil
}

// dummyPassword is hashed once so that a login for an unknown user spends
// the same time in the password check as a wrong password does.
const dummyPassword = "cachegate: no such user, same cost"

// errUnknownUser is domain.ErrUnauthenticated for a username nobody has,
// told apart only for the audit trail's reason.
var errUnknownUser = fmt.Errorf("%w: unknown user", domain.ErrUnauthenticated)

// CredentialValidator is the default ports.UserValidator: it finds the
// user with a ports.UserLookup and checks the password with a
// ports.PasswordValidator.
type CredentialValidator struct {
	lookup    ports.UserLookup
	passwords ports.PasswordValidator
	dummy     string
}

// NewCredentialValidator returns the default validator. hasher makes the
// dummy hash compared for unknown users.
func NewCredentialValidator(ctx context.Context, lookup ports.UserLookup, passwords ports.PasswordValidator, hasher ports.PasswordHasher) (*CredentialValidator, error) {
	if lookup == nil || passwords == nil || hasher == nil {
		return nil, errors.New("credential validator needs a lookup, a password validator and a hasher")
	}
	dummy, _, err := hasher.Hash(ctx, dummyPassword)
	if err != nil {
		return nil, fmt.Errorf("hash the dummy password: %w", err)
	}
	return &CredentialValidator{lookup: lookup, passwords: passwords, dummy: dummy}, nil
}

// ValidateUser implements ports.UserValidator.
func (v *CredentialValidator) ValidateUser(ctx context.Context, in ports.LoginInput) (domain.User, error) {
	u, err := v.lookup.ByUsername(ctx, in.Username)
	if errors.Is(err, domain.ErrUserNotFound) {
		_, _ = v.passwords.Validate(ctx, ports.PasswordCheck{Password: in.Password, PasswordHash: v.dummy})
		return domain.User{}, errUnknownUser
	}
	if err != nil {
		return domain.User{}, fmt.Errorf("look up user: %w", err)
	}
	ok, err := v.passwords.ValidateObject(ctx, in.Password, u)
	if err != nil {
		return domain.User{}, fmt.Errorf("validate password: %w", err)
	}
	if !ok {
		return domain.User{}, domain.ErrUnauthenticated
	}
	return u, nil
}

// IsActive implements ports.UserValidator.
func (v *CredentialValidator) IsActive(_ context.Context, u domain.User) (bool, error) {
	return u.Active, nil
}
