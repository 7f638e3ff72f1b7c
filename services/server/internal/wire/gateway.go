package wire

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	agentsapp "bothy.example.com/server/internal/agents/app"
	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/adapters/gateway"
	synchttp "bothy.example.com/server/internal/sync/adapters/httpapi"
	syncapp "bothy.example.com/server/internal/sync/app"
)

// newGateway builds the WebSocket gateway over the very pieces the REST handlers use:
// identity's Authenticator, the Authorizer, catch-up and the snapshot, the snapshot's JSON as
// getSnapshot writes it, and a Delivery over the Authorizer and identity's Directory (the
// per-row rule and encoder catch-up uses, with the actors named as catch-up names them and the
// invocation tokens catch-up adds) for live events from the process's log tail.
//
// The gateway checks token expiry with the process's clock (identity's), so a test that moves
// the clock past a token's expiry sees the connection close.
func newGateway(a modules, l eventLog, lim *limits, clk clock.Clock, logger *slog.Logger, cfg gateway.Config) (*gateway.Gateway, error) {
	delivery, err := syncapp.NewDelivery(a.sync.authorizer, a.sync.actors)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	// Live invocation.requested events carry their token to their agent, as catch-up's do.
	delivery = delivery.WithInvocationTokens(a.invocations)
	gw, err := gateway.New(gateway.Deps{
		Authenticator:   a.sync.identity,
		Credentials:     gatewayCredentials{ids: a.sync.identity},
		FailedAuth:      lim.gatewayFailedAuth(),
		Authorizer:      a.sync.authorizer,
		CatchUp:         a.sync.catchUp,
		Consumers:       a.sync.consumers,
		Heartbeats:      gatewayHeartbeats{presence: a.presence},
		FrameWrites:     lim.gatewayFrameWrites(),
		Snapshot:        a.sync.snapshot,
		SnapshotEncoder: gateway.SnapshotEncoderFunc(snapshotJSON),
		Tail:            l.tail,
		Delivery:        delivery,
		Config:          cfg,
		Logger:          logger,
		Clock:           clk,
	})
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	return gw, nil
}

// gatewayCredentials binds the gateway's Credentials to identity's batched check, mapping
// identity's ends to the gateway's: a revoked device ends its tokens as a revocation does.
type gatewayCredentials struct {
	ids identity.Credentials
}

// Ended implements gateway.Credentials.
func (c gatewayCredentials) Ended(ctx context.Context, tokenIDs []uuid.UUID) (map[uuid.UUID]gateway.CredentialEnd, error) {
	ended, err := c.ids.Ended(ctx, tokenIDs)
	if err != nil {
		return nil, fmt.Errorf("recheck credentials: %w", err)
	}
	out := make(map[uuid.UUID]gateway.CredentialEnd, len(ended))
	for id, e := range ended {
		switch e {
		case identity.CredentialExpired:
			out[id] = gateway.CredentialExpired
		case identity.CredentialDeactivated:
			out[id] = gateway.CredentialDeactivated
		default: // revoked, gone, device revoked
			out[id] = gateway.CredentialRevoked
		}
	}
	return out, nil
}

// gatewayHeartbeats binds the gateway's Heartbeats to the agents module's presence: an
// agent's heartbeat frame is recorded exactly as sendAgentHeartbeat records one.
type gatewayHeartbeats struct {
	presence *agentsapp.Presence
}

// Heartbeat implements gateway.Heartbeats.
func (h gatewayHeartbeats) Heartbeat(ctx context.Context, billingMode string, hasMode bool) error {
	var mode *string
	if hasMode {
		mode = &billingMode
	}
	if _, err := h.presence.Heartbeat(ctx, mode); err != nil {
		return fmt.Errorf("heartbeat frame: %w", err)
	}
	return nil
}

// snapshotJSON is the body getSnapshot answers for v, for the gateway's ready frame: the
// bytes the snapshot's build encoded once (and getSnapshot sends), else v encoded now.
func snapshotJSON(v syncmod.SnapshotView) ([]byte, error) {
	if v.Body != nil {
		return v.Body, nil
	}
	b, err := synchttp.EncodeSnapshot(v)
	if err != nil {
		return nil, fmt.Errorf("encode snapshot: %w", err)
	}
	return b, nil
}

// Gateway returns the process's WebSocket gateway, nil without the gateway role. Tests and
// benchmarks use it to count connections and to shut it down; the router mounts it at
// gateway.Path, and Serve runs the log tail it needs (a test that serves App.Handler itself
// runs Tail().Run).
func (a *App) Gateway() *gateway.Gateway {
	return a.gateway
}

// operationsOnly answers 404 for every operation that is not public, for a process without
// the api role: it serves the gateway and the operational endpoints (health, readiness,
// metrics; their OpenAPI security is empty), nothing else of the API.
func operationsOnly(public map[route]struct{}) apigen.MiddlewareFunc {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if rctx := chi.RouteContext(r.Context()); rctx != nil {
				if _, ok := public[route{method: routeMethod(r), pattern: rctx.RoutePattern()}]; ok {
					next.ServeHTTP(w, r)
					return
				}
			}
			problem.Write(w, r, problem.New(problem.ErrNotFound, "This process serves no API operations (it runs without the api role)."))
		})
	}
}

// shutdownGateway closes the gateway's connections with 1001 after their in-flight frames,
// waiting at most until ctx ends; a no-op without the gateway role.
func (a *App) shutdownGateway(ctx context.Context) error {
	if a.gateway == nil {
		return nil
	}
	if err := a.gateway.Shutdown(ctx); err != nil {
		return fmt.Errorf("close websockets: %w", err)
	}
	return nil
}

// gatewayHandler is the gateway as the router mounts it; nil (not mounted) without the
// gateway role.
func (a *App) gatewayHandler() http.Handler {
	if a.gateway == nil {
		return nil
	}
	return a.gateway
}
