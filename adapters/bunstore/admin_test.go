package bunstore_test

import (
	"testing"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/test/contract"
)

func TestAdminStores(t *testing.T) {
	t.Parallel()
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bunstore.DB) {
		contract.AdminStores(t, func(t *testing.T) contract.AuditStores {
			db := newDB(t)
			return contract.AuditStores{Users: bunstore.NewUserRepository(db), Refresh: bunstore.NewRefreshStore(db),
				Keys: bunstore.NewKeyStore(db), Log: bunstore.NewAuditLog(db)}
		})
	})
}
