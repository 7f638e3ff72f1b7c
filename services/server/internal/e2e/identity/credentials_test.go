package identity

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/identity"
	identityapp "bothy.example.com/server/internal/identity/app"
	"bothy.example.com/server/internal/identity/identitytest"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/sync/adapters/gateway"
	"bothy.example.com/server/internal/wiretest"
)

// credentialWorld is a GatewayWorld with RevocationDelay as gateway.revocation_max_delay.
func credentialWorld(t *testing.T, opts ...wiretest.Option) *e2etest.ChatWorld {
	t.Helper()
	return e2etest.GatewayWorld(t, append([]wiretest.Option{wiretest.WithSetting(gateway.KeyRevocationMaxDelay, e2etest.RevocationDelay.String())}, opts...)...)
}

// TestGatewayClosesTheSessionOfARevokedToken: Sam's phone is stolen; Sam revokes its token
// with his laptop's. The phone's connection gets an error frame token_revoked and is closed
// with 4008 at once, its REST requests answer 401, and the laptop's connection stays open
// and live.
func TestGatewayClosesTheSessionOfARevokedToken(t *testing.T) {
	t.Parallel()
	w := credentialWorld(t)
	phone, phoneToken := w.Issue(t, w.Sam, "Sam's phone")
	stolen := w.Live(t, phone)
	laptop := w.Live(t, w.Sam)
	// Alex's message is the next event; his own read state follows it, for him alone, so the
	// sockets read through the message, not the head.
	message := w.Head(t) + 1
	w.Post(t, w.Alex, w.TicketThread, "Seen on both")
	head := w.Head(t)
	stolen.Until(message, false)
	laptop.Until(message, false)

	var info apigen.TokenInfo
	start := time.Now()
	r := w.Must(t, w.Sam, http.MethodPost, "/api/v1/tokens/"+phoneToken.String()+"/revoke", "", http.StatusOK, &info)
	stolen.EndsWith("token_revoked", start, e2etest.RevocationDelay+e2etest.CloseSlack)
	if info.Id != phoneToken || info.RevokedAt == nil || info.DeviceName == nil || *info.DeviceName != "Sam's phone" {
		t.Errorf("revokeToken = %+v", info)
	}
	w.ExpectEvents(t, head, r, e2etest.WantEvent{Typ: identity.EventTokenRevoked, Kind: kernel.ResourcePrincipal, ID: w.Sam.ID, Actor: w.Sam.ID, Audience: w.Sam.ID})

	w.Must(t, phone, http.MethodGet, "/api/v1/me", "", http.StatusUnauthorized, nil)
	if _, refused, err := e2etest.DialGateway(t, w.Env.Server.URL, phone.Token); err == nil || refused.Status != http.StatusUnauthorized {
		t.Errorf("a new connection with the revoked token: err %v, status %d; want 401", err, refused.Status)
	}
	// The revoke reached the laptop as Sam's personal event; the laptop stays live.
	message = w.Head(t) + 1
	w.Post(t, w.Alex, w.TicketThread, "Still seen on the laptop")
	got, _ := laptop.Until(message, false)
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
	c := w.Live(t, w.Sam)
	w.Env.Clock.Advance(59 * time.Minute)
	message := w.Head(t) + 1
	w.Post(t, w.Alex, w.TicketThread, "Before the expiry")
	c.Until(message, false)

	fresh, _ := w.Issue(t, w.Robin, "")
	other := w.Live(t, fresh)
	start := time.Now()
	w.Env.Clock.Advance(time.Minute)
	c.EndsWith("token_expired", start, e2etest.RevocationDelay+e2etest.CloseSlack)
	w.Must(t, w.Sam, http.MethodGet, "/api/v1/me", "", http.StatusUnauthorized, nil)
	// A connection whose token has not expired stays open.
	var me apigen.Principal
	w.Must(t, fresh, http.MethodGet, "/api/v1/me", "", http.StatusOK, &me)
	other.Send(`{"op":"ping"}`)
	other.Expect("pong")
}

