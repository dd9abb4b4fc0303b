package memstore_test

import (
	"testing"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/test/contract"
)

func TestAdminStores(t *testing.T) {
	t.Parallel()
	contract.AdminStores(t, func(*testing.T) contract.AuditStores {
		l := memstore.NewAuditLog()
		r := memstore.NewRefreshStore(l)
		u, k := memstore.NewUserRepository(l, r), memstore.NewKeyStore(l)
		return contract.AuditStores{Users: u, Refresh: r, Keys: k, Log: l}
	})
}
