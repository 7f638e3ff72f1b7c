package gateway

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// originAllowed decides the Origin check of an upgrade (spec 03: cross-site upgrades are
// refused). A request without an Origin header is allowed: browsers always send one with a
// WebSocket upgrade, so its absence means a client that is no browser, which a cross-site
// page cannot drive. A browser's upgrade is allowed when its origin's host (with port) is
// the request's Host, the page being served by this server, or when the origin is one of
// allowed (lower-case scheme://host[:port], see parseOrigin). The scheme is not compared for
// the same host: behind a TLS-terminating proxy the server cannot know the scheme the
// browser used. "null" and other origins without a host are refused.
func originAllowed(r *http.Request, allowed []string) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.Scheme == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	return slices.Contains(allowed, strings.ToLower(u.Scheme+"://"+u.Host))
}
