package bunstore_test

import (
	"testing"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/contract"
)

// TestSessionDirectory runs the contract on SQLite and, with
// CACHEGATE_TEST_POSTGRES, on PostgreSQL.
func TestSessionDirectory(t *testing.T) {
	t.Parallel()
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bun.DB) {
		contract.SessionDirectory(t, func(t *testing.T) ports.RefreshStore { return bunstore.NewRefreshStore(newDB(t)) })
	})
}
