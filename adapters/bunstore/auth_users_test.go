package bunstore_test

import (
	"testing"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/contract"
)

func TestAuthUserRepository(t *testing.T) {
	t.Parallel()
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bunstore.DB) {
		contract.UserRepository(t, func(t *testing.T) ports.UserRepository { return bunstore.NewUserRepository(newDB(t)) })
	})
}
