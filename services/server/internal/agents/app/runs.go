package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/agents/domain"
	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/kernel/problem"
)

// The durable event types of runs (spec 02, ADR 0027): thread events (resource the run's
// thread, placed in its channel and space), received by whoever may read the thread
// (thread.read). Both carry the whole run, so a client keeps its runs from either alone.
const (
	// RunCreated is appended by createRun.
	RunCreated = "run.created"
	// RunUpdated is appended by every change of a run: updateRun and cancelRun.
	RunUpdated = "run.updated"
)

// RunStore keeps runs. Every method runs on the transaction of ctx when there is one.
type RunStore interface {
	// InsertRun stores a new run.
	InsertRun(ctx context.Context, r domain.Run) error
	// Run returns a run; problem.ErrNotFound when there is none.
	Run(ctx context.Context, id uuid.UUID) (domain.Run, error)
	// RunForUpdate returns a run locked until the transaction of ctx ends;
	// problem.ErrNotFound when there is none.
	RunForUpdate(ctx context.Context, id uuid.UUID) (domain.Run, error)
	// UpdateRun stores a run's state, progress, version and times.
	UpdateRun(ctx context.Context, r domain.Run) error
	// RunsInProgress returns the queued and running runs the filter admits, oldest first.
	RunsInProgress(ctx context.Context, f RunFilter) ([]domain.Run, error)
	// StaleRuns returns, locked until the transaction of ctx ends, at most limit queued or
	// running runs last updated before updatedBefore, oldest first; a run another
	// transaction holds is skipped (that transaction decides it).
	StaleRuns(ctx context.Context, updatedBefore time.Time, limit int) ([]domain.Run, error)
}

// RunFilter is the SQL prefilter of the runs in progress for one reader, taken from its
// Scope as chat's listings and catch-up take theirs: it bounds the rows read by what the
// reader may see; the per-run decision (thread.read) stays the truth.
type RunFilter struct {
	// All admits every run: the reader holds a grant on the instance.
	All bool
	// SpaceIDs admits the runs in these spaces (the reader holds a grant on the space).
	SpaceIDs []uuid.UUID
	// ChannelIDs admits the runs in these channels (the reader holds a grant on the
	// channel; direct messages included).
	ChannelIDs []uuid.UUID
}

// Admits reports whether the filter admits r, the predicate the store's query states.
func (f RunFilter) Admits(r domain.Run) bool {
	return f.All || slices.Contains(f.ChannelIDs, r.ChannelID) || (r.SpaceID != uuid.Nil && slices.Contains(f.SpaceIDs, r.SpaceID))
}

// runFilter is the RunFilter of a Scope.
func runFilter(s authz.Scope) RunFilter {
	return RunFilter{All: s.InstanceWide(), SpaceIDs: s.FullyVisibleSpaceIDs(), ChannelIDs: s.VisibleChannelIDs()}
}

// ThreadPlace is where a thread lies: its channel and the channel's space (uuid.Nil in a
// direct message), and whether that channel is archived.
type ThreadPlace struct {
	// ThreadID, ChannelID and SpaceID place the thread.
	ThreadID, ChannelID, SpaceID uuid.UUID
	// Archived is true when the thread's channel is archived: nobody posts there any more.
	Archived bool
}

// ThreadPlaces tells createRun where a thread lies, so that it authorizes the agent on the
// thread and records the run's place, without reading the chat module's tables (spec 01).
// Wire binds it to chat's Threads.Get. It authorizes nothing.
type ThreadPlaces interface {
	// Thread returns where the thread lies; an error wrapping problem.ErrNotFound when there
	// is no such thread.
	Thread(ctx context.Context, id uuid.UUID) (ThreadPlace, error)
}

// RunsDeps are what Runs needs, all required.
type RunsDeps struct {
	// Tx runs every change with its event in one transaction.
	Tx Transactor
	// Store keeps the runs.
	Store RunStore
	// Threads places the thread of a new run.
	Threads ThreadPlaces
	// Directory tells whether requested_by is a person.
	Directory identity.Directory
	// Authorizer decides for the actor (Authorize, ForActor) and whether requested_by may
	// read the thread (MayRead).
	Authorizer authz.Authorizer
	// Appender appends run.created and run.updated.
	Appender kernel.Appender
	// Clock stamps the runs' times.
	Clock clock.Clock
	// ProgressMaxLength is agents.run_progress_max_length; at least 1.
	ProgressMaxLength int
	// StaleAfter is agents.run_stale_after; more than 0.
	StaleAfter time.Duration
	// ExpiryBatch is agents.run_expiry_batch; at least 1.
	ExpiryBatch int
	// Invocations acknowledges the invocation a new run names (Invocations.AckForRun);
	// optional: nil refuses every invocation_id.
	Invocations RunInvocations
}

