package gateway

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/httpmw"
)

// The configuration keys of the gateway; ConfigFrom reads them and wire calls it.
var (
	// KeySendBuffer bounds what a connection may fall behind by before it is switched to
	// catch-up: the live batches of the log tail it has not written yet. The batches are
	// shared by every connection of the process, so each waiting one costs a connection a
	// reference, not a copy; the queue that holds them grows only as batches wait (an idle
	// connection has none).
	KeySendBuffer = config.Define("gateway.send_buffer", config.KindInt, "64",
		"most live batches of the log tail one WebSocket connection may have waiting (each at most sync.tail_batch_size events, shared by every connection); a connection further behind leaves live delivery and catches up from its own cursor (at least 1)")
	// KeyHeartbeatInterval paces the heartbeats: a WebSocket ping and a heartbeat or cursor
	// frame. Below the idle timeouts of common proxies and load balancers (60 s), so an idle
	// connection is not cut by them.
	KeyHeartbeatInterval = config.Define("gateway.heartbeat_interval", config.KindDuration, "25s",
		"how often the gateway pings each WebSocket connection and sends it a heartbeat (or cursor) frame; a peer that answers no ping for two intervals is closed with 4006 (more than 0)")
	// KeyAuthTimeout bounds how long an upgraded connection may stay silent: a browser has
	// to send its auth frame, every client its hello or resume, before any data flows.
	KeyAuthTimeout = config.Define("gateway.auth_timeout", config.KindDuration, "10s",
		"how long after the upgrade a WebSocket connection has to authenticate (auth frame, when the upgrade carried no Authorization header) and send hello or resume; later it is closed with 4002 (more than 0)")
	// KeyWriteTimeout is how long one write may take to reach a peer's socket (the frames of
	// a batch are written together); a peer that stopped reading is dropped then, instead of
	// holding its connection forever.
	KeyWriteTimeout = config.Define("gateway.write_timeout", config.KindDuration, "10s",
		"longest one write to a WebSocket connection's socket may take (the frames of a live batch are written together, at most 64 KiB at once); a peer that stopped reading is disconnected then and resumes from its cursor (more than 0)")
	// KeyBatchWindow trades a few milliseconds of latency for far fewer writes when events
	// come fast: a connection costs about one socket write (and its peer one read) per batch
	// it is handed, whatever the batch holds, so with many connections the writes, not the
	// events, are what a process runs out of. The first batch after a quiet window goes out
	// at once; batches arriving within the window after it are merged and handed out at its
	// end. See ADR 0018.
	KeyBatchWindow = config.Define("gateway.batch_window", config.KindDuration, "15ms",
		"shortest time between two live batches the gateway hands its connections: the first batch after a quiet window goes out at once, later ones within the window are merged and go out at its end, so each connection gets at most one write per window (0 hands every batch of the log tail out at once)")
	// KeyRevocationMaxDelay bounds how long a WebSocket session outlives its credential. A
	// revoked token and a deactivated principal reach the gateway as events of the log tail
	// (token.revoked, principal.deactivated), which closes their connections as soon as the
	// tail reads them, on every process; a token's expiry has no event, so the gateway checks
	// the expiry of every open connection at this interval with the server's clock.
	KeyRevocationMaxDelay = config.Define("gateway.revocation_max_delay", config.KindDuration, "250ms",
		"longest a WebSocket connection stays open after its token expired: the gateway checks every connection's token expiry at this interval (revoked tokens and deactivated principals close their connections as soon as the log tail reads the event); then it sends an error frame and closes with 4008 (more than 0, at most 1m)")
	// KeyCredentialRecheckInterval bounds how long a WebSocket session outlives a credential
	// that ended without an event: a token revoked or a principal deactivated by hand in the
	// database, a device revoked (no event), or an event the hub missed while the tail had
	// dropped it. Every interval the gateway re-validates the tokens of its open sessions in
	// one query per process. The events close sessions at once, so this is a backstop: the
	// default, half a minute, keeps the query (a primary-key probe per open session's token)
	// cheap even with many connections and processes, and a silent revocation short-lived.
	KeyCredentialRecheckInterval = config.Define("gateway.credential_recheck_interval", config.KindDuration, "30s",
		"how often the gateway re-validates the tokens of its open WebSocket connections in one query per process (revoked, expired, principal deactivated, device revoked), so a credential ended without an event (by hand in the database) closes its connections with 4008 within this interval (more than 0, at most 10m)")
	// KeyMaxFrameBytes bounds a client frame; client frames are small (a token at most), so
	// anything larger is a mistake or an attack.
	KeyMaxFrameBytes = config.Define("gateway.max_frame_bytes", config.KindBytes, "4096",
		"most bytes of one frame a client may send over the gateway; a larger frame closes the connection with 4007 (at least 64)")
)

// maxRevocationDelay caps gateway.revocation_max_delay: a session must not outlive its
// credential by more than a minute, whatever the configuration says.
const maxRevocationDelay = time.Minute

// maxCredentialRecheck caps gateway.credential_recheck_interval: a credential ended without
// an event must not keep its sessions open for long, whatever the configuration says.
const maxCredentialRecheck = 10 * time.Minute

