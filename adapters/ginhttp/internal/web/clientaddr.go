package web

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// HeaderForwardedFor is the only header a trusted proxy's client address
// is read from.
const HeaderForwardedFor = "X-Forwarded-For"

// Proxies are the networks whose X-Forwarded-For is believed
// (docs/operations.md, "PostgreSQL and several replicas").
type Proxies []netip.Prefix

// ParseProxies reads addresses ("10.0.0.7") and CIDRs ("10.0.0.0/8").
func ParseProxies(list []string) (Proxies, error) {
	var out Proxies
	for _, s := range list {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an IP address nor a CIDR", s)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// Trusted reports whether a is a trusted proxy.
func (ps Proxies) Trusted(a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientAddr is the address a request is throttled and logged under: the
// TCP peer's, unless the peer is a trusted proxy; then the rightmost hop
// of X-Forwarded-For (every line, in order) that is not one, so a client
// cannot choose its address by sending the header itself. When every hop
// is trusted the leftmost is the client; when a hop does not parse, the
// nearest trusted hop before it is used.
func (ps Proxies) ClientAddr(r *http.Request) string {
	peer, ok := ParseHop(r.RemoteAddr)
	if !ok {
		return r.RemoteAddr
	}
	if len(ps) == 0 || !ps.Trusted(peer) {
		return addrString(peer, r.RemoteAddr)
	}
	hops := strings.Split(strings.Join(r.Header.Values(HeaderForwardedFor), ","), ",")
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		hop, ok := ParseHop(hops[i])
		if !ok {
			break
		}
		client = hop
		if !ps.Trusted(hop) {
			break
		}
	}
	return client.String()
}

// ParseHop reads "ip", "ip:port" or "[ipv6]:port", IPv4-mapped IPv6
// addresses as IPv4.
func ParseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	// The usual form, a TCP peer's "ip:port" (http.Request.RemoteAddr),
	// is read first without the failed whole-string parse below; any
	// string it accepts the general path reads as the same address.
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone(""), true
	}
	host, _, err := net.SplitHostPort(s)
	if err != nil {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

// addrString is a.String(), reusing the host part of hop ("ip" or
// "ip:port", as ParseHop read it) when that is already a's canonical text,
// so that the common case of a plain IPv4 peer builds no new string.
func addrString(a netip.Addr, hop string) string {
	host := hop
	if i := strings.LastIndexByte(hop, ':'); i >= 0 && a.Is4() {
		host = hop[:i]
	}
	var buf [64]byte
	if string(a.AppendTo(buf[:0])) == host {
		return host
	}
	return a.String()
}
