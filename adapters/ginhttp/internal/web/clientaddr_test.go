package web

import (
	"net/http"
	"testing"
)

func TestClientAddr(t *testing.T) {
	t.Parallel()
	trusted, err := ParseProxies([]string{"10.0.0.0/8", "192.0.2.1", " 2001:db8::/32 "})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		Proxies Proxies
		peer    string
		xff     []string
		want    string
	}{
		{"without trusted Proxies the peer is the client, whatever the header says", nil, "198.51.100.9:4000", []string{"203.0.113.5"}, "198.51.100.9"},
		{"an untrusted peer's header is ignored", trusted, "198.51.100.9:4000", []string{"203.0.113.5"}, "198.51.100.9"},
		{"a trusted peer without a header is the client", trusted, "10.1.2.3:4000", nil, "10.1.2.3"},
		{"a trusted peer's last hop is the client", trusted, "10.1.2.3:4000", []string{"203.0.113.5"}, "203.0.113.5"},
		{"the rightmost untrusted hop wins over what the client prepended", trusted, "10.1.2.3:4000",
			[]string{"1.1.1.1, 203.0.113.5, 10.9.9.9"}, "203.0.113.5"},
		{"hops of several header lines are read in order", trusted, "192.0.2.1:4000",
			[]string{"1.1.1.1", "203.0.113.5, 10.9.9.9"}, "203.0.113.5"},
		{"when every hop is trusted the leftmost is the client", trusted, "10.1.2.3:4000", []string{"10.0.0.5, 10.0.0.6"}, "10.0.0.5"},
		{"a hop that does not parse stops at the nearest trusted hop", trusted, "10.1.2.3:4000",
			[]string{"203.0.113.5, garbage, 10.0.0.6"}, "10.0.0.6"},
		{"hops with ports and IPv6 are read", trusted, "[2001:db8::1]:4000", []string{"[2001:db8::2]:1, 203.0.113.5:8080"}, "203.0.113.5"},
		{"an IPv4-mapped peer is IPv4", trusted, "[::ffff:10.1.2.3]:4000", []string{"203.0.113.5"}, "203.0.113.5"},
		{"an untrusted IPv4-mapped peer is logged as IPv4", nil, "[::ffff:198.51.100.9]:4000", nil, "198.51.100.9"},
		{"an untrusted IPv6 peer is canonical", nil, "[2001:DB8:0:0::1]:4000", nil, "2001:db8::1"},
		{"a zoned IPv6 peer loses its zone", nil, "[fe80::1%eth0]:4000", nil, "fe80::1"},
		{"a peer without a port is read", nil, "198.51.100.9", nil, "198.51.100.9"},
		{"a peer with a named port is read", nil, "198.51.100.9:http", nil, "198.51.100.9"},
		{"a peer that does not parse is kept as given", nil, "pipe", nil, "pipe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &http.Request{RemoteAddr: tc.peer, Header: http.Header{}}
			for _, v := range tc.xff {
				r.Header.Add(HeaderForwardedFor, v)
			}
			if got := tc.Proxies.ClientAddr(r); got != tc.want {
				t.Errorf("clientAddr = %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := ParseProxies([]string{"10.0.0.0/33"}); err == nil {
		t.Error("a bad CIDR was accepted")
	}
}

// TestClientAddrAllocs pins the cost of the usual case, a plain IPv4 TCP
// peer without trusted proxies: its address is the peer's own text.
func TestClientAddrAllocs(t *testing.T) {
	r := &http.Request{RemoteAddr: "198.51.100.9:4000", Header: http.Header{}}
	var ps Proxies
	if n := testing.AllocsPerRun(100, func() { _ = ps.ClientAddr(r) }); n != 0 {
		t.Errorf("ClientAddr allocates %v times per call, want 0", n)
	}
}
