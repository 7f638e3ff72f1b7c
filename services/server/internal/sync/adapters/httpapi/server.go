// Package httpapi is the sync module's HTTP edge: the strict-server handlers of listEvents and
// getSnapshot over the sync.CatchUp and sync.Snapshot ports, and of updateReadState,
// saveDraft, deleteDraft, putSetting and putSidebar over sync.Personal (one file each, named
// after the operation), with the mapping between the API's models and the module's
// (mapping.go, snapshot_mapping.go).
//
// The handlers are thin, and these are their rules:
//
//   - The owner is the actor. No handler takes a principal from the request: the use cases
//     read the actor from the context, so a principal can only ever change its own data.
//   - Authorization. Spec 04 asks every operation to authorize before it does anything.
//     putSetting and putSidebar act on the actor itself (setting.write on the principal
//     resource with the actor's id), a resource known before any read, so the handler asks
//     authorize.Authorizer first and an actor without the action is refused before its body
//     is looked at; the use case asks again, which changes nothing. updateReadState,
//     saveDraft and deleteDraft act on a thread or a channel whose ancestors only the use
//     case loads, so it authorizes right after that read (readstate.write on the thread,
//     draft.write on the channel) and the handler does not.
//   - Problems are errors. Every refusal, bad input, unknown id or conflict is returned as the
//     error of its kind (kernel/problem), unchanged, so the server's one edge writer
//     (problem.Write through the strict server's error hook) renders it. The handlers add only
//     the errors of the request's shape: a missing body names body, a putSetting body without
//     value names value, a putSidebar body without sections names sections. A value of JSON
//     null is passed on as it is: the use case refuses it, naming value.
//   - Successes are typed responses with the status of api/openapi.yaml; deleteDraft answers
//     204 also when there was no draft.
//   - No JSON null: optional members are omitted when empty (the thread of a channel's
//     draft) and lists are [] even when the module hands over nil.
package httpapi

import (
	"context"
	"errors"
	"fmt"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
)

// Deps are the collaborators of a Server, all required.
type Deps struct {
	// Authorizer decides putSetting and putSidebar, whose resource is the actor, before they
	// run.
	Authorizer authorize.Authorizer
	// Personal reads and writes the actor's personal data.
	Personal syncmod.Personal
	// CatchUp checks cursors and pages through the events after them (listEvents).
	CatchUp syncmod.CatchUp
	// Snapshot builds the actor's snapshot (getSnapshot).
	Snapshot syncmod.Snapshot
	// Consumers keeps the durable consumers of agents and apps (createConsumer, ackEvents,
	// listConsumerEvents, ...); nil answers those operations 404.
	Consumers syncmod.Consumers
}

// Server implements the sync operations of apigen.StrictServerInterface (ListEvents,
// GetSnapshot, UpdateReadState, SaveDraft, DeleteDraft, PutSetting, PutSidebar); wire embeds it
// in the one strict server it mounts.
type Server struct {
	authz    authorize.Authorizer
	personal syncmod.Personal
	catchUp  syncmod.CatchUp
	snapshot syncmod.Snapshot
	// consumers is nil when the server has none.
	consumers syncmod.Consumers
}

// New returns a Server over deps; it fails when a dependency is missing, so a wiring mistake
// stops the process at start instead of failing the first request.
func New(deps Deps) (*Server, error) {
	var errs []error
	if deps.Authorizer == nil {
		errs = append(errs, errors.New("authorizer is nil"))
	}
	if deps.Personal == nil {
		errs = append(errs, errors.New("personal port is nil"))
	}
	if deps.CatchUp == nil {
		errs = append(errs, errors.New("catch-up port is nil"))
	}
	if deps.Snapshot == nil {
		errs = append(errs, errors.New("snapshot port is nil"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("sync http: %w", err)
	}
	return &Server{authz: deps.Authorizer, personal: deps.Personal, catchUp: deps.CatchUp, snapshot: deps.Snapshot, consumers: deps.Consumers}, nil
}

// authorizeSelf decides setting.write on the actor's own principal. Without an actor the id
// is uuid.Nil and the authorizer answers unauthenticated.
func (s *Server) authorizeSelf(ctx context.Context) error {
	a, _ := actor.From(ctx)
	return s.authz.Authorize(ctx, kernel.ActionSettingWrite, authorize.Resource{Kind: kernel.ResourcePrincipal, ID: a.PrincipalID})
}

// The durable consumer operations (spec 03, "Durable consumers"). The use cases authorize
// (events.catch_up on the instance) and refuse people; the handlers only map.

// errConsumersOff answers the consumer operations of a server built without them.
var errConsumersOff = problem.New(problem.ErrNotFound, "Durable consumers are not available.")
