package config

// The kernel's keys that bound what one client can hold or send (ADR 0019):
// the timeouts of a connection, the cap on open connections and the rate
// limits. The composition root reads them; internal/kernel/httpmw and
// internal/kernel/ratelimit enforce them.
var (
	// HTTPReadTimeout bounds the reading of one whole request, headers and
	// body, against clients that send it a byte at a time (http.Server's
	// ReadTimeout). net/http clears the deadline once the body was read and
	// when the gateway takes a connection over, so neither a long handler nor
	// a WebSocket is cut by it.
	HTTPReadTimeout = Define("http.read_timeout", KindDuration, "30s",
		"longest time one request, headers and body, may take to arrive in full; a slower request gets its connection closed. Together with http.max_body_bytes it sets the slowest upload accepted; raise both for large uploads over slow links. At least http.read_header_timeout (0 turns it off)")
	// HTTPWriteTimeout bounds the sending of one response, against clients
	// that read it a byte at a time (http.Server's WriteTimeout). The
	// gateway's WebSockets are not bound by it: net/http clears it when the
	// gateway takes the connection over, and gateway.write_timeout bounds
	// each of their writes.
	HTTPWriteTimeout = Define("http.write_timeout", KindDuration, "60s",
		"longest time one HTTP request may take from the end of its headers until its response is written, handling included; later the connection is closed. WebSocket connections of the gateway are not bound by it (gateway.write_timeout bounds their writes) (0 turns it off)")
	// HTTPIdleTimeout closes keep-alive connections that wait for a next
	// request, so idle clients do not hold connections for ever. Above the
	// idle timeouts of common load balancers (60 s), so that they, not the
	// server, close an idle connection and never reuse one the server closed.
	HTTPIdleTimeout = Define("http.idle_timeout", KindDuration, "90s",
		"how long a keep-alive connection may wait for its next request before the server closes it (more than 0)")
	// HTTPMaxConnections caps the connections one process keeps open at once,
	// WebSockets included (httpmw.LimitConnections): memory and file
	// descriptors stay bounded whatever clients do. Twice what the gateway
	// benchmark opens (5,000 WebSockets), at about 13 KiB each.
	HTTPMaxConnections = Define("http.max_connections", KindInt, "10000",
		"most TCP connections one process keeps open at once, idle keep-alive and WebSocket connections included; a connection beyond it is answered 503 unavailable with Retry-After and closed (at least 1)")
	// HTTPTrustedProxies names the reverse proxies whose X-Forwarded-For
	// header tells the client address for the per-address limits; empty
	// trusts no header, so no client can choose its own address.
	HTTPTrustedProxies = Define("http.trusted_proxies", KindString, "",
		"comma-separated addresses or CIDR prefixes of reverse proxies whose X-Forwarded-For header gives the client address of the per-address rate limits; empty means the connection's peer address is the client's (set it when a proxy runs in front, or every client shares the proxy's limits)")
	// RateTokenWritesPerSecond is the per-token write limit, a token bucket
	// per actor. Set far above the bench's single-token load (about 2,100
	// writes/s on the reference machine), so it bounds a runaway client on a
	// big machine rather than shaping normal use; lower it for instances
	// open to untrusted agents.
	RateTokenWritesPerSecond = Define("http.rate_limit.token_writes_per_second", KindInt, "10000",
		"writes (POST, PUT, PATCH, DELETE) per second one token (one principal and device) may make on one process in the long run; beyond it 429 too_many_requests with Retry-After (0 turns the limit off)")
	// RateTokenWritesBurst is the per-token bucket's size.
	RateTokenWritesBurst = Define("http.rate_limit.token_writes_burst", KindInt, "10000",
		"writes one token may make at once, beyond its per-second rate, after a quiet spell (at least 1)")
	// RateAddressWritesPerSecond is the per-address write limit: it also
	// covers writes without a token and many tokens from one host.
	RateAddressWritesPerSecond = Define("http.rate_limit.address_writes_per_second", KindInt, "20000",
		"writes (POST, PUT, PATCH, DELETE) per second one client address may make on one process in the long run, whatever its tokens; beyond it 429 too_many_requests with Retry-After (0 turns the limit off)")
	// RateAddressWritesBurst is the per-address bucket's size.
	RateAddressWritesBurst = Define("http.rate_limit.address_writes_burst", KindInt, "20000",
		"writes one client address may make at once, beyond its per-second rate, after a quiet spell (at least 1)")
	// RateFailedAuthPerMinute limits token guessing: failed authentications
	// per client address.
	RateFailedAuthPerMinute = Define("http.rate_limit.failed_auth_per_minute", KindInt, "10",
		"failed authentications (401 to a request that carried an Authorization header, REST or gateway) per minute one client address may have in the long run; once its burst is spent every request from it gets 429 too_many_requests with Retry-After (0 turns the limit off)")
	// RateFailedAuthBurst is how many failures an address may have at once.
	RateFailedAuthBurst = Define("http.rate_limit.failed_auth_burst", KindInt, "30",
		"failed authentications one client address may have in a row before it is limited (at least 1)")
	// RateMaxBuckets bounds the memory of each rate limit.
	RateMaxBuckets = Define("http.rate_limit.max_buckets", KindInt, "100000",
		"most keys (tokens or addresses) each rate limit tracks at once on one process; beyond it the refilled buckets are swept and, if none is, an arbitrary one is forgotten (at least 1)")
	// RateSweepInterval is how often refilled buckets are dropped.
	RateSweepInterval = Define("http.rate_limit.sweep_interval", KindDuration, "1m",
		"how often each rate limit drops the buckets that have refilled (a full bucket limits nothing) (more than 0)")
)
