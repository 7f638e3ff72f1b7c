package wire_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/identity"
	identityapp "bothy.example.com/server/internal/identity/app"
	"bothy.example.com/server/internal/identity/identitytest"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/sync/adapters/gateway"
	"bothy.example.com/server/internal/wire/wiretest"
)

// Issue 16: credentials can be managed through the API, and a session ends with its
// credential. The tests drive the wired App over real HTTP and real WebSockets on PostgreSQL.

// revocationDelay is gateway.revocation_max_delay in these tests: the bound every close is
// checked against (the expiry sweep's interval; revocations and deactivations arrive through
// the log tail, far sooner).
const revocationDelay = 300 * time.Millisecond

// closeSlack is what a test allows beyond revocationDelay for the frames to travel and the
// test's goroutines to be scheduled on a loaded machine running -race (a revocation arrives
// through the log tail in milliseconds on an idle one; under a load of 30 on two cores it
// took 370 ms once).
const closeSlack = 700 * time.Millisecond

// credentialWorld is a gatewayWorld with revocationDelay as gateway.revocation_max_delay.
func credentialWorld(t *testing.T, opts ...wiretest.Option) *chatWorld {
	t.Helper()
	return gatewayWorld(t, append([]wiretest.Option{wiretest.WithSetting(gateway.KeyRevocationMaxDelay, revocationDelay.String())}, opts...)...)
}

// issue issues another token for a's principal as the owner and returns it as an actor of
// its own, with the token's id.
func (w *apiWorld) issue(t *testing.T, a worldActor, device string) (worldActor, uuid.UUID) {
	t.Helper()
	body := `{}`
	if device != "" {
		body = fmt.Sprintf(`{"device_name":%q,"device_status":"approved"}`, device)
	}
	var tok apigen.CreateTokenResponse
	w.must(t, w.admin, http.MethodPost, "/api/v1/principals/"+a.id.String()+"/tokens", body, http.StatusCreated, &tok)
	return worldActor{name: a.name + " (" + device + ")", id: a.id, token: tok.Token}, tok.TokenId
}

// live opens a gateway connection as a and reads its ready frame.
func (w *chatWorld) live(t *testing.T, a worldActor) *gwClient {
	t.Helper()
	c := mustDial(t, w.env.Server.URL, a.token)
	c.send(`{"op":"hello"}`)
	c.expect("ready")
	return c
}

// endsWith reads c until the server closes it and checks the last frame before the close is
// an error frame with code, the close code is gateway.CloseCredentialEnded with code as its
// reason, and the close came within limit of since.
func (c *gwClient) endsWith(code string, since time.Time, limit time.Duration) {
	c.t.Helper()
	var last gwFrame
	for {
		f, err := c.read()
		if err != nil {
			took := time.Since(since)
			if status := websocket.CloseStatus(err); status != gateway.CloseCredentialEnded {
				c.t.Fatalf("closed with %d (%v), want %d", status, err, gateway.CloseCredentialEnded)
			}
			if last.Op != "error" || last.Code != code {
				c.t.Fatalf("last frame before the close %s, want an error frame with code %s", last.raw, code)
			}
			if !strings.Contains(err.Error(), code) {
				c.t.Errorf("close reason of %v, want %s", err, code)
			}
			if took > limit {
				c.t.Errorf("closed %v after the credential ended, want within %v", took, limit)
			}
			return
		}
		if took := time.Since(since); took > limit {
			c.t.Fatalf("still open %v after the credential ended (last frame %s), want closed within %v", took, f.raw, limit)
		}
		last = f
	}
}

