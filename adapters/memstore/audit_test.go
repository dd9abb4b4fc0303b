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