// TestGatewayClosesTheSessionsOfADeactivatedPrincipal: Alex deactivates Sam; both of Sam's
// connections close with principal_deactivated, his tokens answer 401, Robin's connection
// stays open and gets principal.deactivated; reactivated, Sam's tokens work again.
func TestGatewayClosesTheSessionsOfADeactivatedPrincipal(t *testing.T) {
	t.Parallel()
	w := credentialWorld(t)
	phone, _ := w.Issue(t, w.Sam, "Sam's phone")
	laptop, onPhone := w.Live(t, w.Sam), w.Live(t, phone)
	robin := w.Live(t, w.Robin)
	head := w.Head(t)

	var p apigen.Principal
	start := time.Now()
	r := w.Must(t, w.Alex, http.MethodPost, "/api/v1/principals/"+w.Sam.ID.String()+"/deactivate", "", http.StatusOK, &p)
	laptop.EndsWith("principal_deactivated", start, e2etest.RevocationDelay+e2etest.CloseSlack)
	onPhone.EndsWith("principal_deactivated", start, e2etest.RevocationDelay+e2etest.CloseSlack)
	if p.Id != w.Sam.ID || p.DeactivatedAt == nil {
		t.Errorf("deactivatePrincipal = %+v", p)
	}
	w.ExpectEvents(t, head, r, e2etest.WantEvent{Typ: identity.EventPrincipalDeactivated, Kind: kernel.ResourcePrincipal, ID: w.Sam.ID, Actor: w.Alex.ID})
	for _, a := range []e2etest.Actor{w.Sam, phone} {
		w.Must(t, a, http.MethodGet, "/api/v1/me", "", http.StatusUnauthorized, nil)
	}
	got, _ := robin.Until(w.Head(t), false)
	if len(got) != 1 || got[0].Type != identity.EventPrincipalDeactivated {
		t.Errorf("Robin got %+v, want principal.deactivated", got)
	}

	// Idempotent: no second event.
	head = w.Head(t)
	w.Must(t, w.Alex, http.MethodPost, "/api/v1/principals/"+w.Sam.ID.String()+"/deactivate", "", http.StatusOK, &p)
	w.ExpectNone(t, head, "a second deactivation")

	var back apigen.Principal
	r = w.Must(t, w.Alex, http.MethodPost, "/api/v1/principals/"+w.Sam.ID.String()+"/reactivate", "", http.StatusOK, &back)
	if back.Id != w.Sam.ID || back.DeactivatedAt != nil {
		t.Errorf("reactivatePrincipal = %+v", back)
	}
	w.ExpectEvents(t, head, r, e2etest.WantEvent{Typ: identity.EventPrincipalReactivated, Kind: kernel.ResourcePrincipal, ID: w.Sam.ID, Actor: w.Alex.ID})
	w.Must(t, w.Sam, http.MethodGet, "/api/v1/me", "", http.StatusOK, &p)
	w.Live(t, phone)
}