// TestGatewayClosesTheSessionOfARevokedToken: Sam's phone is stolen; Sam revokes its token
// with his laptop's. The phone's connection gets an error frame token_revoked and is closed
// with 4008 at once, its REST requests answer 401, and the laptop's connection stays open
// and live.
func TestGatewayClosesTheSessionOfARevokedToken(t *testing.T) {
	t.Parallel()
	w := credentialWorld(t)
	phone, phoneToken := w.issue(t, w.sam, "Sam's phone")
	stolen := w.live(t, phone)
	laptop := w.live(t, w.sam)
	// Alex's message is the next event; his own read state follows it, for him alone, so the
	// sockets read through the message, not the head.
	message := w.head(t) + 1
	w.post(t, w.alex, w.ticketThread, "Seen on both")
	head := w.head(t)
	stolen.until(message, false)
	laptop.until(message, false)

	var info apigen.TokenInfo
	start := time.Now()
	r := w.must(t, w.sam, http.MethodPost, "/api/v1/tokens/"+phoneToken.String()+"/revoke", "", http.StatusOK, &info)
	stolen.endsWith("token_revoked", start, revocationDelay+closeSlack)
	if info.Id != phoneToken || info.RevokedAt == nil || info.DeviceName == nil || *info.DeviceName != "Sam's phone" {
		t.Errorf("revokeToken = %+v", info)
	}
	w.expectEvents(t, head, r, wantEvent{typ: identity.EventTokenRevoked, kind: kernel.ResourcePrincipal, id: w.sam.id, actor: w.sam.id, audience: w.sam.id})

	w.must(t, phone, http.MethodGet, "/api/v1/me", "", http.StatusUnauthorized, nil)
	if _, refused, err := dialGateway(t, w.env.Server.URL, phone.token); err == nil || refused.status != http.StatusUnauthorized {
		t.Errorf("a new connection with the revoked token: err %v, status %d; want 401", err, refused.status)
	}
	// The revoke reached the laptop as Sam's personal event; the laptop stays live.
	message = w.head(t) + 1
	w.post(t, w.alex, w.ticketThread, "Still seen on the laptop")
	got, _ := laptop.until(message, false)
	if len(got) != 2 || got[0].Type != identity.EventTokenRevoked || got[1].Type != "message.created" {
		t.Errorf("the laptop got %+v, want token.revoked and the message", got)
	}
}

// TestGatewayClosesTheSessionOfAnExpiredToken: with identity.token_ttl 1h, moving the
// server's clock past Sam's token's expiry closes Sam's connection with token_expired within
// gateway.revocation_max_delay; REST answers 401 at once.
func TestGatewayClosesTheSessionOfAnExpiredToken(t *testing.T) {
	t.Parallel()
	w := credentialWorld(t, wiretest.WithSetting(identityapp.KeyTokenTTL, "1h"))
	c := w.live(t, w.sam)
	w.env.Clock.Advance(59 * time.Minute)
	message := w.head(t) + 1
	w.post(t, w.alex, w.ticketThread, "Before the expiry")
	c.until(message, false)

	fresh, _ := w.issue(t, w.robin, "")
	other := w.live(t, fresh)
	start := time.Now()
	w.env.Clock.Advance(time.Minute)
	c.endsWith("token_expired", start, revocationDelay+closeSlack)
	w.must(t, w.sam, http.MethodGet, "/api/v1/me", "", http.StatusUnauthorized, nil)
	// A connection whose token has not expired stays open.
	var me apigen.Principal
	w.must(t, fresh, http.MethodGet, "/api/v1/me", "", http.StatusOK, &me)
	other.send(`{"op":"ping"}`)
	other.expect("pong")
}

// TestGatewayClosesTheSessionsOfADeactivatedPrincipal: Alex deactivates Sam; both of Sam's
// connections close with principal_deactivated, his tokens answer 401, Robin's connection
// stays open and gets principal.deactivated; reactivated, Sam's tokens work again.
func TestGatewayClosesTheSessionsOfADeactivatedPrincipal(t *testing.T) {
	t.Parallel()
	w := credentialWorld(t)
	phone, _ := w.issue(t, w.sam, "Sam's phone")
	laptop, onPhone := w.live(t, w.sam), w.live(t, phone)
	robin := w.live(t, w.robin)
	head := w.head(t)

	var p apigen.Principal
	start := time.Now()
	r := w.must(t, w.alex, http.MethodPost, "/api/v1/principals/"+w.sam.id.String()+"/deactivate", "", http.StatusOK, &p)
	laptop.endsWith("principal_deactivated", start, revocationDelay+closeSlack)
	onPhone.endsWith("principal_deactivated", start, revocationDelay+closeSlack)
	if p.Id != w.sam.id || p.DeactivatedAt == nil {
		t.Errorf("deactivatePrincipal = %+v", p)
	}
	w.expectEvents(t, head, r, wantEvent{typ: identity.EventPrincipalDeactivated, kind: kernel.ResourcePrincipal, id: w.sam.id, actor: w.alex.id})
	for _, a := range []worldActor{w.sam, phone} {
		w.must(t, a, http.MethodGet, "/api/v1/me", "", http.StatusUnauthorized, nil)
	}
	got, _ := robin.until(w.head(t), false)
	if len(got) != 1 || got[0].Type != identity.EventPrincipalDeactivated {
		t.Errorf("Robin got %+v, want principal.deactivated", got)
	}

	// Idempotent: no second event.
	head = w.head(t)
	w.must(t, w.alex, http.MethodPost, "/api/v1/principals/"+w.sam.id.String()+"/deactivate", "", http.StatusOK, &p)
	w.expectNone(t, head, "a second deactivation")

	var back apigen.Principal
	r = w.must(t, w.alex, http.MethodPost, "/api/v1/principals/"+w.sam.id.String()+"/reactivate", "", http.StatusOK, &back)
	if back.Id != w.sam.id || back.DeactivatedAt != nil {
		t.Errorf("reactivatePrincipal = %+v", back)
	}
	w.expectEvents(t, head, r, wantEvent{typ: identity.EventPrincipalReactivated, kind: kernel.ResourcePrincipal, id: w.sam.id, actor: w.alex.id})
	w.must(t, w.sam, http.MethodGet, "/api/v1/me", "", http.StatusOK, &p)
	w.live(t, phone)
}

