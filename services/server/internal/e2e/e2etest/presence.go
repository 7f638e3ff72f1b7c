package e2etest

// PresenceChanged reads frames until an agent.presence_changed event (skipping heartbeats,
// cursors and other events) and returns its envelope.
func (c *GatewayClient) PresenceChanged() GatewayEnvelope {
	c.T.Helper()
	for {
		f := c.Next()
		if f.Op == "event" {
			if e := f.envelope(c.T); e.Type == "agent.presence_changed" {
				return e
			}
		}
	}
}

// ExpectPong reads frames until a pong (skipping heartbeats, cursors and events).
func (c *GatewayClient) ExpectPong() {
	c.T.Helper()
	for {
		if c.Next().Op == "pong" {
			return
		}
	}
}
