package bootstrap_test

import (
	"testing"

	"github.com/cachegate/cachegate/adapters/ginhttp/limits"
	"github.com/cachegate/cachegate/bootstrap"
	"github.com/cachegate/cachegate/bootstrap/config"
)

// The configuration's 0 turns a cap off; ginhttp's zero would mean its
// default, so HTTPOptions must not pass it on as zero.
func TestHTTPOptionsCarryTheCallerCaps(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	if got, want := bootstrap.HTTPOptions(cfg).Limits, (limits.Options{ListsPerUser: 4, StreamsPerUser: 16,
		ConnsPerAddress: 256}); got != want {
		t.Errorf("defaults: %+v, want %+v", got, want)
	}
	cfg.Caps = config.Caps{ListsPerUser: 0, StreamsPerUser: 5, ConnsPerAddress: 0}
	if got, want := bootstrap.HTTPOptions(cfg).Limits, (limits.Options{ListsPerUser: -1, StreamsPerUser: 5,
		ConnsPerAddress: -1}); got != want {
		t.Errorf("0 (no cap): %+v, want %+v", got, want)
	}
}
