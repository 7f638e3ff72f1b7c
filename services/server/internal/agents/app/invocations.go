package app

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	gosync "sync"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/kernel/problem"
)

// The durable event types of invocations (spec 02, ADR 0031): addressed events (personal,
// delivered only while the audience may read the thread), resource the invocation's thread.
const (
	// InvocationRequested asks the agent (its audience) to act; appended with the message
	// and again by every redelivery.
	InvocationRequested = "invocation.requested"
	// InvocationFailed tells the invoking person and the agent (one event each) that the
	// agent never acknowledged the invocation.
	InvocationFailed = "invocation.failed"
)

// Configuration keys of invocations (ADR 0031).
var (
	// KeyInvocationAckTimeout is how long a delivered invocation waits for its
	// acknowledgement before the sweeper delivers it again.
	KeyInvocationAckTimeout = config.Define("agents.invocation_ack_timeout", config.KindDuration, "30s",
		"how long an agent has to acknowledge a delivered invocation (ackInvocation, a run or a reply naming it) before it is delivered again (more than 0)")
	// KeyInvocationMaxDeliveries bounds the deliveries of one invocation; after the last one
	// times out the invocation fails and invocation.failed tells the person.
	KeyInvocationMaxDeliveries = config.Define("agents.invocation_max_deliveries", config.KindInt, "5",
		"most deliveries of one invocation (invocation.requested events); when the last is not acknowledged within agents.invocation_ack_timeout the invocation fails (at least 1)")
	// KeyInvocationSweepInterval paces the sweeper that redelivers and fails invocations.
	KeyInvocationSweepInterval = config.Define("agents.invocation_sweep_interval", config.KindDuration, "5s",
		"how often the invocation sweeper looks for invocations whose acknowledgement timed out (more than 0)")
	// KeyInvocationSweepBatch bounds the invocations one sweep transaction handles, so one
	// sweep after an outage does not hold thousands of row locks; the rest wait for the next.
	KeyInvocationSweepBatch = config.Define("agents.invocation_sweep_batch", config.KindInt, "500",
		"most invocations one sweep redelivers or fails; the others wait for the next sweep (at least 1)")
)

// InvocationConfig is what invocations read from the configuration.
type InvocationConfig struct {
	// AckTimeout is agents.invocation_ack_timeout.
	AckTimeout time.Duration
	// MaxDeliveries is agents.invocation_max_deliveries.
	MaxDeliveries int
	// SweepInterval is agents.invocation_sweep_interval.
	SweepInterval time.Duration
	// SweepBatch is agents.invocation_sweep_batch.
	SweepBatch int
}

// InvocationConfigFrom reads the invocation keys; parse errors are collected in cfg.
func InvocationConfigFrom(cfg *config.Config) InvocationConfig {
	return InvocationConfig{
		AckTimeout:    cfg.Duration(KeyInvocationAckTimeout),
		MaxDeliveries: cfg.Int(KeyInvocationMaxDeliveries),
		SweepInterval: cfg.Duration(KeyInvocationSweepInterval),
		SweepBatch:    cfg.Int(KeyInvocationSweepBatch),
	}
}

// Validate reports values invocations cannot work with, naming the key.
func (c InvocationConfig) Validate() error {
	var errs []error
	if c.AckTimeout <= 0 {
		errs = append(errs, fmt.Errorf("%s must be more than 0", KeyInvocationAckTimeout.Name))
	}
	if c.MaxDeliveries < 1 {
		errs = append(errs, fmt.Errorf("%s must be at least 1", KeyInvocationMaxDeliveries.Name))
	}
	if c.SweepInterval <= 0 {
		errs = append(errs, fmt.Errorf("%s must be more than 0", KeyInvocationSweepInterval.Name))
	}
	if c.SweepBatch < 1 {
		errs = append(errs, fmt.Errorf("%s must be at least 1", KeyInvocationSweepBatch.Name))
	}
	return errors.Join(errs...)
}

// InvocationRow is an invocation as stored: the API's Invocation with its delivery time.
type InvocationRow struct {
	agents.Invocation
	// DeliveredAt is when the last invocation.requested was appended.
	DeliveredAt time.Time
	// UpdatedAt is when the row last changed.
	UpdatedAt time.Time
}

