package memstore_test

import (
	"testing"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/contract"
)

func TestLoginThrottle(t *testing.T) {
	t.Parallel()
	contract.LoginThrottle(t, func(*testing.T) ports.LoginThrottle { return memstore.NewLoginThrottle() })
}

func TestLoginBurst(t *testing.T) {
	t.Parallel()
	contract.LoginBurst(t, func(*testing.T) []ports.LoginThrottle { return []ports.LoginThrottle{memstore.NewLoginThrottle()} })
}
