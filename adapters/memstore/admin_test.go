package memstore_test

import (
	"testing"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/test/contract"
)

func TestAdminStores(t *testing.T) {
	t.Parallel()
	contract.AdminStores(t, func(*testing.T) contract.AuditStores {
		l, u, r, k := memstore.NewAuditLog(), memstore.NewUserRepository(), memstore.NewRefreshStore(), memstore.NewKeyStore()
		u.SetAuditLog(l)
		u.SetRefreshStore(r)
		r.SetAuditLog(l)
		k.SetAuditLog(l)
		return contract.AuditStores{Users: u, Refresh: r, Keys: k, Log: l}
	})
}