// InvocationStore keeps agents.invocations and the token key. Every method runs on the
// transaction of ctx when there is one; absent rows are problem.ErrNotFound.
type InvocationStore interface {
	// ActiveAgents returns those of ids that are agents and not archived.
	ActiveAgents(ctx context.Context, ids []uuid.UUID) ([]uuid.UUID, error)
	// InsertInvocation stores a new invocation.
	InsertInvocation(ctx context.Context, r InvocationRow) error
	// Invocation returns an invocation.
	Invocation(ctx context.Context, id uuid.UUID) (InvocationRow, error)
	// InvocationForUpdate returns an invocation locked until the transaction ends.
	InvocationForUpdate(ctx context.Context, id uuid.UUID) (InvocationRow, error)
	// UpdateInvocation stores an invocation's attempt, state, times and reply.
	UpdateInvocation(ctx context.Context, r InvocationRow) error
	// DueInvocations returns, locked, at most limit pending invocations not locked elsewhere
	// whose last delivery is at or before deliveredBefore, oldest delivery first.
	DueInvocations(ctx context.Context, deliveredBefore time.Time, limit int) ([]InvocationRow, error)
	// InvocationKey returns the key tokens are derived from.
	InvocationKey(ctx context.Context) ([]byte, error)
}

// Posted is a message just stored in its transaction, as invocations need it (chat hands it
// over through wire).
type Posted struct {
	// MessageID, ThreadID, ChannelID and SpaceID name and place the message (SpaceID uuid.Nil
	// in a direct message).
	MessageID, ThreadID, ChannelID, SpaceID uuid.UUID
	// MentionIDs are the principals it mentions who may read it.
	MentionIDs []uuid.UUID
	// ParticipantIDs are the participants of its direct message; empty in a standard channel.
	ParticipantIDs []uuid.UUID
}

// Reply is a message an agent posts with an invocation token: the answer to that invocation.
type Reply struct {
	// Token is the invocation_token of the postMessage body.
	Token string
	// MessageID and ThreadID name the reply and its thread.
	MessageID, ThreadID uuid.UUID
}

// InvocationsDeps are what Invocations needs, all required.
type InvocationsDeps struct {
	// Tx runs every change with its events in one transaction.
	Tx Transactor
	// Store keeps the invocations.
	Store InvocationStore
	// Authorizer decides thread.read for the actor and whether an agent may read a thread.
	Authorizer authz.Authorizer
	// Appender appends invocation.requested and invocation.failed.
	Appender kernel.Appender
	// Clock stamps the invocations and decides the timeouts (a test's fake clock).
	Clock clock.Clock
	// Config holds the invocation keys.
	Config InvocationConfig
}

// Invocations implements agents.Invocations, the invocations chat's posts make and answer,
// the redelivery sweep and the tokens of delivery (ADR 0031).
type Invocations struct {
	tx       Transactor
	store    InvocationStore
	authz    authz.Authorizer
	appender kernel.Appender
	clock    clock.Clock
	cfg      InvocationConfig

	keyMu gosync.Mutex
	key   []byte
}

var _ agents.Invocations = (*Invocations)(nil)

// NewInvocations returns Invocations over deps; it fails for a missing dependency or an
// invalid configuration.
func NewInvocations(deps InvocationsDeps) (*Invocations, error) {
	var errs []error
	for _, d := range []struct {
		missing bool
		name    string
	}{
		{deps.Tx == nil, "transaction runner"}, {deps.Store == nil, "invocation store"},
		{deps.Authorizer == nil, "authorizer"}, {deps.Appender == nil, "appender"}, {deps.Clock == nil, "clock"},
	} {
		if d.missing {
			errs = append(errs, fmt.Errorf("%s is nil", d.name))
		}
	}
	errs = append(errs, deps.Config.Validate())
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("agents: invocations: %w", err)
	}
	return &Invocations{tx: deps.Tx, store: deps.Store, authz: deps.Authorizer, appender: deps.Appender, clock: deps.Clock, cfg: deps.Config}, nil
}

// SweepInterval is agents.invocation_sweep_interval, for the loop that runs Sweep.
func (s *Invocations) SweepInterval() time.Duration { return s.cfg.SweepInterval }

