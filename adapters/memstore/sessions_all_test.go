package memstore_test

import (
	"testing"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/contract"
)

func TestSessionDirectory(t *testing.T) {
	t.Parallel()
	contract.SessionDirectory(t, func(*testing.T) ports.RefreshStore { return memstore.NewRefreshStore(nil) })
}
