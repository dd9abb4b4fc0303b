package contract

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/ports"
)

// UserRepository runs the contract of ports.UserRepository. newRepo must
// return an empty repository of its own on every call; subtests run in
// parallel.
func UserRepository(t *testing.T, newRepo func(t *testing.T) ports.UserRepository) {
	t.Helper()

	t.Run("a created user reads back by id and by username, field for field", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		want := authUser("u1", "Alice")
		want.PasswordSalt = "pepper"
		want.Active = false
		if err := repo.CreateUser(t.Context(), want); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		got, err := repo.UserByID(t.Context(), "u1")
		if err != nil {
			t.Fatalf("UserByID: %v", err)
		}
		authWantUser(t, got, want)
		got, err = repo.UserByUsername(t.Context(), "Alice")
		if err != nil {
			t.Fatalf("UserByUsername: %v", err)
		}
		authWantUser(t, got, want)
	})

	t.Run("times come back in UTC, truncated to the microsecond", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		u := authUser("u1", "alice")
		zone := time.FixedZone("UTC+2", 2*60*60)
		u.DateCreated = time.Date(2031, 5, 6, 7, 8, 9, 123456789, zone)
		u.DateUpdated = time.Date(1999, 12, 31, 23, 59, 59, 999999999, zone)
		if err := repo.CreateUser(t.Context(), u); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		got, err := repo.UserByID(t.Context(), "u1")
		if err != nil {
			t.Fatalf("UserByID: %v", err)
		}
		want := u
		want.DateCreated = time.Date(2031, 5, 6, 5, 8, 9, 123456000, time.UTC)
		want.DateUpdated = time.Date(1999, 12, 31, 21, 59, 59, 999999000, time.UTC)
		authWantUser(t, got, want)
	})

	t.Run("username lookup ignores case and surrounding spaces but keeps the name as given", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		if err := repo.CreateUser(t.Context(), authUser("u1", "Alice")); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		for _, name := range []string{"alice", "ALICE", "  aLiCe \t"} {
			got, err := repo.UserByUsername(t.Context(), name)
			if err != nil {
				t.Fatalf("UserByUsername(%q): %v", name, err)
			}
			if got.ID != "u1" || got.Username != "Alice" {
				t.Errorf("UserByUsername(%q) = %q named %q, want u1 named Alice", name, got.ID, got.Username)
			}
		}
	})

	t.Run("a username differing only in case or spaces is taken", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		if err := repo.CreateUser(t.Context(), authUser("u1", "Alice")); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		for i, name := range []string{"Alice", "alice ", " ALICE"} {
			err := repo.CreateUser(t.Context(), authUser(fmt.Sprintf("u%d", i+2), name))
			if !errors.Is(err, domain.ErrUserExists) || domain.KindOf(err) != domain.KindConflict {
				t.Errorf("CreateUser(%q) = %v, want ErrUserExists", name, err)
			}
		}
		if users, err := listUsers(t, repo); err != nil || len(users) != 1 {
			t.Errorf("ListUsers = %d users, %v; want only the first", len(users), err)
		}
	})

	t.Run("unknown users are not found", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		if err := repo.CreateUser(t.Context(), authUser("u1", "alice")); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		if _, err := repo.UserByID(t.Context(), "u2"); !errors.Is(err, domain.ErrUserNotFound) {
			t.Errorf("UserByID(unknown) = %v, want ErrUserNotFound", err)
		}
		if _, err := repo.UserByUsername(t.Context(), "bob"); !errors.Is(err, domain.ErrUserNotFound) {
			t.Errorf("UserByUsername(unknown) = %v, want ErrUserNotFound", err)
		}
		if _, err := repo.UserByID(t.Context(), "alice"); !errors.Is(err, domain.ErrUserNotFound) {
			t.Errorf("UserByID(a username) = %v, want ErrUserNotFound", err)
		}
	})

	t.Run("users are listed by normalized username", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		if users, err := listUsers(t, repo); err != nil || len(users) != 0 {
			t.Fatalf("ListUsers on an empty store = %d users, %v; want none", len(users), err)
		}
		for i, name := range []string{"carol", "Bob", "alice", "Ärni", "bobby"} {
			if err := repo.CreateUser(t.Context(), authUser(fmt.Sprintf("u%d", i), name)); err != nil {
				t.Fatalf("CreateUser(%q): %v", name, err)
			}
		}
		users, err := listUsers(t, repo)
		if err != nil {
			t.Fatalf("ListUsers: %v", err)
		}
		var names []string
		for _, u := range users {
			names = append(names, u.Username)
		}
		// Byte order of the normalized names: "ä" sorts after every ASCII letter.
		if got, want := strings.Join(names, ","), "alice,Bob,bobby,carol,Ärni"; got != want {
			t.Errorf("ListUsers order = %s, want %s", got, want)
		}
	})

	t.Run("an update stores what fn made and returns it", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		u := authUser("u1", "alice")
		if err := repo.CreateUser(t.Context(), u); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		want := u
		want.PasswordHash = "$2b$12$changed"
		want.PasswordSalt = "s"
		want.Active = false
		want.DateUpdated = u.DateUpdated.Add(time.Hour + time.Microsecond)
		got, err := repo.UpdateUser(t.Context(), "u1", func(u *domain.User) error {
			authWantUser(t, *u, authUser("u1", "alice"))
			u.PasswordHash, u.PasswordSalt, u.Active, u.DateUpdated = want.PasswordHash, want.PasswordSalt, false, want.DateUpdated
			return nil
		})
		if err != nil {
			t.Fatalf("UpdateUser: %v", err)
		}
		authWantUser(t, got, want)
		stored, err := repo.UserByID(t.Context(), "u1")
		if err != nil {
			t.Fatalf("UserByID: %v", err)
		}
		authWantUser(t, stored, want)
	})

	t.Run("updating an unknown user is not found and does not call fn", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		called := false
		_, err := repo.UpdateUser(t.Context(), "nobody", func(*domain.User) error { called = true; return nil })
		if !errors.Is(err, domain.ErrUserNotFound) || called {
			t.Errorf("UpdateUser(unknown) = %v, fn called %v; want ErrUserNotFound, not called", err, called)
		}
	})

	t.Run("an error from fn comes back and nothing is stored", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		u := authUser("u1", "alice")
		if err := repo.CreateUser(t.Context(), u); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		refused := errors.New("refused")
		_, err := repo.UpdateUser(t.Context(), "u1", func(u *domain.User) error {
			u.PasswordHash = "changed"
			return refused
		})
		if !errors.Is(err, refused) {
			t.Errorf("UpdateUser = %v, want fn's error", err)
		}
		got, err := repo.UserByID(t.Context(), "u1")
		if err != nil {
			t.Fatalf("UserByID: %v", err)
		}
		authWantUser(t, got, u)
	})

	t.Run("renaming moves the username lookup", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		if err := repo.CreateUser(t.Context(), authUser("u1", "alice")); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		if _, err := repo.UpdateUser(t.Context(), "u1", func(u *domain.User) error { u.Username = "Alicia"; return nil }); err != nil {
			t.Fatalf("UpdateUser: %v", err)
		}
		if _, err := repo.UserByUsername(t.Context(), "alice"); !errors.Is(err, domain.ErrUserNotFound) {
			t.Errorf("old username: %v, want ErrUserNotFound", err)
		}
		if got, err := repo.UserByUsername(t.Context(), "ALICIA"); err != nil || got.ID != "u1" {
			t.Errorf("new username: %q, %v; want u1", got.ID, err)
		}
		if err := repo.CreateUser(t.Context(), authUser("u2", "alice")); err != nil {
			t.Errorf("CreateUser with the freed username: %v", err)
		}
	})

	t.Run("renaming onto a taken username is a conflict and changes nothing", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		alice, bob := authUser("u1", "alice"), authUser("u2", "bob")
		for _, u := range []domain.User{alice, bob} {
			if err := repo.CreateUser(t.Context(), u); err != nil {
				t.Fatalf("CreateUser: %v", err)
			}
		}
		_, err := repo.UpdateUser(t.Context(), "u2", func(u *domain.User) error {
			u.Username, u.PasswordHash = " Alice", "changed"
			return nil
		})
		if !errors.Is(err, domain.ErrUserExists) || domain.KindOf(err) != domain.KindConflict {
			t.Errorf("UpdateUser = %v, want ErrUserExists", err)
		}
		got, err := repo.UserByID(t.Context(), "u2")
		if err != nil {
			t.Fatalf("UserByID: %v", err)
		}
		authWantUser(t, got, bob)
	})

	t.Run("fn cannot move a user to another id", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		if err := repo.CreateUser(t.Context(), authUser("u1", "alice")); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		got, err := repo.UpdateUser(t.Context(), "u1", func(u *domain.User) error { u.ID = "u9"; return nil })
		if err != nil || got.ID != "u1" {
			t.Fatalf("UpdateUser = %q, %v; want u1", got.ID, err)
		}
		if _, err := repo.UserByID(t.Context(), "u1"); err != nil {
			t.Errorf("UserByID(u1): %v", err)
		}
		if _, err := repo.UserByID(t.Context(), "u9"); !errors.Is(err, domain.ErrUserNotFound) {
			t.Errorf("UserByID(u9) = %v, want ErrUserNotFound", err)
		}
	})

	t.Run("concurrent updates of one user lose none of the changes", func(t *testing.T) {
		t.Parallel()
		repo := newRepo(t)
		if err := repo.CreateUser(t.Context(), authUser("u1", "alice")); err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		const n = 10
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for range n {
			wg.Go(func() {
				_, err := repo.UpdateUser(t.Context(), "u1", func(u *domain.User) error { u.PasswordSalt += "x"; return nil })
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("UpdateUser: %v", err)
			}
		}
		got, err := repo.UserByID(t.Context(), "u1")
		if err != nil {
			t.Fatalf("UserByID: %v", err)
		}
		if got.PasswordSalt != strings.Repeat("x", n) {
			t.Errorf("after %d concurrent appends the salt is %q", n, got.PasswordSalt)
		}
	})
}

