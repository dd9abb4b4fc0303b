package bunstore_test

import (
	"testing"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/contract"
)

func TestAuthAuditLog(t *testing.T) {
	t.Parallel()
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bun.DB) {
		contract.AuditLog(t, func(t *testing.T) ports.AuditLog { return bunstore.NewAuditLog(newDB(t)) })
	})
}

func TestAuthAuditWithChanges(t *testing.T) {
	t.Parallel()
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bun.DB) {
		contract.AuditWithChanges(t, func(t *testing.T) contract.AuditStores {
			db := newDB(t)
			return contract.AuditStores{Users: bunstore.NewUserRepository(db), Refresh: bunstore.NewRefreshStore(db),
				Keys: bunstore.NewKeyStore(db), Log: bunstore.NewAuditLog(db)}
		})
	})
}

func TestAuthAuditFold(t *testing.T) {
	t.Parallel()
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bun.DB) {
		contract.AuditFold(t, func(t *testing.T) contract.AuditFoldLog { return bunstore.NewAuditLog(newDB(t)) })
	})
}