// Invoke makes the invocations of a message a person just posted, in the message's
// transaction (ctx carries it): one per agent that the message mentions or, in a direct
// message, that takes part in it, that is not archived and that may read the thread, each
// inserted pending (attempt 1) with its invocation.requested. Messages of agents and apps
// invoke nothing (an agent answering another would loop).
func (s *Invocations) Invoke(ctx context.Context, p Posted) error {
	who, ok := actor.From(ctx)
	if !ok {
		return problem.ErrUnauthenticated
	}
	if who.Kind != actor.KindPerson {
		return nil
	}
	reasons := map[uuid.UUID]string{}
	var candidates []uuid.UUID
	for _, id := range p.ParticipantIDs {
		if id != who.PrincipalID {
			reasons[id] = agents.ReasonDirectMessage
			candidates = append(candidates, id)
		}
	}
	for _, id := range p.MentionIDs {
		if id == who.PrincipalID {
			continue
		}
		if _, seen := reasons[id]; !seen {
			candidates = append(candidates, id)
		}
		// A mention is the more precise reason, also in a direct message.
		reasons[id] = agents.ReasonMention
	}
	if len(candidates) == 0 {
		return nil
	}
	agentIDs, err := s.store.ActiveAgents(ctx, candidates)
	if err != nil {
		return fmt.Errorf("agents: invoke: %w", err)
	}
	slices.SortFunc(agentIDs, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
	res := threadResource(p.ThreadID, p.ChannelID, p.SpaceID)
	now := s.clock.Now().UTC()
	for _, agentID := range agentIDs {
		may, err := s.authz.MayRead(ctx, agentID, res)
		if err != nil {
			return fmt.Errorf("agents: invoke: %w", err)
		}
		if !may {
			continue
		}
		r := InvocationRow{
			Invocation: agents.Invocation{
				ID: ids.New(), AgentID: agentID, MessageID: p.MessageID, ThreadID: p.ThreadID, ChannelID: p.ChannelID,
				SpaceID: p.SpaceID, InvokedBy: who.PrincipalID, Reason: reasons[agentID], Attempt: 1,
				State: agents.InvocationPending, CreatedAt: now,
			},
			DeliveredAt: now, UpdatedAt: now,
		}
		if err := s.store.InsertInvocation(ctx, r); err != nil {
			return fmt.Errorf("agents: invoke: %w", err)
		}
		if err := s.appender.Append(ctx, invocationEvent(InvocationRequested, who.PrincipalID, r.AgentID, r.Invocation)); err != nil {
			return fmt.Errorf("agents: invoke: %w", err)
		}
	}
	return nil
}

// errBadToken names the invocation_token of a reply that is not the token of an invocation of
// the replying agent in the reply's thread.
var errBadToken = problem.Validation(problem.FieldError{Field: "invocation_token", Message: "must be the token of an invocation of yours in this thread"})

// Answer links a reply an agent posts with an invocation token to that invocation, in the
// reply's transaction (ctx carries it): the invocation becomes answered with the reply as its
// reply message, and its id is returned for the message. A token that does not verify, or
// names an invocation of another agent or another thread, is a validation error naming
// invocation_token; an invocation answered already is a problem.ErrConflict (one answer per
// invocation; an agent repeating a reply sends the same Idempotency-Key and gets the first
// response back instead). Answering acknowledges too, so a failed invocation may still be
// answered late.
func (s *Invocations) Answer(ctx context.Context, r Reply) (uuid.UUID, error) {
	who, ok := actor.From(ctx)
	if !ok {
		return uuid.Nil, problem.ErrUnauthenticated
	}
	id, ok, err := s.verify(ctx, r.Token)
	if err != nil {
		return uuid.Nil, fmt.Errorf("agents: answer invocation: %w", err)
	}
	if !ok {
		return uuid.Nil, errBadToken
	}
	var out uuid.UUID
	err = s.tx.RunInTx(ctx, func(ctx context.Context) error {
		inv, err := s.store.InvocationForUpdate(ctx, id)
		if errors.Is(err, problem.ErrNotFound) {
			return errBadToken
		}
		if err != nil {
			return err
		}
		if inv.AgentID != who.PrincipalID || inv.ThreadID != r.ThreadID {
			return errBadToken
		}
		if inv.State == agents.InvocationAnswered {
			return problem.New(problem.ErrConflict, "The invocation is answered already.")
		}
		inv.State, inv.ReplyMessageID, inv.UpdatedAt = agents.InvocationAnswered, r.MessageID, s.clock.Now().UTC()
		out = inv.ID
		return s.store.UpdateInvocation(ctx, inv)
	})
	if err != nil {
		return uuid.Nil, fmt.Errorf("agents: answer invocation: %w", err)
	}
	return out, nil
}

// errNoInvocation hides an invocation from whoever may not see it, and answers a token that
// does not verify: an invocation id alone tells nothing.
var errNoInvocation = problem.New(problem.ErrNotFound, "No such invocation.")

// Ack implements agents.Invocations (ackInvocation): the actor must read the invocation's
// thread (thread.read, authorized first; problem.ErrNotFound otherwise), the token must be the
// invocation's (else problem.ErrNotFound, as for an invocation that does not exist) and the
// actor its agent (problem.ErrForbidden). A pending invocation becomes acknowledged; any other state is
// answered unchanged, so a repeated ack is harmless.
func (s *Invocations) Ack(ctx context.Context, id uuid.UUID, token string) (agents.Invocation, error) {
	who, ok := actor.From(ctx)
	if !ok {
		return agents.Invocation{}, problem.ErrUnauthenticated
	}
	var out agents.Invocation
	err := s.tx.RunInTx(ctx, func(ctx context.Context) error {
		inv, err := s.store.InvocationForUpdate(ctx, id)
		if err != nil {
			return err
		}
		// Authorized first, as every operation is (spec 04): thread.read on its thread.
		if err := s.authz.Authorize(ctx, kernel.ActionThreadRead, threadResource(inv.ThreadID, inv.ChannelID, inv.SpaceID)); err != nil {
			return err
		}
		tokID, ok, err := s.verify(ctx, token)
		if err != nil {
			return err
		}
		if !ok || tokID != id {
			return errNoInvocation
		}
		if inv.AgentID != who.PrincipalID {
			return problem.New(problem.ErrForbidden, "Only the invoked agent acknowledges an invocation.")
		}
		out = inv.Invocation
		if inv.State != agents.InvocationPending {
			return nil
		}
		inv.State, inv.UpdatedAt = agents.InvocationAcknowledged, s.clock.Now().UTC()
		out = inv.Invocation
		return s.store.UpdateInvocation(ctx, inv)
	})
	if err != nil {
		return agents.Invocation{}, fmt.Errorf("agents: ack invocation: %w", err)
	}
	return out, nil
}

// AckForRun acknowledges the invocation a new run of the agent in ctx names (createRun with
// invocation_id), in the run's transaction: it must be an invocation of that agent in the
// run's thread, else a validation error naming invocation_id. A pending invocation becomes
// acknowledged; it returns the invocation, whose invoking person the run may take as its
// requester.
func (s *Invocations) AckForRun(ctx context.Context, id, threadID uuid.UUID) (agents.Invocation, error) {
	who, ok := actor.From(ctx)
	if !ok {
		return agents.Invocation{}, problem.ErrUnauthenticated
	}
	bad := problem.Validation(problem.FieldError{Field: "invocation_id", Message: "must be an invocation of yours in this thread"})
	inv, err := s.store.InvocationForUpdate(ctx, id)
	if errors.Is(err, problem.ErrNotFound) {
		return agents.Invocation{}, bad
	}
	if err != nil {
		return agents.Invocation{}, fmt.Errorf("agents: run invocation: %w", err)
	}
	if inv.AgentID != who.PrincipalID || inv.ThreadID != threadID {
		return agents.Invocation{}, bad
	}
	if inv.State == agents.InvocationPending {
		inv.State, inv.UpdatedAt = agents.InvocationAcknowledged, s.clock.Now().UTC()
		if err := s.store.UpdateInvocation(ctx, inv); err != nil {
			return agents.Invocation{}, fmt.Errorf("agents: run invocation: %w", err)
		}
	}
	return inv.Invocation, nil
}

// Get implements agents.Invocations (getInvocation): the invocation's agent and its invoking
// person, while they may read its thread; problem.ErrNotFound for everyone else.
func (s *Invocations) Get(ctx context.Context, id uuid.UUID) (agents.Invocation, error) {
	who, ok := actor.From(ctx)
	if !ok {
		return agents.Invocation{}, problem.ErrUnauthenticated
	}
	inv, err := s.store.Invocation(ctx, id)
	if err != nil {
		return agents.Invocation{}, fmt.Errorf("agents: get invocation: %w", err)
	}
	if err := s.authz.Authorize(ctx, kernel.ActionThreadRead, threadResource(inv.ThreadID, inv.ChannelID, inv.SpaceID)); err != nil {
		return agents.Invocation{}, fmt.Errorf("agents: get invocation: %w", err)
	}
	if who.PrincipalID != inv.AgentID && who.PrincipalID != inv.InvokedBy {
		return agents.Invocation{}, fmt.Errorf("agents: get invocation: %w", errNoInvocation)
	}
	return inv.Invocation, nil
}

// Sweep redelivers and fails, in one transaction with the clock's time, the pending
// invocations whose last delivery is at least agents.invocation_ack_timeout old (at most
// agents.invocation_sweep_batch of them): one below agents.invocation_max_deliveries
// attempts is delivered again (attempt + 1, a new invocation.requested); one at the maximum
// becomes failed, with invocation.failed to its invoking person and to its agent. Its events
// have the system actor (systemActor, the instance's id). It returns how many invocations it
// redelivered and failed.
func (s *Invocations) Sweep(ctx context.Context, systemActor uuid.UUID) (redelivered, failed int, err error) {
	now := s.clock.Now().UTC()
	err = s.tx.RunInTx(ctx, func(ctx context.Context) error {
		redelivered, failed = 0, 0
		rows, err := s.store.DueInvocations(ctx, now.Add(-s.cfg.AckTimeout), s.cfg.SweepBatch)
		if err != nil {
			return err
		}
		for _, r := range rows {
			r.UpdatedAt = now
			if r.Attempt < s.cfg.MaxDeliveries {
				r.Attempt++
				r.DeliveredAt = now
				if err := s.store.UpdateInvocation(ctx, r); err != nil {
					return err
				}
				if err := s.appender.Append(ctx, invocationEvent(InvocationRequested, systemActor, r.AgentID, r.Invocation)); err != nil {
					return err
				}
				redelivered++
				continue
			}
			r.State = agents.InvocationFailed
			if err := s.store.UpdateInvocation(ctx, r); err != nil {
				return err
			}
			for _, to := range []uuid.UUID{r.InvokedBy, r.AgentID} {
				if err := s.appender.Append(ctx, invocationEvent(InvocationFailed, systemActor, to, r.Invocation)); err != nil {
					return err
				}
			}
			failed++
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("agents: invocation sweep: %w", err)
	}
	return redelivered, failed, nil
}

// InvocationToken returns the token of the invocation id: the id and, after a dot, the
// unpadded base64url HMAC-SHA-256 of the id under the instance's invocation key. It is the same
// for every delivery of the invocation and needs no row: delivery derives it, a reply or an
// ack is verified by deriving it again.
func (s *Invocations) InvocationToken(ctx context.Context, id uuid.UUID) (string, error) {
	key, err := s.keyOf(ctx)
	if err != nil {
		return "", err
	}
	return id.String() + "." + mac(key, id), nil
}

// verify returns the invocation id of a token whose MAC verifies; ok is false for any other
// string.
func (s *Invocations) verify(ctx context.Context, token string) (uuid.UUID, bool, error) {
	idText, sum, found := strings.Cut(token, ".")
	if !found {
		return uuid.Nil, false, nil
	}
	id, err := uuid.Parse(idText)
	if err != nil || id.String() != idText {
		return uuid.Nil, false, nil
	}
	key, err := s.keyOf(ctx)
	if err != nil {
		return uuid.Nil, false, err
	}
	if !hmac.Equal([]byte(sum), []byte(mac(key, id))) {
		return uuid.Nil, false, nil
	}
	return id, true, nil
}

// keyOf returns the invocation key, read once from the store and kept: it never changes.
func (s *Invocations) keyOf(ctx context.Context) ([]byte, error) {
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	if s.key != nil {
		return s.key, nil
	}
	key, err := s.store.InvocationKey(ctx)
	if err != nil {
		return nil, fmt.Errorf("agents: invocation key: %w", err)
	}
	s.key = key
	return key, nil
}

// mac is the unpadded base64url HMAC-SHA-256 of id under key.
func mac(key []byte, id uuid.UUID) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("bothy invocation token\x00"))
	h.Write(id[:])
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// invocationPayload is the payload of both invocation events, the API's Invocation, as
// sync/domain's register lists it.
type invocationPayload struct {
	ID        string `json:"id"`
	AgentID   string `json:"agent_id"`
	MessageID string `json:"message_id"`
	ThreadID  string `json:"thread_id"`
	ChannelID string `json:"channel_id"`
	InvokedBy string `json:"invoked_by"`
	Reason    string `json:"reason"`
	Attempt   int    `json:"attempt"`
	State     string `json:"state"`
	CreatedAt string `json:"created_at"`
}

// invocationEvent is an invocation event of typ for audience: resource the invocation's thread,
// placed in its channel and space.
func invocationEvent(typ string, actorID, audience uuid.UUID, inv agents.Invocation) kernel.Event {
	return kernel.Event{
		Type:         typ,
		ActorID:      actorID,
		AudienceID:   audience,
		SpaceID:      inv.SpaceID,
		ChannelID:    inv.ChannelID,
		ThreadID:     inv.ThreadID,
		ResourceKind: kernel.ResourceThread,
		ResourceID:   inv.ThreadID,
		Payload: invocationPayload{
			ID: inv.ID.String(), AgentID: inv.AgentID.String(), MessageID: inv.MessageID.String(),
			ThreadID: inv.ThreadID.String(), ChannelID: inv.ChannelID.String(), InvokedBy: inv.InvokedBy.String(),
			Reason: inv.Reason, Attempt: inv.Attempt, State: inv.State, CreatedAt: inv.CreatedAt.Format(time.RFC3339Nano),
		},
	}
}
