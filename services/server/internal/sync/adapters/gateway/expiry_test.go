package gateway_test

import (
	"fmt"
	"testing"
	"time"

	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/sync/adapters/gateway"
)

// TestNoFrameAfterTheTokenExpired: expiry is ordered with delivery as revocation is (spec 03,
// "A session ends with its credential"; ADR 0020). Once the gateway's clock reached the
// token's expiry, the connection gets no further frame but the final error token_expired and
// the close 4008: not the live event committed at the expiry, not the catch-up of a resume,
// not the snapshot of a hello. The sweeper cannot close the connection first (it runs once a
// minute here), so this holds by the check before each frame alone; each case runs several
// times, since a race between the sweep and the delivery would not fail every run.
func TestNoFrameAfterTheTokenExpired(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// run connects Sam with the expiring token while the clock stands before its expiry,
		// moves the clock to the expiry with expire, and makes the gateway owe the connection
		// a frame.
		run func(t *testing.T, e *env, expire func()) *client
	}{
		{"a live event committed at the expiry", func(t *testing.T, e *env, expire func()) *client {
			c := e.dialAs(t, "sam-expiring")
			c.send(`{"op":"hello"}`)
			c.expect("ready")
			before := e.append(message(help, alex))
			if got := c.events(before[0].Seq); len(got) != 1 {
				t.Fatalf("before the expiry: seqs %v, want the event", got)
			}
			expire()
			e.append(message(help, alex))
			return c
		}},
		{"catch-up after the expiry", func(t *testing.T, e *env, expire func()) *client {
			e.append(message(help, alex), message(news, robin))
			c := e.dialAs(t, "sam-expiring")
			expire()
			c.send(`{"op":"resume","after":0}`)
			return c
		}},
		{"a snapshot after the expiry", func(t *testing.T, e *env, expire func()) *client {
			c := e.dialAs(t, "sam-expiring")
			expire()
			c.send(`{"op":"hello"}`)
			return c
		}},
	} {
		for i := range 5 {
			t.Run(fmt.Sprintf("%s/%d", tc.name, i), func(t *testing.T) {
				t.Parallel()
				fake := clock.NewFake(tokenExpiry.Add(-time.Minute))
				e := newEnv(t, withClock(fake))
				c := tc.run(t, e, func() { fake.Set(tokenExpiry) })
				f := c.next()
				if f.Op != "error" || f.Code != "token_expired" {
					t.Fatalf("frame %s after the expiry, want the error token_expired", f.raw)
				}
				if got := c.closed(); got != gateway.CloseCredentialEnded {
					t.Errorf("closed with %d, want %d", got, gateway.CloseCredentialEnded)
				}
			})
		}
	}
}

// TestTokenBeforeItsExpiryIsServed: a token whose expiry the clock has not reached gets its
// frames (the check before each frame refuses nothing early).
func TestTokenBeforeItsExpiryIsServed(t *testing.T) {
	t.Parallel()
	fake := clock.NewFake(tokenExpiry.Add(-time.Microsecond))
	e := newEnv(t, withClock(fake))
	stored := e.append(message(help, alex))
	c := e.dialAs(t, "sam-expiring")
	c.send(`{"op":"resume","after":0}`)
	if got := c.events(stored[0].Seq); len(got) != 1 {
		t.Fatalf("seqs %v, want the event", got)
	}
	c.expect("catchup.complete")
	c.send(`{"op":"ping"}`)
	c.expect("pong")
}
