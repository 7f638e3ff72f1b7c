package gateway

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/sync/domain"
)

// A session ends with its credential (spec 03, "A session ends with its credential"): when
// its token is revoked, when its principal is deactivated, and when its token expires, the
// gateway sends a final error frame naming the reason and closes with CloseCredentialEnded.
// Revocations and deactivations are events of the log (identity appends them in the
// transaction of the change), so every gateway process learns of them from its log tail, as
// soon as the tail reads them (LISTEN/NOTIFY; sync.tail_poll_interval at the latest). The
// hub scans each tail batch for them on arrival, before the batch window, and ends every
// matching session of the process, also those that are not live yet or that lagged. Expiry
// has no event: the writer checks it with the gateway's clock (Deps.Clock, injectable)
// before each frame (session.expired), so no event committed after it is delivered, and the
// sweeper checks every session's expiry each gateway.revocation_max_delay, so a connection
// owed no frame closes too. A credential can also end without an
// event the hub sees: a token revoked or a principal deactivated by hand in the database, a
// device revoked, a revocation the tail did not hand the hub while it had dropped it. So
// every gateway.credential_recheck_interval the gateway asks identity, in one query for the
// whole process (Deps.Credentials, the distinct tokens of the open sessions), which of them
// no longer authenticate, and ends their sessions the same way.

// The event types that end sessions (spec 02; identity appends them).
const (
	eventTokenRevoked         = "token.revoked"
	eventPrincipalDeactivated = "principal.deactivated"
)

// The reasons a credential ends: the code of the final error frame and the close reason.
const (
	reasonTokenRevoked         = "token_revoked"
	reasonTokenExpired         = "token_expired"
	reasonPrincipalDeactivated = "principal_deactivated"
)

// reasonDetail is the detail of each reason's error frame.
var reasonDetail = map[string]string{
	reasonTokenRevoked:         "The connection's token was revoked. Authenticate with another token.",
	reasonTokenExpired:         "The connection's token expired. Authenticate with another token.",
	reasonPrincipalDeactivated: "The connection's principal was deactivated.",
}

// credentialEnding is how a session ends for reason.
func credentialEnding(reason string) *ending {
	return &ending{code: CloseCredentialEnded, reason: reason,
		frame: errorFrame(problem.Problem{Code: reason, Detail: reasonDetail[reason]})}
}

// credential is what the gateway knows of a session's credential: the token and principal it
// authenticated (actor.Actor's TokenID and PrincipalID) and the token's expiry (zero: never).
type credential struct {
	tokenID     uuid.UUID
	principalID uuid.UUID
	expiresAt   time.Time
}

// ended collects the tokens revoked and the principals deactivated in a tail batch.
type ended struct {
	tokens     map[uuid.UUID]struct{}
	principals map[uuid.UUID]struct{}
}

// endedIn scans events for revocations and deactivations; ok is false when there is none,
// which is almost always (one comparison of the type per event).
func endedIn(events []domain.StoredEvent) (e ended, ok bool) {
	for i := range events {
		ev := &events[i]
		switch ev.Type {
		case eventTokenRevoked:
			var p struct {
				TokenID uuid.UUID `json:"token_id"`
			}
			if json.Unmarshal(ev.Payload, &p) != nil || p.TokenID == uuid.Nil {
				continue // a redacted or malformed payload names no token
			}
			if e.tokens == nil {
				e.tokens = map[uuid.UUID]struct{}{}
			}
			e.tokens[p.TokenID] = struct{}{}
		case eventPrincipalDeactivated:
			if e.principals == nil {
				e.principals = map[uuid.UUID]struct{}{}
			}
			e.principals[ev.ResourceID] = struct{}{}
		default:
			continue
		}
		ok = true
	}
	return e, ok
}

// reason returns why c ended by e; empty when it did not.
func (e ended) reason(c credential) string {
	if _, ok := e.principals[c.principalID]; ok && c.principalID != uuid.Nil {
		return reasonPrincipalDeactivated
	}
	if _, ok := e.tokens[c.tokenID]; ok && c.tokenID != uuid.Nil {
		return reasonTokenRevoked
	}
	return ""
}

// endCredentials ends every session of the gateway whose credential one of events ended; the
// hub calls it for each tail batch as it arrives.
func (g *Gateway) endCredentials(events []domain.StoredEvent) {
	e, ok := endedIn(events)
	if !ok {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for s := range g.sessions {
		s.checkCredential(e.reason)
	}
}

// endExpired ends every session whose token expired at now.
func (g *Gateway) endExpired(now time.Time) {
	expired := func(c credential) string {
		if !c.expiresAt.IsZero() && !now.Before(c.expiresAt) {
			return reasonTokenExpired
		}
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for s := range g.sessions {
		s.checkCredential(expired)
	}
}

// sweep checks the sessions' expiry every gateway.revocation_max_delay until stop closes.
// It runs while the gateway has sessions (started by the first, stopped by the last).
func (g *Gateway) sweep(stop <-chan struct{}) {
	t := time.NewTicker(g.cfg.RevocationMaxDelay)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			g.endExpired(g.clock.Now())
		}
	}
}

// recheck re-validates the open sessions' tokens every gateway.credential_recheck_interval
// until stop closes; it runs while the gateway has sessions, as the sweeper does.
func (g *Gateway) recheck(stop <-chan struct{}) {
	t := time.NewTicker(g.cfg.CredentialRecheckInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			g.recheckCredentials()
		}
	}
}

// recheckCredentials asks Credentials, in one query, which tokens of the open sessions no
// longer authenticate, and ends their sessions. A failure is logged and left to the next
// round; a round takes at most the interval.
func (g *Gateway) recheckCredentials() {
	ids := map[uuid.UUID]struct{}{}
	g.mu.Lock()
	for s := range g.sessions {
		if id, ok := s.checkedToken(); ok {
			ids[id] = struct{}{}
		}
	}
	g.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(g.shared, g.cfg.CredentialRecheckInterval)
	defer cancel()
	ended, err := g.deps.Credentials.Ended(ctx, slices.Collect(maps.Keys(ids)))
	if err != nil {
		if g.shared.Err() == nil {
			g.log.WarnContext(ctx, "gateway credential recheck failed: retried next round", "error", err.Error(),
				"sessions", len(ids))
		}
		return
	}
	if len(ended) == 0 {
		return
	}
	reason := func(c credential) string {
		switch ended[c.tokenID] {
		case CredentialRevoked:
			return reasonTokenRevoked
		case CredentialExpired:
			return reasonTokenExpired
		case CredentialDeactivated:
			return reasonPrincipalDeactivated
		}
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for s := range g.sessions {
		s.checkCredential(reason)
	}
}

// checkedToken returns the token of s when its credential is still to be checked: known,
// with a token, and not ended.
func (s *session) checkedToken() (uuid.UUID, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || s.credEnded != "" || !s.authedCred || s.cred.tokenID == uuid.Nil {
		return uuid.Nil, false
	}
	return s.cred.tokenID, true
}

// checkCredential queues the end of s when reason names one for its credential. It takes
// the session's lock alone and starts no writer unless the session ends, so checking every
// session of a process costs a lock each.
func (s *session) checkCredential(reason func(credential) string) {
	s.mu.Lock()
	r := ""
	if !s.ended && s.credEnded == "" && s.authedCred {
		r = reason(s.cred)
	}
	s.mu.Unlock()
	if r != "" {
		s.queue(func() { s.credEnded = r })
	}
}
