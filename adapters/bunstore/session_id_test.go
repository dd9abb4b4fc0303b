package bunstore

import (
	"errors"
	"testing"

	"github.com/cachegate/cachegate/domain"
)

// TestASessionIDThatIsNoTextIsNotFound: a session id comes from a request
// path (DELETE /auth/sessions/<id>); one with a NUL or bytes that are not
// UTF-8 names no session, and never reaches the driver (it answered a
// 500 "unrecognized token" before).
func TestASessionIDThatIsNoTextIsNotFound(t *testing.T) {
	t.Parallel()
	db := openTestDB(t, "sqlite:"+t.TempDir()+"/sessions.db")
	if err := Migrate(t.Context(), db, []string{"user_cache"}); err != nil {
		t.Fatal(err)
	}
	s := NewRefreshStore(db)
	for _, id := range []string{"a\x00b", "\xff\xfe", "01a21b7a-84cd-73d0-a780-b3daf098f25f"} {
		if _, err := s.Session(t.Context(), id); !errors.Is(err, domain.ErrSessionNotFound) {
			t.Errorf("Session(%q) = %v, want ErrSessionNotFound", id, err)
		}
	}
}
