package bunstore_test

import (
	"path/filepath"
	"testing"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/contract"
	"github.com/cachegate/cachegate/test/pgtest"
)

func TestAuthLoginThrottle(t *testing.T) {
	t.Parallel()
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bunstore.DB) {
		contract.LoginThrottle(t, func(t *testing.T) ports.LoginThrottle { return bunstore.NewLoginThrottle(newDB(t)) })
	})
}

// TestAuthLoginBurst runs the bursts against two handles on one database:
// two replicas on PostgreSQL, two processes' pools on one SQLite file.
func TestAuthLoginBurst(t *testing.T) {
	t.Parallel()
	replicas := func(dsn func(t *testing.T) string) func(t *testing.T) []ports.LoginThrottle {
		return func(t *testing.T) []ports.LoginThrottle {
			d := dsn(t)
			return []ports.LoginThrottle{bunstore.NewLoginThrottle(authOpen(t, d)), bunstore.NewLoginThrottle(authOpen(t, d))}
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		contract.LoginBurst(t, replicas(func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "auth.db") }))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		contract.LoginBurst(t, replicas(func(t *testing.T) string { return pgtest.New(t) }))
	})
}
