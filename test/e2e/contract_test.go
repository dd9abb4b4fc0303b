package e2e

import (
	"path/filepath"
	"testing"

	"github.com/cachegate/cachegate/domain"
	"github.com/cachegate/cachegate/test/contract"
	"github.com/cachegate/cachegate/test/pgtest"
)

// contractYAML is publicYAML plus an assignment with a small quota.
const contractYAML = `cache:
  entities:
    userCache: {}
    orgCache: {}
    smallCache: {}
  settings:
    assignments:
      user: {entityKey: userCache, policy: public}
      org: {entityKey: orgCache, policy: public}
      small: {entityKey: smallCache, policy: public, maxEntries: 4, maxBytes: 4KiB}
`

// The HTTP contract of the cache routes, against the real binary on each
// database it supports. The service runs on the real clock, so the suite
// waits for its one-second expiry.
func TestCacheHTTPContractOnTheBinary(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		database func(t *testing.T, dir string) string
	}{
		{"on a SQLite file", func(_ *testing.T, dir string) string {
			return "sqlite:" + filepath.Join(dir, "contract.db")
		}},
		{"on PostgreSQL", func(t *testing.T, _ string) string { return pgtest.New(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			contract.CacheHTTP(t, func(t *testing.T) contract.CacheHTTPTarget {
				dir := t.TempDir()
				s := startServer(t, serverConfig{Dir: dir, YAML: contractYAML,
					Args: []string{"--database", tc.database(t, dir)}})
				return contract.CacheHTTPTarget{BaseURL: s.URL, Assignments: []string{"user", "org"},
					Client: newClient(), QuotaAssignment: "small", Quota: domain.Quota{MaxEntries: 4, MaxBytes: 4 << 10}}
			})
		})
	}
}