// RunInvocations acknowledges the invocation a run answers, in the run's transaction
// (*Invocations implements it).
type RunInvocations interface {
	// AckForRun checks that the invocation is the actor's in the thread (else a validation
	// error naming invocation_id) and acknowledges it.
	AckForRun(ctx context.Context, id, threadID uuid.UUID) (agents.Invocation, error)
}

// Runs implements agents.Runs: the runs use cases of ADR 0027.
type Runs struct {
	tx          Transactor
	store       RunStore
	threads     ThreadPlaces
	directory   identity.Directory
	authz       authz.Authorizer
	appender    kernel.Appender
	clock       clock.Clock
	progressMax int
	staleAfter  time.Duration
	expiryBatch int
	invocations RunInvocations
}

var _ agents.Runs = (*Runs)(nil)

// NewRuns returns Runs over deps; it fails when a dependency is missing or the progress bound
// is below 1, so a wiring mistake stops the process at start.
func NewRuns(deps RunsDeps) (*Runs, error) {
	var errs []error
	for _, d := range []struct {
		missing bool
		name    string
	}{
		{deps.Tx == nil, "transaction runner"},
		{deps.Store == nil, "run store"},
		{deps.Threads == nil, "thread places"},
		{deps.Directory == nil, "directory port"},
		{deps.Authorizer == nil, "authorizer"},
		{deps.Appender == nil, "appender"},
		{deps.Clock == nil, "clock"},
	} {
		if d.missing {
			errs = append(errs, fmt.Errorf("%s is nil", d.name))
		}
	}
	if deps.ProgressMaxLength < 1 {
		errs = append(errs, fmt.Errorf("%s is %d, want at least 1", KeyRunProgressMaxLength.Name, deps.ProgressMaxLength))
	}
	if deps.StaleAfter <= 0 {
		errs = append(errs, fmt.Errorf("%s is %v, want more than 0", KeyRunStaleAfter.Name, deps.StaleAfter))
	}
	if deps.ExpiryBatch < 1 {
		errs = append(errs, fmt.Errorf("%s is %d, want at least 1", KeyRunExpiryBatch.Name, deps.ExpiryBatch))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("agents runs: %w", err)
	}
	return &Runs{
		tx: deps.Tx, store: deps.Store, threads: deps.Threads, directory: deps.Directory,
		authz: deps.Authorizer, appender: deps.Appender, clock: deps.Clock, progressMax: deps.ProgressMaxLength,
		staleAfter: deps.StaleAfter, expiryBatch: deps.ExpiryBatch, invocations: deps.Invocations,
	}, nil
}