// TestTokenOperations: listing one's own tokens (never a secret, paged), an owner listing
// anyone's, revoking one's own twice (one event), and what a non-owner may not do.
func TestTokenOperations(t *testing.T) {
	t.Parallel()
	w := newChatWorld(t, false)
	_, phoneID := w.issue(t, w.sam, "Sam's phone")
	_, robinsID := w.issue(t, w.robin, "Robin's laptop")

	// Sam's tokens: the one of the world and the phone's, one page at a time.
	var ids []uuid.UUID
	after := ""
	for range 3 {
		r := w.must(t, w.sam, http.MethodGet, "/api/v1/tokens?limit=1"+after, "", http.StatusOK, nil)
		if strings.Contains(string(r.Body), "bothy_") || strings.Contains(string(r.Body), `"token"`) {
			t.Errorf("listTokens shows a secret: %s", r.Body)
		}
		var page apigen.TokenList
		if err := json.Unmarshal(r.Body, &page); err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			if it.PrincipalId != w.sam.id {
				t.Errorf("Sam listed %+v", it)
			}
			ids = append(ids, it.Id)
		}
		if page.NextCursor == nil {
			break
		}
		after = "&after=" + page.NextCursor.String()
	}
	if len(ids) != 2 || ids[1] != phoneID {
		t.Errorf("Sam's tokens %v, want his first and the phone's %s", ids, phoneID)
	}
	var list apigen.TokenList
	w.must(t, w.alex, http.MethodGet, "/api/v1/tokens?principal_id="+w.sam.id.String(), "", http.StatusOK, &list)
	if len(list.Items) != 2 || list.Items[1].DeviceName == nil || *list.Items[1].DeviceName != "Sam's phone" || list.Items[1].LastUsedAt != nil {
		t.Errorf("Alex lists Sam's tokens: %+v", list.Items)
	}

	w.refuse(t,
		refusal{name: "Sam lists Robin's tokens", as: w.sam, method: http.MethodGet, path: "/api/v1/tokens?principal_id=" + w.robin.id.String(), status: http.StatusForbidden, code: "forbidden"},
		refusal{name: "Sam revokes Robin's token", as: w.sam, method: http.MethodPost, path: "/api/v1/tokens/" + robinsID.String() + "/revoke", status: http.StatusNotFound, code: "not_found"},
		refusal{name: "Sam revokes an unknown token", as: w.sam, method: http.MethodPost, path: "/api/v1/tokens/" + uuid.NewString() + "/revoke", status: http.StatusNotFound, code: "not_found"},
		refusal{name: "Sam deactivates Robin", as: w.sam, method: http.MethodPost, path: "/api/v1/principals/" + w.robin.id.String() + "/deactivate", status: http.StatusForbidden, code: "forbidden"},
		refusal{name: "Sam reactivates Robin", as: w.sam, method: http.MethodPost, path: "/api/v1/principals/" + w.robin.id.String() + "/reactivate", status: http.StatusForbidden, code: "forbidden"},
		refusal{name: "Sam deactivates himself", as: w.sam, method: http.MethodPost, path: "/api/v1/principals/" + w.sam.id.String() + "/deactivate", status: http.StatusForbidden, code: "forbidden"},
		refusal{name: "Alex deactivates the last owner", as: w.alex, method: http.MethodPost, path: "/api/v1/principals/" + w.alex.id.String() + "/deactivate", status: http.StatusConflict, code: "conflict"},
		refusal{name: "Alex deactivates nobody", as: w.alex, method: http.MethodPost, path: "/api/v1/principals/" + uuid.NewString() + "/deactivate", status: http.StatusNotFound, code: "not_found"},
	)
	w.must(t, w.robin, http.MethodGet, "/api/v1/me", "", http.StatusOK, nil)

	head := w.head(t)
	r := w.must(t, w.sam, http.MethodPost, "/api/v1/tokens/"+phoneID.String()+"/revoke", "", http.StatusOK, nil)
	w.expectEvents(t, head, r, wantEvent{typ: identity.EventTokenRevoked, kind: kernel.ResourcePrincipal, id: w.sam.id, actor: w.sam.id, audience: w.sam.id})
	var again apigen.TokenInfo
	w.must(t, w.sam, http.MethodPost, "/api/v1/tokens/"+phoneID.String()+"/revoke", "", http.StatusOK, &again)
	if got := w.eventsAfter(t, head); len(got) != 1 {
		t.Errorf("two revokes appended %d events, want 1", len(got))
	}
	// An owner revokes anyone's token.
	w.must(t, w.alex, http.MethodPost, "/api/v1/tokens/"+robinsID.String()+"/revoke", "", http.StatusOK, nil)

	// With a second owner, the first may be deactivated; the second is then the last.
	w.must(t, w.alex, http.MethodPost, "/api/v1/grants", fmt.Sprintf(`{"principal_id":%q,"resource_kind":"instance","role":"owner"}`, w.robin.id), http.StatusCreated, nil)
	w.must(t, w.robin, http.MethodPost, "/api/v1/principals/"+w.alex.id.String()+"/deactivate", "", http.StatusOK, nil)
	w.refuse(t, refusal{name: "Robin deactivates the last active owner", as: w.robin, method: http.MethodPost, path: "/api/v1/principals/" + w.robin.id.String() + "/deactivate", status: http.StatusConflict, code: "conflict"})
}

