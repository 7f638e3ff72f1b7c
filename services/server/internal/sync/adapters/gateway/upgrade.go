package gateway

import (
	"encoding/base64"
	"net/http"
	"strings"

	"bothy.example.com/server/internal/kernel/problem"
)

// webSocketVersion is the only version of the protocol (RFC 6455) the gateway speaks.
const webSocketVersion = "13"

// upgradeRefusal checks the upgrade request as websocket.Accept would, before it is called,
// so that whatever the library would refuse with a text/plain answer of its own is a problem
// (spec 03, "Before the upgrade"): 400 validation_failed naming the first header at fault, in
// the library's order. A wrong or missing Sec-WebSocket-Version also gets the header
// Sec-WebSocket-Version: 13 in h, which RFC 6455 (section 4.4) asks for. The method needs no
// check: the router mounts the gateway for GET only. nil when Accept will upgrade.
func upgradeRefusal(h http.Header, r *http.Request) error {
	field := func(name, message string) error {
		return problem.Validation(problem.FieldError{Field: name, Message: message})
	}
	switch {
	case !r.ProtoAtLeast(1, 1):
		return field("HTTP version", "must be HTTP/1.1 or later: a WebSocket upgrade needs it")
	case !headerHasToken(r.Header, "Connection", "Upgrade"):
		return field("Connection", "must include Upgrade: the gateway speaks WebSocket only")
	case !headerHasToken(r.Header, "Upgrade", "websocket"):
		return field("Upgrade", "must be websocket: the gateway speaks WebSocket only")
	case r.Header.Get("Sec-WebSocket-Version") != webSocketVersion:
		h.Set("Sec-WebSocket-Version", webSocketVersion)
		return field("Sec-WebSocket-Version", "must be 13, the only version the gateway speaks")
	}
	keys := r.Header.Values("Sec-WebSocket-Key")
	if len(keys) != 1 {
		return field("Sec-WebSocket-Key", "must be given exactly once")
	}
	if v, err := base64.StdEncoding.DecodeString(strings.TrimSpace(keys[0])); err != nil || len(v) != 16 {
		return field("Sec-WebSocket-Key", "must be 16 bytes in base64")
	}
	return nil
}
