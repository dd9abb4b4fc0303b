package bunstore_test

import (
	"testing"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/contract"
)

func TestAuthKeyStore(t *testing.T) {
	t.Parallel()
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bunstore.DB) {
		contract.KeyStore(t, func(t *testing.T) ports.KeyStore { return bunstore.NewKeyStore(newDB(t)) })
	})
}