// recheckInterval is gateway.credential_recheck_interval in the recheck test.
const recheckInterval = 300 * time.Millisecond

// byHand changes identity's tables on the world's database as an operator would in SQL.
func byHand(t *testing.T, w *chatWorld, change func(ctx context.Context, conn *pgx.Conn, id uuid.UUID) error, id uuid.UUID) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), w.env.DatabaseURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer func() { _ = conn.Close(context.Background()) }()
	if err := change(t.Context(), conn, id); err != nil {
		t.Fatal(err)
	}
}

// TestGatewayRechecksCredentialsWithoutAnEvent: an operator revokes Sam's phone's token,
// deactivates Robin and revokes Sam's tablet's device by hand in SQL, so no event reaches
// the log tail. Each connection ends all the same within gateway.credential_recheck_interval,
// with the error frame and 4008 of its reason; Sam's laptop stays open.
func TestGatewayRechecksCredentialsWithoutAnEvent(t *testing.T) {
	t.Parallel()
	w := credentialWorld(t, wiretest.WithSetting(gateway.KeyCredentialRecheckInterval, recheckInterval.String()))
	phone, phoneToken := w.issue(t, w.sam, "Sam's phone")
	tablet, tabletToken := w.issue(t, w.sam, "Sam's tablet")
	onPhone, onTablet, robin, laptop := w.live(t, phone), w.live(t, tablet), w.live(t, w.robin), w.live(t, w.sam)
	head := w.head(t)

	start := time.Now()
	byHand(t, w, identitytest.RevokeTokenByHand, phoneToken)
	onPhone.endsWith("token_revoked", start, recheckInterval+closeSlack)

	start = time.Now()
	byHand(t, w, identitytest.DeactivateByHand, w.robin.id)
	robin.endsWith("principal_deactivated", start, recheckInterval+closeSlack)

	start = time.Now()
	byHand(t, w, identitytest.RevokeDeviceOfTokenByHand, tabletToken)
	onTablet.endsWith("token_revoked", start, recheckInterval+closeSlack)

	w.expectNone(t, head, "changes made by hand")
	laptop.send(`{"op":"ping"}`)
	laptop.expect("pong")
}
