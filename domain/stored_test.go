package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/domain"
)

// invalidField fails unless err is an invalid-value error naming field.
func invalidField(t *testing.T, err error, field string) {
	t.Helper()
	var de *domain.Error
	if !errors.As(err, &de) || de.Kind != domain.KindInvalid {
		t.Fatalf("error %v, want an invalid %s", err, field)
	}
	for _, d := range de.Details {
		if d.Field == field {
			return
		}
	}
	t.Fatalf("error %v does not name %s", err, field)
}

func TestUserValidateHoldsAStoredUserToTheRulesOfANewOne(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	good := domain.User{ID: "0190A000-0000-7000-8000-000000000001", Username: "alice",
		PasswordHash: "$2a$04$abcdefghijklmnopqrstuu5RxK6Xn8m8G6l2V7yVnqQ3R1V9X2dA6", DateCreated: at, DateUpdated: at}
	if err := good.Validate(); err != nil {
		t.Fatalf("a good user: %v", err)
	}
	for _, c := range []struct {
		name, field string
		change      func(*domain.User)
	}{
		{"an id that is not a UUID", "id", func(u *domain.User) { u.ID = "u1" }},
		{"a username with a line feed", "username", func(u *domain.User) { u.Username = "ctl\nname" }},
		{"a username with an escape sequence", "username", func(u *domain.User) { u.Username = "esc\x1b[2J" }},
		{"a username of 321 characters", "username", func(u *domain.User) { u.Username = strings.Repeat("a", 321) }},
		{"an empty password hash", "passwordHash", func(u *domain.User) { u.PasswordHash = "" }},
		{"a password hash not beginning with $", "passwordHash", func(u *domain.User) { u.PasswordHash = "plaintext" }},
		{"a password hash with a control character", "passwordHash", func(u *domain.User) { u.PasswordHash = "$2a$\n" }},
		{"a password hash of 513 bytes", "passwordHash", func(u *domain.User) { u.PasswordHash = "$" + strings.Repeat("a", 512) }},
		{"a salt of 513 bytes", "passwordSalt", func(u *domain.User) { u.PasswordSalt = strings.Repeat("a", 513) }},
		{"no creation date", "dateCreated", func(u *domain.User) { u.DateCreated = time.Time{} }},
	} {
		t.Run(c.name+" is refused", func(t *testing.T) {
			t.Parallel()
			u := good
			c.change(&u)
			invalidField(t, u.Validate(), c.field)
		})
	}
}

func TestStoredSessionsAndKeysAreHeldToTheirBounds(t *testing.T) {
	t.Parallel()
	fam := domain.RefreshFamily{ID: "0190a000-0000-7000-8000-000000000002", UserID: "0190a000-0000-7000-8000-000000000001",
		CurrentID: "0190a000-0000-7000-8000-000000000003", Address: "192.0.2.1", UserAgent: "curl/8"}
	key := domain.SigningKey{ID: "kid-1", Algorithm: "EdDSA", Private: make([]byte, 32), Public: make([]byte, 32), DateCreated: time.Now()}
	if err := fam.Validate(); err != nil {
		t.Fatalf("a good family: %v", err)
	}
	if err := key.Validate(); err != nil {
		t.Fatalf("a good key: %v", err)
	}
	for _, c := range []struct {
		name, field string
		err         func() error
	}{
		{"a family of a user id that is not a UUID", "userId", func() error { f := fam; f.UserID = "bob"; return f.Validate() }},
		{"a family with a user agent over 256 bytes", "userAgent", func() error { f := fam; f.UserAgent = strings.Repeat("x", 257); return f.Validate() }},
		{"a family with an address holding NUL", "address", func() error { f := fam; f.Address = "a\x00"; return f.Validate() }},
		{"a family with a used token id of 256 characters", "used.id", func() error {
			f := fam
			f.Used = []domain.UsedRefresh{{ID: strings.Repeat("u", 256)}}
			return f.Validate()
		}},
		{"a key of an unknown algorithm", "algorithm", func() error { k := key; k.Algorithm = "none"; return k.Validate() }},
		{"a key over 64 KiB", "private", func() error { k := key; k.Private = make([]byte, 64<<10+1); return k.Validate() }},
		{"a key without an id", "id", func() error { k := key; k.ID = ""; return k.Validate() }},
		{"a version 1 token of a user id that is not a UUID", "userId", func() error {
			return domain.RefreshRecord{ID: "r", FamilyID: "f", UserID: "u1"}.Validate()
		}},
	} {
		t.Run(c.name+" is refused", func(t *testing.T) {
			t.Parallel()
			invalidField(t, c.err(), c.field)
		})
	}
}
