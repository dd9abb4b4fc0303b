package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cachegate/cachegate/adapters/cli"
	"github.com/cachegate/cachegate/application"
	"github.com/cachegate/cachegate/domain"
)

// revokeRecorder is the application.SigningKeys of the keys commands: it
// records the kids it is asked to revoke.
type revokeRecorder struct{ revoked []string }

func (r *revokeRecorder) Rotate(context.Context, bool, ...domain.AuditEvent) (domain.SigningKey, error) {
	return domain.SigningKey{}, nil
}

func (r *revokeRecorder) Revoke(_ context.Context, kid string, _ ...domain.AuditEvent) error {
	r.revoked = append(r.revoked, kid)
	return nil
}

func (r *revokeRecorder) List(context.Context) ([]domain.SigningKey, error) { return nil, nil }

type fixedClock struct{}

func (fixedClock) Now() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }

// `keys revoke KID` takes a generated kid as it is (none begins with
// "-"), and "--" before the kid stays accepted, for a kid that begins
// with "-" (one stored by an older version).
func TestKeysRevokeTakesTheKidWithOrWithoutDashDash(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"keys", "revoke", "Zq3x9LvvLeM4zOwm"},
		{"keys", "revoke", "--", "Zq3x9LvvLeM4zOwm"},
		{"keys", "revoke", "--", "-LvvLeM4zOwmq1bA"},
	} {
		keys := &revokeRecorder{}
		admin, err := application.NewKeys(keys, fixedClock{}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := run(t, &fakeRuntime{services: cli.Services{Keys: admin}}, nil, args...)
		kid := args[len(args)-1]
		if code != 0 || len(keys.revoked) != 1 || keys.revoked[0] != kid || !strings.Contains(stdout, kid) {
			t.Errorf("%q: status %d, revoked %q, stdout %q, stderr %q; want 0 and %s revoked", args, code, keys.revoked, stdout, stderr, kid)
		}
	}
}