// TestTokenOperations: listing one's own tokens (never a secret, paged), an owner listing
// anyone's, revoking one's own twice (one event), and what a non-owner may not do.
func TestTokenOperations(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	_, phoneID := w.Issue(t, w.Sam, "Sam's phone")
	_, robinsID := w.Issue(t, w.Robin, "Robin's laptop")

	// Sam's tokens: the one of the world and the phone's, one page at a time.
	var ids []uuid.UUID
	after := ""
	for range 3 {
		r := w.Must(t, w.Sam, http.MethodGet, "/api/v1/tokens?limit=1"+after, "", http.StatusOK, nil)
		if strings.Contains(string(r.Body), "bothy_") || strings.Contains(string(r.Body), `"token"`) {
			t.Errorf("listTokens shows a secret: %s", r.Body)
		}
		var page apigen.TokenList
		if err := json.Unmarshal(r.Body, &page); err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			if it.PrincipalId != w.Sam.ID {
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
	w.Must(t, w.Alex, http.MethodGet, "/api/v1/tokens?principal_id="+w.Sam.ID.String(), "", http.StatusOK, &list)
	if len(list.Items) != 2 || list.Items[1].DeviceName == nil || *list.Items[1].DeviceName != "Sam's phone" || list.Items[1].LastUsedAt != nil {
		t.Errorf("Alex lists Sam's tokens: %+v", list.Items)
	}

	w.Refuse(t,
		e2etest.Refusal{Name: "Sam lists Robin's tokens", As: w.Sam, Method: http.MethodGet, Path: "/api/v1/tokens?principal_id=" + w.Robin.ID.String(), Status: http.StatusForbidden, Code: "forbidden"},
		e2etest.Refusal{Name: "Sam revokes Robin's token", As: w.Sam, Method: http.MethodPost, Path: "/api/v1/tokens/" + robinsID.String() + "/revoke", Status: http.StatusNotFound, Code: "not_found"},
		e2etest.Refusal{Name: "Sam revokes an unknown token", As: w.Sam, Method: http.MethodPost, Path: "/api/v1/tokens/" + uuid.NewString() + "/revoke", Status: http.StatusNotFound, Code: "not_found"},
		e2etest.Refusal{Name: "Sam deactivates Robin", As: w.Sam, Method: http.MethodPost, Path: "/api/v1/principals/" + w.Robin.ID.String() + "/deactivate", Status: http.StatusForbidden, Code: "forbidden"},
		e2etest.Refusal{Name: "Sam reactivates Robin", As: w.Sam, Method: http.MethodPost, Path: "/api/v1/principals/" + w.Robin.ID.String() + "/reactivate", Status: http.StatusForbidden, Code: "forbidden"},
		e2etest.Refusal{Name: "Sam deactivates himself", As: w.Sam, Method: http.MethodPost, Path: "/api/v1/principals/" + w.Sam.ID.String() + "/deactivate", Status: http.StatusForbidden, Code: "forbidden"},
		e2etest.Refusal{Name: "Alex deactivates the last owner", As: w.Alex, Method: http.MethodPost, Path: "/api/v1/principals/" + w.Alex.ID.String() + "/deactivate", Status: http.StatusConflict, Code: "conflict"},
		e2etest.Refusal{Name: "Alex deactivates nobody", As: w.Alex, Method: http.MethodPost, Path: "/api/v1/principals/" + uuid.NewString() + "/deactivate", Status: http.StatusNotFound, Code: "not_found"},
	)
	w.Must(t, w.Robin, http.MethodGet, "/api/v1/me", "", http.StatusOK, nil)

	head := w.Head(t)
	r := w.Must(t, w.Sam, http.MethodPost, "/api/v1/tokens/"+phoneID.String()+"/revoke", "", http.StatusOK, nil)
	w.ExpectEvents(t, head, r, e2etest.WantEvent{Typ: identity.EventTokenRevoked, Kind: kernel.ResourcePrincipal, ID: w.Sam.ID, Actor: w.Sam.ID, Audience: w.Sam.ID})
	var again apigen.TokenInfo
	w.Must(t, w.Sam, http.MethodPost, "/api/v1/tokens/"+phoneID.String()+"/revoke", "", http.StatusOK, &again)
	if got := w.EventsAfter(t, head); len(got) != 1 {
		t.Errorf("two revokes appended %d events, want 1", len(got))
	}
	// An owner revokes anyone's token.
	w.Must(t, w.Alex, http.MethodPost, "/api/v1/tokens/"+robinsID.String()+"/revoke", "", http.StatusOK, nil)

	// With a second owner, the first may be deactivated; the second is then the last.
	w.Must(t, w.Alex, http.MethodPost, "/api/v1/grants", fmt.Sprintf(`{"principal_id":%q,"resource_kind":"instance","role":"owner"}`, w.Robin.ID), http.StatusCreated, nil)
	w.Must(t, w.Robin, http.MethodPost, "/api/v1/principals/"+w.Alex.ID.String()+"/deactivate", "", http.StatusOK, nil)
	w.Refuse(t, e2etest.Refusal{Name: "Robin deactivates the last active owner", As: w.Robin, Method: http.MethodPost, Path: "/api/v1/principals/" + w.Robin.ID.String() + "/deactivate", Status: http.StatusConflict, Code: "conflict"})
}

// recheckInterval is gateway.credential_recheck_interval in the recheck test.
const recheckInterval = 300 * time.Millisecond

// byHand changes identity's tables on the world's database as an operator would in SQL.
func byHand(t *testing.T, w *e2etest.ChatWorld, change func(ctx context.Context, conn *pgx.Conn, id uuid.UUID) error, id uuid.UUID) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), w.Env.DatabaseURL)
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
	phone, phoneToken := w.Issue(t, w.Sam, "Sam's phone")
	tablet, tabletToken := w.Issue(t, w.Sam, "Sam's tablet")
	onPhone, onTablet, robin, laptop := w.Live(t, phone), w.Live(t, tablet), w.Live(t, w.Robin), w.Live(t, w.Sam)
	head := w.Head(t)

	start := time.Now()
	byHand(t, w, identitytest.RevokeTokenByHand, phoneToken)
	onPhone.EndsWith("token_revoked", start, recheckInterval+e2etest.CloseSlack)

	start = time.Now()
	byHand(t, w, identitytest.DeactivateByHand, w.Robin.ID)
	robin.EndsWith("principal_deactivated", start, recheckInterval+e2etest.CloseSlack)

	start = time.Now()
	byHand(t, w, identitytest.RevokeDeviceOfTokenByHand, tabletToken)
	onTablet.EndsWith("token_revoked", start, recheckInterval+e2etest.CloseSlack)

	w.ExpectNone(t, head, "changes made by hand")
	laptop.Send(`{"op":"ping"}`)
	laptop.Expect("pong")
}
