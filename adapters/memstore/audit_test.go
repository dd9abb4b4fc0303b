package memstore_test

import (
	"testing"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/contract"
)

func TestAuditLog(t *testing.T) {
	t.Parallel()
	contract.AuditLog(t, func(*testing.T) ports.AuditLog { return memstore.NewAuditLog() })
}

func TestAuditWithChanges(t *testing.T) {
	t.Parallel()
	contract.AuditWithChanges(t, func(*testing.T) contract.AuditStores {
		l := memstore.NewAuditLog()
		r := memstore.NewRefreshStore(l)
		u, k := memstore.NewUserRepository(l, r), memstore.NewKeyStore(l)
		return contract.AuditStores{Users: u, Refresh: r, Keys: k, Log: l}
	})
}

func TestAuditFold(t *testing.T) {
	t.Parallel()
	contract.AuditFold(t, func(*testing.T) contract.AuditFoldLog { return memstore.NewAuditLog() })
}
