package bunstore_test

import (
	"testing"

	"github.com/uptrace/bun"

	"github.com/cachegate/cachegate/adapters/bunstore"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/contract"
)

func TestAuthLoginThrottle(t *testing.T) {
	t.Parallel()
	authForEachEngine(t, func(t *testing.T, newDB func(*testing.T) *bun.DB) {
		contract.LoginThrottle(t, func(t *testing.T) ports.LoginThrottle { return bunstore.NewLoginThrottle(newDB(t)) })
	})
}
