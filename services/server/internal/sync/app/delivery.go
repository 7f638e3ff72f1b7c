package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/sync/domain"
)

// eventPermissionsChanged is the personal event authz appends to a grantee whenever what it
// may see changed (authz/app.EventPermissionsChanged; the type name is the contract).
const eventPermissionsChanged = "permissions.changed"

// Delivery is the one rule that decides and encodes stored events for a receiver, shared by
// both transports: catch-up pages (CatchUp.Page, REST and the gateway's resume) and the
// gateway's live events from the log tail. So a stored event reaches a client, and is
// encoded for it, alike whichever way it travels (spec 03):
//
//   - a personal event only to its audience, never authorized (it is the receiver's own);
//   - every other event only when authorize(receiver, receive_action,
//     authorize.ResourceFromEvent(...)) allows it in filter mode (no denial audit), with the
//     permissions of delivery time;
//   - envelopes by domain.AppendEnvelope, the actors named in one directory query per run of
//     events, trace_context only for agent receivers.
//
// It is safe for concurrent use; each Filter it makes belongs to one receiver and one
// goroutine.
type Delivery struct {
	authorizer DeciderSource
	directory  PrincipalRefs
	tokens     InvocationTokens
}

// EventInvocationRequested is the agents module's event that asks an agent to act on an
// invocation (the type name is the contract, ADR 0031): delivered to its agent, it carries the
// delivery-only members invocation_token and redelivered.
const EventInvocationRequested = "invocation.requested"

// InvocationTokens derives the token of an invocation, the same for every delivery of it
// (wire binds the agents module's key). The consumer owns the port: delivery asks it only
// for the invocation.requested events of a page or batch.
type InvocationTokens interface {
	// InvocationToken returns the token of the invocation id; an error when the key cannot be
	// read (the database).
	InvocationToken(ctx context.Context, invocationID uuid.UUID) (string, error)
}

// WithInvocationTokens makes d add the delivery-only members of invocation.requested events
// (Only) from tokens, and returns d. It is called once, before d is used; without it, no
// delivery carries them.
func (d *Delivery) WithInvocationTokens(tokens InvocationTokens) *Delivery {
	d.tokens = tokens
	return d
}

// Only returns the delivery-only members of the events that have any, by event id: every
// invocation.requested gets its invocation's token and whether its attempt is above 1. Only
// personal events addressed to the receiver reach Encode, so an invocation's token goes to its
// agent alone. nil when no event has any (or no token source is set).
func (d *Delivery) Only(ctx context.Context, events []domain.StoredEvent) (map[uuid.UUID]domain.DeliveryOnly, error) {
	if d.tokens == nil {
		return nil, nil
	}
	var out map[uuid.UUID]domain.DeliveryOnly
	for i := range events {
		e := &events[i]
		if e.Type != EventInvocationRequested || e.Redacted {
			continue
		}
		var p struct {
			ID      uuid.UUID `json:"id"`
			Attempt int64     `json:"attempt"`
		}
		if err := json.Unmarshal(e.Payload, &p); err != nil || p.ID == uuid.Nil {
			return nil, fmt.Errorf("seq %d: invocation payload: %w", e.Seq, errors.Join(err, errors.New("no invocation id")))
		}
		tok, err := d.tokens.InvocationToken(ctx, p.ID)
		if err != nil {
			return nil, fmt.Errorf("seq %d: invocation token: %w", e.Seq, err)
		}
		if out == nil {
			out = make(map[uuid.UUID]domain.DeliveryOnly)
		}
		out[e.ID] = domain.DeliveryOnly{InvocationToken: tok, Redelivered: p.Attempt > 1}
	}
	return out, nil
}

