package memstore_test

import (
	"testing"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/contract"
)

func TestUserRepository(t *testing.T) {
	t.Parallel()
	contract.UserRepository(t, func(*testing.T) ports.UserRepository { return memstore.NewUserRepository() })
}
