package gateway_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/sync/adapters/gateway"
)

// TestCredentialRecheck: a credential that ended without an event (the fake check says so)
// closes its connection with 4008 after an error frame naming why, within
// gateway.credential_recheck_interval; a connection whose token still authenticates stays
// open; each round asks once, for the distinct tokens of the open connections.
func TestCredentialRecheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		end  gateway.CredentialEnd
		code string
	}{
		{gateway.CredentialRevoked, "token_revoked"},
		{gateway.CredentialExpired, "token_expired"},
		{gateway.CredentialDeactivated, "principal_deactivated"},
	} {
		t.Run(tc.code, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, withConfig(func(c *gateway.Config) { c.CredentialRecheckInterval = 50 * time.Millisecond }))
			phone, again, laptop := e.dialAs(t, "sam-phone"), e.dialAs(t, "sam-phone"), e.dialAs(t, "alex-laptop")
			for _, c := range []*client{phone, again, laptop} {
				c.send(`{"op":"hello"}`)
				c.expect("ready")
			}
			// Rounds ran with the three connections open: one call each, two distinct tokens.
			deadline := time.Now().Add(waitTimeout)
			for {
				calls := e.creds.callsSoFar()
				if n := len(calls); n > 0 {
					last := slices.Clone(calls[n-1])
					slices.SortFunc(last, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
					want := []uuid.UUID{samPhone, alexLaptop}
					slices.SortFunc(want, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
					if slices.Equal(last, want) {
						break
					}
				}
				if time.Now().After(deadline) {
					t.Fatalf("recheck calls %v, want one with the two distinct tokens", calls)
				}
				time.Sleep(10 * time.Millisecond)
			}
			start := time.Now()
			e.creds.end(samPhone, tc.end)
			for _, c := range []*client{phone, again} {
				f := c.expect("error")
				if f.Code != tc.code {
					t.Errorf("error frame %s, want code %s", f.raw, tc.code)
				}
				if got := c.closed(); got != gateway.CloseCredentialEnded {
					t.Errorf("closed with %d, want %d", got, gateway.CloseCredentialEnded)
				}
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("closed after %v", took)
			}
			laptop.send(`{"op":"ping"}`)
			laptop.expect("pong")
		})
	}
}

// TestFailedAuthFrameIsCounted: an auth frame whose token is refused counts one failed
// authentication against the upgrade's client address; a right one counts nothing.
func TestFailedAuthFrameIsCounted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.dial(t)
	c.send(`{"op":"auth","token":"nobody-token"}`)
	c.expect("error")
	if got := c.closed(); got != gateway.CloseUnauthenticated {
		t.Errorf("closed with %d, want %d", got, gateway.CloseUnauthenticated)
	}
	ok := e.dial(t)
	ok.send(`{"op":"auth","token":"alex-token"}`)
	ok.send(`{"op":"hello"}`)
	ok.expect("ready")
	if got := e.failed.count(); !slices.Equal(got, []string{"127.0.0.1"}) {
		t.Errorf("failed authentications counted %v, want one from 127.0.0.1", got)
	}
}
