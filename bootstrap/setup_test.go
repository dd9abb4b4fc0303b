package bootstrap

import "testing"

func TestSetUpLinkIsOnTheBoundAddressWithLoopbackForAnUnspecifiedHost(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]string{
		"127.0.0.1:8080": "http://127.0.0.1:8080/console/setup",
		"0.0.0.0:8080":   "http://127.0.0.1:8080/console/setup",
		"[::]:8080":      "http://127.0.0.1:8080/console/setup",
		"[::1]:9000":     "http://[::1]:9000/console/setup",
		"10.0.0.5:80":    "http://10.0.0.5:80/console/setup",
		"localhost:8080": "http://localhost:8080/console/setup",
		"not an address": "http://not an address/console/setup",
	} {
		if got := setupURL(addr); got != want {
			t.Errorf("setupURL(%q) = %q, want %q", addr, got, want)
		}
	}
}
