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
		l, u, r := memstore.NewAuditLog(), memstore.NewUserRepository(), memstore.NewRefreshStore()
		u.SetAuditLog(l)
		r.SetAuditLog(l)
		return contract.AuditStores{Users: u, Refresh: r, Log: l}
	})
}
