package memstore_test

import (
	"testing"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/contract"
)

func TestCacheRepository(t *testing.T) {
	t.Parallel()
	contract.CacheRepository(t, func(*testing.T) ports.CacheRepository { return memstore.NewChangeLog().Repository("cache") })
}
