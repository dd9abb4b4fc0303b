package memstore_test

import (
	"testing"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/contract"
)

func TestRefreshStore(t *testing.T) {
	t.Parallel()
	contract.RefreshStore(t, func(*testing.T) ports.RefreshStore { return memstore.NewRefreshStore(nil) })
}

func TestRevocationFeed(t *testing.T) {
	t.Parallel()
	contract.RevocationFeed(t, func(*testing.T) contract.RevocationStore { return memstore.NewRefreshStore(nil) })
}

func TestSessionEvictor(t *testing.T) {
	t.Parallel()
	contract.SessionEvictor(t, func(*testing.T) contract.SessionBoundStore { return memstore.NewRefreshStore(nil) })
}