// Create starts a run of the agent in ctx in the thread, in one transaction with run.created.
// The thread must exist and be readable (else problem.ErrNotFound), the actor must be allowed
// message.create on it and be an agent (else problem.ErrForbidden); then one
// problem.ErrValidation names every invalid field: requested_by (no person, or one who may not
// read the thread), state (other than queued or running), progress (see domain.Progress); a
// thread of an archived channel, where nobody posts any more, is a problem.ErrConflict. A run
// naming an invocation acknowledges it in the same transaction; an invocation that is not the
// agent's in the thread is a validation error naming invocation_id.
func (s *Runs) Create(ctx context.Context, in agents.RunInput) (agents.Run, error) {
	a, ok := actor.From(ctx)
	if !ok {
		return agents.Run{}, fmt.Errorf("agents: create run: %w", problem.ErrUnauthenticated)
	}
	place, err := s.threads.Thread(ctx, in.ThreadID)
	if err != nil {
		return agents.Run{}, fmt.Errorf("agents: create run: thread: %w", err)
	}
	res := threadResource(place.ThreadID, place.ChannelID, place.SpaceID)
	if err := s.authz.Authorize(ctx, kernel.ActionMessageCreate, res); err != nil {
		return agents.Run{}, fmt.Errorf("agents: create run: %w", err)
	}
	if a.Kind != actor.KindAgent {
		return agents.Run{}, fmt.Errorf("agents: create run: %w", problem.New(problem.ErrForbidden, "only agents start runs"))
	}
	var fields []problem.FieldError
	if msg, err := s.checkRequester(ctx, in.RequestedBy, res); err != nil {
		return agents.Run{}, fmt.Errorf("agents: create run: requester: %w", err)
	} else if msg != "" {
		fields = append(fields, problem.FieldError{Field: "requested_by", Message: msg})
	}
	state, msg := domain.StartState(domain.RunState(in.State))
	if msg != "" {
		fields = append(fields, problem.FieldError{Field: "state", Message: msg})
	}
	progress, msg := domain.Progress(in.Progress, s.progressMax)
	if msg != "" {
		fields = append(fields, problem.FieldError{Field: "progress", Message: msg})
	}
	if len(fields) > 0 {
		return agents.Run{}, fmt.Errorf("agents: create run: %w", problem.Validation(fields...))
	}
	if place.Archived {
		return agents.Run{}, fmt.Errorf("agents: create run: %w", problem.New(problem.ErrConflict, "the thread's channel is archived"))
	}
	now := s.clock.Now().UTC()
	r := domain.Run{
		ID: ids.New(), AgentID: a.PrincipalID, ThreadID: place.ThreadID, ChannelID: place.ChannelID, SpaceID: place.SpaceID,
		RequestedBy: in.RequestedBy, InvocationID: in.InvocationID, State: state, Progress: progress,
		Version: 1, CreatedAt: now, UpdatedAt: now,
	}
	err = s.tx.RunInTx(ctx, func(ctx context.Context) error {
		if r.InvocationID != uuid.Nil {
			// A run on an invocation acknowledges it (ADR 0031), in the run's transaction.
			if s.invocations == nil {
				return problem.Validation(problem.FieldError{Field: "invocation_id", Message: "invocations are off"})
			}
			if _, err := s.invocations.AckForRun(ctx, r.InvocationID, r.ThreadID); err != nil {
				return err
			}
		}
		if err := s.store.InsertRun(ctx, r); err != nil {
			return err
		}
		return s.appender.Append(ctx, runEvent(RunCreated, a.PrincipalID, r))
	})
	if err != nil {
		return agents.Run{}, fmt.Errorf("agents: create run: %w", err)
	}
	return toRun(r), nil
}

// checkRequester returns what is wrong with requested_by ("" when it is a person who may read
// the thread); an error only when the directory or the grants cannot be read.
func (s *Runs) checkRequester(ctx context.Context, id uuid.UUID, res authorize.Resource) (string, error) {
	const notReader = "must be a person who may read the thread"
	if id == uuid.Nil {
		return "is required", nil
	}
	ref, err := s.directory.Ref(ctx, id)
	switch {
	case errors.Is(err, identity.ErrPrincipalNotFound):
		return notReader, nil
	case err != nil:
		return "", err
	case ref.Kind != actor.KindPerson:
		return notReader, nil
	}
	ok, err := s.authz.MayRead(ctx, id, res)
	if err != nil {
		return "", err
	}
	if !ok {
		return notReader, nil
	}
	return "", nil
}

// Get returns a run whose thread the actor may read (thread.read); problem.ErrNotFound for a
// run that does not exist or lies in a thread the actor cannot read.
func (s *Runs) Get(ctx context.Context, id uuid.UUID) (agents.Run, error) {
	r, err := s.store.Run(ctx, id)
	if err != nil {
		return agents.Run{}, fmt.Errorf("agents: get run: %w", err)
	}
	if err := s.authz.Authorize(ctx, kernel.ActionThreadRead, runResource(r)); err != nil {
		return agents.Run{}, fmt.Errorf("agents: get run: %w", err)
	}
	return toRun(r), nil
}

// Update moves a run of the agent in ctx along the machine (domain.CheckTransition), in one
// transaction with run.updated, after message.create on the run's thread (the register's
// action). problem.ErrNotFound for a run that does not exist or whose thread the actor cannot
// read; problem.ErrForbidden for whoever may not post in the thread (the agent too, once it
// lost that) and for anyone but the run's agent; problem.ErrValidation
// for an unknown state or invalid progress; problem.ErrConflict for a transition the machine
// does not allow or any change of a finished run.
func (s *Runs) Update(ctx context.Context, id uuid.UUID, c agents.RunChange) (agents.Run, error) {
	a, ok := actor.From(ctx)
	if !ok {
		return agents.Run{}, fmt.Errorf("agents: update run: %w", problem.ErrUnauthenticated)
	}
	change := domain.Change{To: domain.RunState(c.State), By: a.PrincipalID}
	var fields []problem.FieldError
	if !change.To.Valid() {
		fields = append(fields, problem.FieldError{Field: "state", Message: "must be queued, running, succeeded, failed or cancelled"})
	}
	if c.Progress != nil {
		p, msg := domain.Progress(*c.Progress, s.progressMax)
		if msg != "" {
			fields = append(fields, problem.FieldError{Field: "progress", Message: msg})
		}
		change.Progress = &p
	}
	out, err := s.change(ctx, id, func(ctx context.Context, r domain.Run) error {
		// message.create hides the run from whoever cannot read its thread (404) and refuses
		// whoever may not post there (403), the run's agent included once it lost that.
		if err := s.authz.Authorize(ctx, kernel.ActionMessageCreate, runResource(r)); err != nil {
			return err
		}
		if r.AgentID != a.PrincipalID {
			return problem.New(problem.ErrForbidden, "only the run's agent updates it")
		}
		if len(fields) > 0 {
			return problem.Validation(fields...)
		}
		return nil
	}, change)
	if err != nil {
		return agents.Run{}, fmt.Errorf("agents: update run: %w", err)
	}
	return out, nil
}

