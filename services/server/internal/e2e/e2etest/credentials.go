package e2etest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/sync/adapters/gateway"
)

// Credentials can be managed through the API, and a session ends with its
// credential. The tests drive the wired App over real HTTP and real WebSockets on PostgreSQL.

// RevocationDelay is gateway.revocation_max_delay in these tests: the bound every close is
// checked against (the expiry sweep's interval; revocations and deactivations arrive through
// the log tail, far sooner).
const RevocationDelay = 300 * time.Millisecond

// CloseSlack is what a test allows beyond RevocationDelay for the frames to travel and the
// test's goroutines to be scheduled on a loaded machine running -race (a revocation arrives
// through the log tail in milliseconds on an idle one; under a load of 30 on two cores it
// took 370 ms once).
const CloseSlack = 700 * time.Millisecond

// Issue issues another token for a's principal as the owner and returns it as an actor of
// its own, with the token's id.
func (w *World) Issue(t *testing.T, a Actor, device string) (Actor, uuid.UUID) {
	t.Helper()
	body := `{}`
	if device != "" {
		body = fmt.Sprintf(`{"device_name":%q,"device_status":"approved"}`, device)
	}
	var tok apigen.CreateTokenResponse
	w.Must(t, w.Admin, http.MethodPost, "/api/v1/principals/"+a.ID.String()+"/tokens", body, http.StatusCreated, &tok)
	return Actor{Name: a.Name + " (" + device + ")", ID: a.ID, Token: tok.Token}, tok.TokenId
}

// Live opens a gateway connection as a and reads its ready frame.
func (w *ChatWorld) Live(t *testing.T, a Actor) *GatewayClient {
	t.Helper()
	c := MustDial(t, w.Env.Server.URL, a.Token)
	c.Send(`{"op":"hello"}`)
	c.Expect("ready")
	return c
}

// EndsWith reads c until the server closes it and checks the last frame before the close is
// an error frame with code, the close code is gateway.CloseCredentialEnded with code as its
// reason, and the close came within limit of since.
func (c *GatewayClient) EndsWith(code string, since time.Time, limit time.Duration) {
	c.T.Helper()
	var last GatewayFrame
	for {
		f, err := c.Read()
		if err != nil {
			took := time.Since(since)
			if status := websocket.CloseStatus(err); status != gateway.CloseCredentialEnded {
				c.T.Fatalf("closed with %d (%v), want %d", status, err, gateway.CloseCredentialEnded)
			}
			if last.Op != "error" || last.Code != code {
				c.T.Fatalf("last frame before the close %s, want an error frame with code %s", last.Raw, code)
			}
			if !strings.Contains(err.Error(), code) {
				c.T.Errorf("close reason of %v, want %s", err, code)
			}
			if took > limit {
				c.T.Errorf("closed %v after the credential ended, want within %v", took, limit)
			}
			return
		}
		if took := time.Since(since); took > limit {
			c.T.Fatalf("still open %v after the credential ended (last frame %s), want closed within %v", took, f.Raw, limit)
		}
		last = f
	}
}