// authUser returns an active user with the given id and username.
func authUser(id, username string) domain.User {
	return domain.User{
		ID:           id,
		Username:     username,
		PasswordHash: "$2b$04$abcdefghijklmnopqrstuuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0",
		Active:       true,
		DateCreated:  authT0,
		DateUpdated:  authT0.Add(time.Second),
	}
}

// authWantUser fails t unless got equals want field by field, with got's
// times in UTC.
func authWantUser(t *testing.T, got, want domain.User) {
	t.Helper()
	authWantUTC(t, "DateCreated", got.DateCreated)
	authWantUTC(t, "DateUpdated", got.DateUpdated)
	if got.ID != want.ID || got.Username != want.Username || got.PasswordHash != want.PasswordHash ||
		got.PasswordSalt != want.PasswordSalt || got.Active != want.Active ||
		!got.DateCreated.Equal(want.DateCreated) || !got.DateUpdated.Equal(want.DateUpdated) {
		t.Errorf("user = %+v\nwant   %+v", got, want)
	}
}

// listUsers lists every user of repo, which must be a
// ports.UserDirectory.
func listUsers(t *testing.T, repo ports.UserRepository) ([]domain.User, error) {
	t.Helper()
	dir, ok := repo.(ports.UserDirectory)
	if !ok {
		t.Fatal("the user repository is no ports.UserDirectory")
	}
	return dir.ListUsers(t.Context())
}