// Cancel cancels a run that has not finished, in one transaction with run.updated. The
// requester may cancel it, and so may whoever may manage the thread's channel
// (channel.update: its admins, and the owner). problem.ErrNotFound for a run that does not
// exist or whose thread the actor cannot read; problem.ErrForbidden for anyone else;
// problem.ErrConflict for a finished run.
func (s *Runs) Cancel(ctx context.Context, id uuid.UUID) (agents.Run, error) {
	a, ok := actor.From(ctx)
	if !ok {
		return agents.Run{}, fmt.Errorf("agents: cancel run: %w", problem.ErrUnauthenticated)
	}
	out, err := s.change(ctx, id, func(ctx context.Context, r domain.Run) error {
		if err := s.authz.Authorize(ctx, kernel.ActionThreadRead, runResource(r)); err != nil {
			return err
		}
		if r.RequestedBy == a.PrincipalID {
			return nil
		}
		channel := authorize.Resource{Kind: kernel.ResourceChannel, ID: r.ChannelID, SpaceID: r.SpaceID, ChannelID: r.ChannelID, Direct: r.SpaceID == uuid.Nil}
		return s.authz.Authorize(ctx, kernel.ActionChannelUpdate, channel)
	}, domain.Change{To: domain.RunCancelled, By: a.PrincipalID})
	if err != nil {
		return agents.Run{}, fmt.Errorf("agents: cancel run: %w", err)
	}
	return out, nil
}

// change locks the run, lets allow refuse (authorization, input), applies c stamped with the
// clock, and stores the run with run.updated, all in one transaction. A refusal of the
// machine is a problem.ErrConflict.
func (s *Runs) change(ctx context.Context, id uuid.UUID, allow func(context.Context, domain.Run) error, c domain.Change) (agents.Run, error) {
	var out domain.Run
	err := s.tx.RunInTx(ctx, func(ctx context.Context) error {
		r, err := s.store.RunForUpdate(ctx, id)
		if err != nil {
			return err
		}
		if err := allow(ctx, r); err != nil {
			return err
		}
		c.At = s.clock.Now().UTC()
		if !c.At.After(r.UpdatedAt) {
			// A clock that stands still (or steps back) never orders a change before the one
			// it follows.
			c.At = r.UpdatedAt
		}
		next, err := r.Apply(c)
		if err != nil {
			return problem.New(problem.ErrConflict, err.Error())
		}
		if err := s.store.UpdateRun(ctx, next); err != nil {
			return err
		}
		out = next
		return s.appender.Append(ctx, runEvent(RunUpdated, c.By, next))
	})
	if err != nil {
		return agents.Run{}, err
	}
	return toRun(out), nil
}

