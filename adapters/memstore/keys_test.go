package memstore_test

import (
	"testing"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/contract"
)

func TestKeyStore(t *testing.T) {
	t.Parallel()
	contract.KeyStore(t, func(*testing.T) ports.KeyStore { return memstore.NewKeyStore(nil) })
}