// minFrameBytes is the smallest gateway.max_frame_bytes that still takes a resume frame with
// an epoch.
const minFrameBytes = 64

// Config is what the gateway reads from the configuration.
type Config struct {
	// SendBuffer is gateway.send_buffer: the live batches a connection may have waiting.
	SendBuffer int
	// HeartbeatInterval is gateway.heartbeat_interval.
	HeartbeatInterval time.Duration
	// AuthTimeout is gateway.auth_timeout.
	AuthTimeout time.Duration
	// WriteTimeout is gateway.write_timeout.
	WriteTimeout time.Duration
	// BatchWindow is gateway.batch_window: the shortest time between two batches the hub
	// hands out (0: none).
	BatchWindow time.Duration
	// MaxFrameBytes is gateway.max_frame_bytes.
	MaxFrameBytes int64
	// RevocationMaxDelay is gateway.revocation_max_delay: the interval of the expiry check.
	RevocationMaxDelay time.Duration
	// CredentialRecheckInterval is gateway.credential_recheck_interval: the interval of the
	// batched re-validation of the open sessions' tokens.
	CredentialRecheckInterval time.Duration
	// AllowedOrigins are the origins of http.cors.allowed_origins, the list the API's CORS
	// answers from too (one list, so a web client is allowed or refused as a whole), as given
	// (scheme://host[:port]); empty for same-origin only.
	AllowedOrigins []string
	// RetryAfter is http.unavailable_retry_after, the base of the retry_after_ms of an error
	// frame unavailable (the close 1013 follows), as of a 503's Retry-After.
	RetryAfter time.Duration
}

// ConfigFrom reads the gateway keys from cfg; parse errors are collected in cfg
// (config.Config.Err) like those of every other key. The origin list is split at commas,
// blanks trimmed, empty entries dropped; Validate checks each.
func ConfigFrom(cfg *config.Config) Config {
	var origins []string
	for o := range strings.SplitSeq(cfg.String(config.HTTPCORSAllowedOrigins), ",") {
		if o = strings.TrimSpace(o); o != "" {
			origins = append(origins, o)
		}
	}
	return Config{
		SendBuffer:                cfg.Int(KeySendBuffer),
		HeartbeatInterval:         cfg.Duration(KeyHeartbeatInterval),
		AuthTimeout:               cfg.Duration(KeyAuthTimeout),
		WriteTimeout:              cfg.Duration(KeyWriteTimeout),
		BatchWindow:               cfg.Duration(KeyBatchWindow),
		MaxFrameBytes:             cfg.Bytes(KeyMaxFrameBytes),
		RevocationMaxDelay:        cfg.Duration(KeyRevocationMaxDelay),
		CredentialRecheckInterval: cfg.Duration(KeyCredentialRecheckInterval),
		AllowedOrigins:            origins,
		RetryAfter:                cfg.Duration(config.HTTPUnavailableRetryAfter),
	}
}

// Validate refuses values the keys' types allow but the gateway cannot work with, naming
// the key: a buffer below 1, a timeout or interval that is not positive, a negative batch
// window, a frame limit below 64 bytes, and an origin that is not scheme://host[:port].
func (c Config) Validate() error {
	var errs []error
	if c.SendBuffer < 1 {
		errs = append(errs, fmt.Errorf("%s is %d, want at least 1", KeySendBuffer.Name, c.SendBuffer))
	}
	for _, d := range []struct {
		key config.Key
		v   time.Duration
	}{{KeyHeartbeatInterval, c.HeartbeatInterval}, {KeyAuthTimeout, c.AuthTimeout}, {KeyWriteTimeout, c.WriteTimeout}} {
		if d.v <= 0 {
			errs = append(errs, fmt.Errorf("%s is %v, want more than 0", d.key.Name, d.v))
		}
	}
	if c.RevocationMaxDelay <= 0 || c.RevocationMaxDelay > maxRevocationDelay {
		errs = append(errs, fmt.Errorf("%s is %v, want more than 0 and at most %v", KeyRevocationMaxDelay.Name, c.RevocationMaxDelay, maxRevocationDelay))
	}
	if c.CredentialRecheckInterval <= 0 || c.CredentialRecheckInterval > maxCredentialRecheck {
		errs = append(errs, fmt.Errorf("%s is %v, want more than 0 and at most %v", KeyCredentialRecheckInterval.Name, c.CredentialRecheckInterval, maxCredentialRecheck))
	}
	if c.BatchWindow < 0 {
		errs = append(errs, fmt.Errorf("%s is %v, want 0 or more", KeyBatchWindow.Name, c.BatchWindow))
	}
	if c.MaxFrameBytes < minFrameBytes {
		errs = append(errs, fmt.Errorf("%s is %d, want at least %d", KeyMaxFrameBytes.Name, c.MaxFrameBytes, minFrameBytes))
	}
	for _, o := range c.AllowedOrigins {
		if _, err := httpmw.ParseOrigin(o); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", config.HTTPCORSAllowedOrigins.Name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	return nil
}
