package e2e

import (
	"net/http"
	"testing"
	"time"

	"github.com/cachegate/cachegate/test/contract"
)

// The user commands end sessions while the server runs: `users
// set-password` revokes every refresh family (sessions started with the
// old password end) and `users disable` shuts the user out within the
// guard's one-second memory; `users enable` lets the user log in again but
// brings no revoked session back.
func TestUserCommandsEndSessionsOfARunningServer(t *testing.T) {
	t.Parallel()
	for _, db := range authDatabases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			b := newAuthBinary(t, db, contract.AuthHTTPConfig{UsernameLimit: 10, AddressLimit: 100})
			const oldPassword, newPassword = "old-password-123", "new-password-456"
			b.addUser(t, "sam", oldPassword, true)
			base := b.srv.URL
			refresh := func(t *testing.T, tok string) int {
				t.Helper()
				return mustSend(t, b.client, http.MethodPost, base+"/auth/refresh", []byte(`{"refreshToken":"`+tok+`"}`)).Status
			}
			login := func(t *testing.T, password string) int {
				t.Helper()
				return mustSend(t, b.client, http.MethodPost, base+"/auth/login",
					[]byte(`{"username":"sam","password":"`+password+`"}`)).Status
			}

			t.Run("set-password revokes the user's refresh tokens", func(t *testing.T) {
				p := loginAt(t, b.client, base, "sam", oldPassword)
				if r := b.cli(t, newPassword+"\n", "users", "set-password", "sam", "--password-stdin"); r.Code != 0 {
					t.Fatalf("users set-password: status %d, stderr %q", r.Code, r.Stderr)
				}
				if s := refresh(t, p.Refresh); s != http.StatusUnauthorized {
					t.Errorf("a refresh token from before the new password answered %d, want 401", s)
				}
				if s := login(t, oldPassword); s != http.StatusUnauthorized {
					t.Errorf("the old password answered %d, want 401", s)
				}
				if s := login(t, newPassword); s != http.StatusCreated {
					t.Errorf("the new password answered %d, want 201", s)
				}
			})

			t.Run("disable shuts the user out and enable lets it back in", func(t *testing.T) {
				p := loginAt(t, b.client, base, "sam", newPassword)
				wantOpen(t, b, p.Access, "the access token before disabling")
				b.disableUser(t, "sam")
				if s := refresh(t, p.Refresh); s != http.StatusUnauthorized {
					t.Errorf("a disabled user's refresh answered %d, want 401", s)
				}
				deadline := time.Now().Add(10 * time.Second)
				for {
					r := mustSend(t, b.client, http.MethodGet, base+"/cache/user", nil, "Authorization", "Bearer "+p.Access)
					if r.Status == http.StatusUnauthorized {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("a disabled user's access token still answers %d 10 s later", r.Status)
					}
					time.Sleep(100 * time.Millisecond)
				}
				if r := b.cli(t, "", "users", "enable", "sam"); r.Code != 0 {
					t.Fatalf("users enable: status %d, stderr %q", r.Code, r.Stderr)
				}
				if s := refresh(t, p.Refresh); s != http.StatusUnauthorized {
					t.Errorf("a refresh token revoked by disabling answered %d after enabling, want 401", s)
				}
				q := loginAt(t, b.client, base, "sam", newPassword)
				wantOpen(t, b, q.Access, "a new login after enabling")
			})
		})
	}
}
