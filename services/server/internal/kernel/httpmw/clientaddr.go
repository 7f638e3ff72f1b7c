package httpmw

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ClientAddrs tells the client address of a request, the key of the
// per-address rate limits. By default it is the peer of the connection
// (RemoteAddr). Only when that peer is one of the trusted proxies
// (http.trusted_proxies, empty by default) is X-Forwarded-For read: from its
// right end, skipping trusted proxies, the first address is the client's.
// Headers from any other peer are ignored, since anyone can send them. An
// IPv6 client is keyed by its /64, the block one subscriber usually holds,
// so rotating addresses inside it does not reset a limit.
type ClientAddrs struct {
	trusted []netip.Prefix
}

// NewClientAddrs parses the trusted proxies: a comma-separated list of
// addresses or CIDR prefixes; blanks are trimmed, empty entries dropped.
func NewClientAddrs(trustedProxies string) (*ClientAddrs, error) {
	c := &ClientAddrs{}
	for f := range strings.SplitSeq(trustedProxies, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			c.trusted = append(c.trusted, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("http.trusted_proxies: %q is neither an address nor a CIDR prefix", f)
		}
		c.trusted = append(c.trusted, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return c, nil
}

// Of returns the client address of r as a rate-limit key.
func (c *ClientAddrs) Of(r *http.Request) string {
	peer, ok := parseHost(r.RemoteAddr)
	if !ok {
		return r.RemoteAddr
	}
	client := peer
	if c.isTrusted(peer) {
		client = c.forwarded(r.Header.Values("X-Forwarded-For"), peer)
	}
	return key(client)
}

// forwarded walks the X-Forwarded-For entries from the right (the one the
// nearest proxy added) and returns the first that is no trusted proxy; when
// all are (or the header is missing or malformed), the last trusted address
// seen.
func (c *ClientAddrs) forwarded(values []string, peer netip.Addr) netip.Addr {
	client := peer
	for i := len(values) - 1; i >= 0; i-- {
		parts := strings.Split(values[i], ",")
		for j := len(parts) - 1; j >= 0; j-- {
			a, err := netip.ParseAddr(strings.TrimSpace(parts[j]))
			if err != nil {
				return client
			}
			client = a.Unmap()
			if !c.isTrusted(client) {
				return client
			}
		}
	}
	return client
}

func (c *ClientAddrs) isTrusted(a netip.Addr) bool {
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseHost reads the address of a host:port.
func parseHost(hostport string) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

// key is the limit key of a: an IPv4 address itself, an IPv6 address its /64.
func key(a netip.Addr) string {
	if a.Is6() {
		p, err := a.Prefix(64)
		if err == nil {
			return p.String()
		}
	}
	return a.String()
}
