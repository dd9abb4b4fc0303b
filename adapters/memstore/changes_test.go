package memstore_test

import (
	"testing"

	"github.com/cachegate/cachegate/adapters/memstore"
	"github.com/cachegate/cachegate/ports"
	"github.com/cachegate/cachegate/test/contract"
)

func TestChangeLog(t *testing.T) {
	t.Parallel()
	contract.ChangeLog(t, func(*testing.T) contract.ChangeStore {
		l := memstore.NewChangeLog()
		repos := map[string]ports.CacheRepository{"a": l.Repository("a"), "b": l.Repository("b")}
		return contract.ChangeStore{Log: l, Repo: func(n string) ports.CacheRepository { return repos[n] },
			Entity: func(n string) string { return n }}
	})
}
