package config

// The kernel's own keys, read by the composition root and the bothy command.
// Module keys are defined in the module that reads them.
var (
	// HTTPAddr is where the HTTP server listens.
	HTTPAddr = Define("http.addr", KindString, "127.0.0.1:8080",
		"listen address of the HTTP server (api and gateway roles)")
	// HTTPMaxBodyBytes caps request bodies (httpmw.BodyLimit) so one client
	// cannot exhaust memory.
	HTTPMaxBodyBytes = Define("http.max_body_bytes", KindBytes, "1048576",
		"largest accepted request body; larger bodies get 413 payload_too_large")
	// HTTPIdempotencyTTL is how long a POST's Idempotency-Key is remembered
	// (httpmw.Idempotency): long enough for a mobile client to retry after a
	// network outage, short enough that the stored responses stay few.
	HTTPIdempotencyTTL = Define("http.idempotency_ttl", KindDuration, "24h",
		"how long the response of a POST with an Idempotency-Key is kept and replayed to a retry with that key; expired keys are deleted by the maintenance (more than 0)")
	// HTTPIdempotencyClaimAttempts bounds httpmw.Idempotency's claim loop: a key that
	// disappears between the failed claim and the read (a purge or a released claim) is
	// claimed again, and only a key that keeps disappearing makes the request fail.
	HTTPIdempotencyClaimAttempts = Define("http.idempotency_claim_attempts", KindInt, "3",
		"how often a POST with an Idempotency-Key tries to claim its key when the key keeps vanishing between the claim and the read (an expiry purge running at the same time); then it fails with 500 (at least 1)")
	// HTTPCORSAllowedOrigins lists the web origins whose browser pages may call the API
	// (httpmw.CORS) and open the WebSocket gateway (besides the server's own host): one list
	// for both, so a web client is allowed or refused as a whole.
	HTTPCORSAllowedOrigins = Define("http.cors.allowed_origins", KindString, "",
		"comma-separated origins (scheme://host[:port], no wildcards) whose browser pages may call the API (CORS) and open the WebSocket gateway; empty allows same-origin pages only; clients that send no Origin header (not browsers) are not affected")
	// HTTPCORSMaxAge is how long a browser may cache a preflight's answer
	// (Access-Control-Max-Age); browsers cap it themselves (Chromium at two hours).
	HTTPCORSMaxAge = Define("http.cors.max_age", KindDuration, "10m",
		"how long a browser may reuse the answer to a CORS preflight (Access-Control-Max-Age, in whole seconds)")
	// HTTPReadHeaderTimeout bounds header reading, against slowloris clients.
	HTTPReadHeaderTimeout = Define("http.read_header_timeout", KindDuration, "10s",
		"time allowed to read request headers")
	// HTTPShutdownTimeout bounds the drain on SIGINT/SIGTERM, so a stuck
	// request cannot block a deploy forever.
	HTTPShutdownTimeout = Define("http.shutdown_timeout", KindDuration, "15s",
		"how long a draining server waits for in-flight requests on SIGINT/SIGTERM")
	// HTTPUnavailableRetryAfter is the base of the Retry-After every 503 carries
	// (httpmw.RetryAfter): the header is this plus a random jitter of up to as
	// much again, in whole seconds, so the clients an outage refused at once do
	// not all return in the same second.
	HTTPUnavailableRetryAfter = Define("http.unavailable_retry_after", KindDuration, "2s",
		"base of the Retry-After of a 503 unavailable (and of the gateway's retry_after_ms): the value sent is a random one between it and twice it, in whole seconds (at least 1s)")
	// HTTPCompressMinBytes is the smallest response body httpmw.Compress gzips: below about a
	// kilobyte gzip's header, trailer and CPU buy nothing (a problem, a created message).
	HTTPCompressMinBytes = Define("http.compress_min_bytes", KindBytes, "1024",
		"smallest response body gzipped for a client that accepts gzip; smaller bodies go out as they are (0 compresses every body)")
	// DatabaseURL selects the PostgreSQL server; empty starts the embedded
	// default so a fresh machine needs no setup.
	DatabaseURL = Define("database.url", KindString, "",
		"PostgreSQL URL; empty means the embedded default cluster under `embedded.dir`")
	// DatabaseMaxConns caps the pool, so several processes sharing one
	// database stay within its connection limit.
	DatabaseMaxConns = Define("database.max_conns", KindInt, "20",
		"largest number of pooled database connections per process")
	// EmbeddedDir holds the embedded default cluster's data, password and logs.
	EmbeddedDir = Define("embedded.dir", KindString, ".bothy",
		"directory of the embedded default cluster (data, password, logs)")
	// LogLevel sets the minimum level logged (see logging.ParseLevel).
	LogLevel = Define("log.level", KindString, "info",
		"one of debug, info, warn, error")
)
