package gateway

import "github.com/coder/websocket"

// The close codes of the gateway (spec 03, "Close codes"). Codes 4000 to 4999 are the
// application's (RFC 6455, section 7.4.2); each says whether and how the client goes on.
// A fatal error frame (OpError) precedes every close but CloseGoingAway, CloseResyncRequired
// (preceded by the resync_required frame) and CloseHeartbeatTimeout.
const (
	// CloseBadFrame: a frame that is not a JSON object of a known op with valid members, a
	// binary frame, or a frame out of order (auth after the start, a second hello). Not
	// resumable as it was: the client has a bug.
	CloseBadFrame websocket.StatusCode = 4000
	// CloseUnauthenticated: the auth frame's token was refused, or the first frame of a
	// connection without an Authorization header was not auth. Reconnect with a valid token.
	CloseUnauthenticated websocket.StatusCode = 4001
	// CloseAuthTimeout: no auth (when needed) and hello or resume within
	// gateway.auth_timeout of the upgrade. Reconnect and speak first.
	CloseAuthTimeout websocket.StatusCode = 4002
	// CloseForbidden: the actor may not receive events (its device awaits approval, error
	// code device_pending; or it lacks events.catch_up, forbidden). Reconnect once allowed.
	CloseForbidden websocket.StatusCode = 4003
	// CloseResyncRequired: follows the resync_required frame. Recover as it says (load a
	// snapshot and send hello, or retry resume after retry_after_ms).
	CloseResyncRequired websocket.StatusCode = 4004
	// CloseSlowConsumer: the connection could not keep up with live events and catching up
	// in place failed to bring it back. Resumable: reconnect and resume from the cursor.
	CloseSlowConsumer websocket.StatusCode = 4005
	// CloseHeartbeatTimeout: the peer answered no WebSocket ping for two heartbeat
	// intervals. Resumable: reconnect and resume from the cursor.
	CloseHeartbeatTimeout websocket.StatusCode = 4006
	// CloseFrameTooLarge: a client frame exceeded gateway.max_frame_bytes. Not resumable as
	// it was.
	CloseFrameTooLarge websocket.StatusCode = 4007
	// CloseCredentialEnded: the connection's credential ended while it was open: its token
	// was revoked (error code token_revoked) or expired (token_expired), or its principal was
	// deactivated (principal_deactivated). Within gateway.revocation_max_delay. Not
	// resumable with that token: authenticate anew.
	CloseCredentialEnded websocket.StatusCode = 4008
	// CloseGoingAway (1001): the server is shutting down (SIGTERM) after it flushed the
	// frames in flight. Resumable: reconnect, to another process if need be, and resume.
	CloseGoingAway = websocket.StatusGoingAway
	// CloseInternal (1011): the server failed unexpectedly. Resumable after a pause:
	// reconnect and resume from the cursor.
	CloseInternal = websocket.StatusInternalError
	// CloseTryAgainLater (1013): the database is unavailable (a port answered
	// problem.ErrUnavailable), or the process's log tail has not started (it cannot read the
	// database yet) within gateway.auth_timeout. The error frame unavailable before it has
	// retry_after_ms (http.unavailable_retry_after, jittered). Resumable after that pause.
	CloseTryAgainLater = websocket.StatusTryAgainLater
)