// NewDelivery returns the delivery rule over the authorizer (authz.Authorizer) and the
// directory (identity.Directory); it fails for a missing one, so a wiring mistake stops the
// process at start.
func NewDelivery(authorizer DeciderSource, directory PrincipalRefs) (*Delivery, error) {
	var errs []error
	if authorizer == nil {
		errs = append(errs, errors.New("authorizer is nil"))
	}
	if directory == nil {
		errs = append(errs, errors.New("directory is nil"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("sync: new delivery: %w", err)
	}
	return &Delivery{authorizer: authorizer, directory: directory}, nil
}

// receiverOf returns the actor of ctx if it may receive events at all:
// problem.ErrUnauthenticated without an actor, problem.ErrDevicePending for a device that
// awaits approval (personal events skip authorize, so the check cannot be left to it).
func receiverOf(ctx context.Context) (actor.Actor, error) {
	who, ok := actor.From(ctx)
	if !ok {
		return actor.Actor{}, problem.ErrUnauthenticated
	}
	if who.DevicePending {
		return actor.Actor{}, problem.ErrDevicePending
	}
	return who, nil
}

// For returns the filter of the actor in ctx, deciding with its current Scope.
// problem.ErrUnauthenticated without an actor, problem.ErrDevicePending for a pending device;
// other errors are the authorizer's.
func (d *Delivery) For(ctx context.Context) (*Filter, error) {
	who, err := receiverOf(ctx)
	if err != nil {
		return nil, err
	}
	decider, err := d.authorizer.ForActor(ctx)
	if err != nil {
		return nil, err
	}
	return &Filter{source: d.authorizer, receiver: who, decider: decider}, nil
}

// Names resolves the actors of events in one directory query (none when no event has an
// actor), for Encode. The result is read-only and may be shared by every receiver.
func (d *Delivery) Names(ctx context.Context, events []domain.StoredEvent) (map[uuid.UUID]domain.PrincipalRef, error) {
	// A page has hundreds of events but usually a handful of actors: the set starts small.
	seen := make(map[uuid.UUID]struct{}, min(len(events), 16))
	var ids []uuid.UUID
	for i := range events {
		id := events[i].ActorID
		if _, ok := seen[id]; ok || id == uuid.Nil {
			continue
		}
		seen[id] = struct{}{}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	found, err := d.directory.Refs(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("actors: %w", err)
	}
	out := make(map[uuid.UUID]domain.PrincipalRef, len(found))
	for id, r := range found {
		out[id] = domain.PrincipalRef{ID: r.ID, Kind: r.Kind, DisplayName: r.DisplayName, Handle: r.Handle}
	}
	return out, nil
}

// Filter decides, event by event and in seq order, what one receiver gets. It decides with
// the receiver's Scope as it was when the filter was made, refreshed whenever the receiver's
// own permissions.changed event passes (a grant change appends it in the same commit, so
// every event after a revoke is decided without the revoked grant). It is not safe for
// concurrent use.
type Filter struct {
	source   DeciderSource
	receiver actor.Actor
	decider  authz.Decider
}

// Receiver is the kind of envelope the receiver gets (trace_context only for agents).
func (f *Filter) Receiver() domain.ReceiverKind {
	return domain.ReceiverKind(f.receiver.Kind)
}

// Scope is the receiver's Scope the filter decides with now; catch-up builds its SQL
// prefilter from it.
func (f *Filter) Scope() authz.Scope {
	return f.decider.Scope()
}

// Allow reports whether the receiver gets e. A denial (not found or forbidden) is false; any
// other failure of authorize is an error. After delivering the receiver's own
// permissions.changed with a permission version above its Scope's (or one it cannot read),
// it refreshes the Scope through Refresh, whose error it returns with true.
func (f *Filter) Allow(ctx context.Context, e domain.StoredEvent) (bool, error) {
	action := e.ReceiveAction
	if e.Personal() {
		if e.AudienceID != f.receiver.PrincipalID {
			return false, nil
		}
		if e.Type == eventPermissionsChanged && newerPermissions(e.Payload, f.decider.Scope().PermissionVersion()) {
			return true, f.Refresh(ctx)
		}
		// An addressed type (an invocation) reaches its audience only while it may still act
		// on the resource: the register says what, the log does not store it.
		t, ok := domain.Lookup(e.Type)
		if !ok || t.AudienceAction == "" {
			return true, nil
		}
		action = t.AudienceAction
	}
	res := authorize.ResourceFromEvent(e.ResourceKind, e.ResourceID, e.SpaceID, e.ChannelID, e.ThreadID)
	err := f.decider.Authorize(authorize.Filter(ctx), action, res)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, problem.ErrNotFound), errors.Is(err, problem.ErrForbidden):
		return false, nil
	}
	return false, fmt.Errorf("authorize seq %d: %w", e.Seq, err)
}

// Refresh replaces the filter's Scope with the receiver's current one (the actor of ctx must
// be the receiver): the gateway calls it after it delivered events by catch-up, which may
// have carried a permissions.changed the filter did not see. Errors are the authorizer's;
// the filter keeps its Scope then.
func (f *Filter) Refresh(ctx context.Context) error {
	d, err := f.source.ForActor(ctx)
	if err != nil {
		return fmt.Errorf("refresh the scope: %w", err)
	}
	f.decider = d
	return nil
}

// newerPermissions reports whether a permissions.changed payload names a permission version
// above have; a payload without a readable version counts as newer (refreshing is safe).
func newerPermissions(payload json.RawMessage, have int64) bool {
	var p struct {
		PermissionVersion *int64 `json:"permission_version"`
	}
	if err := json.Unmarshal(payload, &p); err != nil || p.PermissionVersion == nil {
		return true
	}
	return *p.PermissionVersion > have
}

// envelopeOverhead is a generous guess of an envelope's size besides its payload, so that one
// buffer usually holds every envelope of a run: the members of a message event with its actor
// named, its three placement ids and a correlation id take about 550 bytes, and a buffer that
// is too small is copied into one twice its size (make bench's catch-up page measured it).
const envelopeOverhead = 640

// Encode writes the envelopes of events for a receiver of kind receiver, naming actors from
// names (Delivery.Names; an actor missing there is named by id only) and adding the
// delivery-only members of only (Delivery.Only; nil for none), into one buffer and
// returns them as views of it, each capped so that appending to one cannot touch the next.
// The result is empty, not nil, for no events.
func Encode(events []domain.StoredEvent, names map[uuid.UUID]domain.PrincipalRef, only map[uuid.UUID]domain.DeliveryOnly, receiver domain.ReceiverKind) []json.RawMessage {
	out, _ := encodeBuffer(nil, events, names, only, receiver)
	return out
}

// spareBuffers is how many idle page buffers encodeReusing keeps.
const spareBuffers = 8

// maxSpareBuffer is the largest buffer kept for reuse; the buffer of a page of huge payloads
// is left to the garbage collector.
const maxSpareBuffer = 4 << 20

// pageBuffers keeps idle buffers of encoded pages for reuse: a page of 500 envelopes takes
// about 450 KiB, and allocating (and clearing) that for every page was a tenth of a catch-up
// page's cost beside its bare read (make bench). A bounded free list rather than a sync.Pool,
// which every garbage collection empties.
var pageBuffers = make(chan []byte, spareBuffers)

// encodeReusing is Encode into a reused buffer. release hands the buffer back once the caller
// is done with the envelopes (sync.PageResult.Release); it does nothing a second time.
func encodeReusing(events []domain.StoredEvent, names map[uuid.UUID]domain.PrincipalRef, only map[uuid.UUID]domain.DeliveryOnly, receiver domain.ReceiverKind) (out []json.RawMessage, release func()) {
	var buf []byte
	select {
	case buf = <-pageBuffers:
	default:
	}
	out, buf = encodeBuffer(buf, events, names, only, receiver)
	released := false
	return out, func() {
		if !released {
			released = true
			giveBack(buf)
		}
	}
}

// giveBack keeps buf for the next page unless it is empty or too large, or spareBuffers are
// idle already.
func giveBack(buf []byte) {
	if cap(buf) == 0 || cap(buf) > maxSpareBuffer {
		return
	}
	select {
	case pageBuffers <- buf[:0]:
	default:
	}
}

// encodeBuffer is Encode into buf's memory when it is large enough (else into a new buffer),
// and returns the buffer the envelopes are views of too.
func encodeBuffer(buf []byte, events []domain.StoredEvent, names map[uuid.UUID]domain.PrincipalRef, only map[uuid.UUID]domain.DeliveryOnly, receiver domain.ReceiverKind) ([]json.RawMessage, []byte) {
	size := 0
	for i := range events {
		size += len(events[i].Payload) + envelopeOverhead
	}
	if cap(buf) < size {
		buf = make([]byte, 0, size)
	}
	buf = buf[:0]
	ends := make([]int, len(events))
	for i := range events {
		buf = domain.AppendDeliveredEnvelope(buf, events[i], names[events[i].ActorID], receiver, only[events[i].ID])
		ends[i] = len(buf)
	}
	out := make([]json.RawMessage, len(events))
	start := 0
	for i, end := range ends {
		out[i] = json.RawMessage(buf[start:end:end])
		start = end
	}
	return out, buf
}