// Expire ends the stale runs (ADR 0032) in one transaction with the clock's time: at most
// agents.run_expiry_batch queued or running runs whose last update is more than
// agents.run_stale_after old, oldest first, each locked, failed with domain.ExpiredProgress
// as its progress (domain.Run.Expire) and stored with its run.updated, whose actor is the
// system (systemActor, the instance's id). A run changed by another transaction meanwhile is
// skipped by the store and looked at again by the next sweep. It returns how many runs it
// ended; the invocation sweeper's loop calls it once a tick.
func (s *Runs) Expire(ctx context.Context, systemActor uuid.UUID) (int, error) {
	now := s.clock.Now().UTC()
	var expired int
	err := s.tx.RunInTx(ctx, func(ctx context.Context) error {
		expired = 0
		// A run updated exactly agents.run_stale_after ago is not stale yet.
		stale, err := s.store.StaleRuns(ctx, now.Add(-s.staleAfter), s.expiryBatch)
		if err != nil {
			return err
		}
		for _, r := range stale {
			next, err := r.Expire(now, domain.ExpiredProgress)
			if err != nil {
				return err
			}
			if err := s.store.UpdateRun(ctx, next); err != nil {
				return err
			}
			if err := s.appender.Append(ctx, runEvent(RunUpdated, systemActor, next)); err != nil {
				return err
			}
			expired++
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("agents: expire runs: %w", err)
	}
	return expired, nil
}

// InProgress implements agents.Runs: the queued and running runs in the places the actor's
// Scope admits (RunFilter: the store reads no run of a channel the actor cannot see), each
// kept when the actor may read its thread (thread.read through one Decider, in filter mode:
// a hidden run is dropped, not audited).
func (s *Runs) InProgress(ctx context.Context) ([]agents.Run, error) {
	decider, err := s.authz.ForActor(ctx)
	if err != nil {
		return nil, fmt.Errorf("agents: runs in progress: %w", err)
	}
	runs, err := s.store.RunsInProgress(ctx, runFilter(decider.Scope()))
	if err != nil {
		return nil, fmt.Errorf("agents: runs in progress: %w", err)
	}
	out := make([]agents.Run, 0, len(runs))
	filter := authorize.Filter(ctx)
	for _, r := range runs {
		err := decider.Authorize(filter, kernel.ActionThreadRead, runResource(r))
		switch {
		case err == nil:
			out = append(out, toRun(r))
		case errors.Is(err, problem.ErrNotFound), errors.Is(err, problem.ErrForbidden):
			// A thread this actor cannot read: dropped.
		default:
			return nil, fmt.Errorf("agents: runs in progress: authorize run %s: %w", r.ID, err)
		}
	}
	return out, nil
}

// threadResource is a thread with its ancestors; a thread without a space lies in a direct
// message.
func threadResource(thread, channel, space uuid.UUID) authorize.Resource {
	return authorize.Resource{Kind: kernel.ResourceThread, ID: thread, SpaceID: space, ChannelID: channel, ThreadID: thread, Direct: space == uuid.Nil}
}

// runResource is the thread of a run: a run is read with its thread.
func runResource(r domain.Run) authorize.Resource {
	return threadResource(r.ThreadID, r.ChannelID, r.SpaceID)
}

// runPayload is the payload of run.created and run.updated, as sync/domain's register lists
// it: the whole run but its place, which the envelope carries.
type runPayload struct {
	RunID        string `json:"run_id"`
	AgentID      string `json:"agent_id"`
	ThreadID     string `json:"thread_id"`
	ChannelID    string `json:"channel_id"`
	RequestedBy  string `json:"requested_by"`
	InvocationID string `json:"invocation_id,omitempty"`
	State        string `json:"state"`
	Progress     string `json:"progress"`
	Version      int64  `json:"version"`
	CreatedAt    string `json:"created_at"`
	UpdatedAt    string `json:"updated_at"`
	EndedAt      string `json:"ended_at,omitempty"`
	CancelledBy  string `json:"cancelled_by,omitempty"`
}

// runEvent is the event of type typ for run r, caused by actorID: a thread event placed in the
// run's thread, channel and space.
func runEvent(typ string, actorID uuid.UUID, r domain.Run) kernel.Event {
	p := runPayload{
		RunID: r.ID.String(), AgentID: r.AgentID.String(), ThreadID: r.ThreadID.String(), ChannelID: r.ChannelID.String(),
		RequestedBy: r.RequestedBy.String(), State: string(r.State), Progress: r.Progress, Version: r.Version,
		CreatedAt: r.CreatedAt.Format(time.RFC3339Nano), UpdatedAt: r.UpdatedAt.Format(time.RFC3339Nano),
	}
	if r.InvocationID != uuid.Nil {
		p.InvocationID = r.InvocationID.String()
	}
	if !r.EndedAt.IsZero() {
		p.EndedAt = r.EndedAt.Format(time.RFC3339Nano)
	}
	if r.CancelledBy != uuid.Nil {
		p.CancelledBy = r.CancelledBy.String()
	}
	return kernel.Event{
		Type: typ, ActorID: actorID,
		SpaceID: r.SpaceID, ChannelID: r.ChannelID, ThreadID: r.ThreadID,
		ResourceKind: kernel.ResourceThread, ResourceID: r.ThreadID,
		Payload: p,
	}
}

// toRun converts a run for the port.
func toRun(r domain.Run) agents.Run {
	return agents.Run{
		ID: r.ID, AgentID: r.AgentID, ThreadID: r.ThreadID, ChannelID: r.ChannelID, SpaceID: r.SpaceID,
		RequestedBy: r.RequestedBy, InvocationID: r.InvocationID, State: string(r.State), Progress: r.Progress,
		Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, EndedAt: r.EndedAt, CancelledBy: r.CancelledBy,
	}
}
