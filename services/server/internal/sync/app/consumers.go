package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/domain"
)

// Configuration keys of the durable consumers (spec 03, "Durable consumers").
var (
	// KeyConsumerNameMaxLength bounds a consumer's name, which travels in URL paths and log
	// lines.
	KeyConsumerNameMaxLength = config.Define("sync.consumer_name_max_length", config.KindInt, "64",
		"most characters of a durable consumer's name; a longer one is refused with validation_failed (at least 1)")
	// KeyMaxConsumersPerPrincipal bounds the consumers of one agent or app: each is a row and
	// a cursor the server keeps forever, so a client that invents a name per start cannot
	// fill the table.
	KeyMaxConsumersPerPrincipal = config.Define("sync.max_consumers_per_principal", config.KindInt, "16",
		"most durable consumers one agent or app may hold; createConsumer beyond it is refused with conflict (at least 1)")
)

// ConsumersConfig is what the consumer use cases read from the configuration.
type ConsumersConfig struct {
	// NameMaxLength is sync.consumer_name_max_length.
	NameMaxLength int
	// MaxPerPrincipal is sync.max_consumers_per_principal.
	MaxPerPrincipal int
}

// ConsumersConfigFrom reads the consumer keys from cfg; parse errors are collected in cfg.
func ConsumersConfigFrom(cfg *config.Config) ConsumersConfig {
	return ConsumersConfig{
		NameMaxLength:   cfg.Int(KeyConsumerNameMaxLength),
		MaxPerPrincipal: cfg.Int(KeyMaxConsumersPerPrincipal),
	}
}

// Validate reports values the consumers cannot work with.
func (c ConsumersConfig) Validate() error {
	var errs []error
	if c.NameMaxLength < 1 {
		errs = append(errs, fmt.Errorf("%s must be at least 1", KeyConsumerNameMaxLength.Name))
	}
	if c.MaxPerPrincipal < 1 {
		errs = append(errs, fmt.Errorf("%s must be at least 1", KeyMaxConsumersPerPrincipal.Name))
	}
	return errors.Join(errs...)
}

// ConsumerStore keeps the consumers (adapters/postgres.ConsumerStore). Every method is
// scoped to one principal; a name unknown for it is ok false (or deleted false).
type ConsumerStore interface {
	// Create stores c unless the principal has a consumer of its name (then returns that one
	// with created false). With max consumers stored already it returns ErrConsumerLimit.
	// The count and the insert are atomic per principal.
	Create(ctx context.Context, c syncmod.Consumer, maxPerPrincipal int) (out syncmod.Consumer, created bool, err error)
	// Get returns the principal's consumer name.
	Get(ctx context.Context, principalID uuid.UUID, name string) (syncmod.Consumer, bool, error)
	// List returns the principal's consumers by name.
	List(ctx context.Context, principalID uuid.UUID) ([]syncmod.Consumer, error)
	// Delete removes the principal's consumer name.
	Delete(ctx context.Context, principalID uuid.UUID, name string) error
	// Advance sets acked_seq to the greater of itself and seq under the row's lock (never
	// back) and returns the row, updated_at moved to at only when acked_seq moved.
	Advance(ctx context.Context, principalID uuid.UUID, name string, seq int64, at time.Time) (syncmod.Consumer, bool, error)
	// AdvanceInEpoch sets acked_seq to seq when it is below seq and the consumer was created
	// in epoch, under the row's lock, and returns the row; otherwise (missing, another epoch,
	// not behind) it writes nothing and returns ok false. An ack's common case in one
	// statement.
	AdvanceInEpoch(ctx context.Context, principalID uuid.UUID, name string, seq int64, epoch uuid.UUID, at time.Time) (syncmod.Consumer, bool, error)
}

// ConsumerPageState reads what a consumer's page decides on in one round trip: the
// principal's consumer row first, then catch-up's CheckState in CatchUpState's order (wire's
// pipelined batch over ConsumerStore's and catch-up's reads). The row is read before the head,
// so its acked_seq is never above the head read after it (an ack is at most the head of its
// time, and the head only grows).
type ConsumerPageState interface {
	// ConsumerPageState returns the consumer name of principalID (found false when it has
	// none) and the check's state; errors are the database's, wrapped.
	ConsumerPageState(ctx context.Context, principalID uuid.UUID, name string) (c syncmod.Consumer, found bool, st CheckState, err error)
}

// StateChecker decides a cursor on a CheckState read already (CatchUp.CheckWith).
type StateChecker interface {
	// CheckWith is CatchUp.Check's verdict on st, without I/O.
	CheckWith(in syncmod.CheckInput, st CheckState) (syncmod.CheckResult, error)
}

// ErrConsumerLimit is ConsumerStore.Create's answer for a principal at
// sync.max_consumers_per_principal.
var ErrConsumerLimit = errors.New("sync: consumer limit reached")

// ConsumersDeps are what Consumers needs; all are required.
type ConsumersDeps struct {
	// Store keeps the consumers.
	Store ConsumerStore
	// CatchUp checks cursors and pages (the same catch-up listEvents and the gateway use):
	// consumers deliver exactly what it delivers.
	CatchUp syncmod.CatchUp
	// PageState reads a page's consumer row and check state in one round trip, and Checker
	// (the same catch-up's CheckWith) decides on them, so a page costs listEvents' round trips.
	PageState ConsumerPageState
	Checker   StateChecker
	// Head reads what an ack is decided on (AckState).
	Head AckState
	// Authorizer decides events.catch_up on the instance.
	Authorizer authorize.Authorizer
	// Clock stamps created_at and updated_at.
	Clock clock.Clock
	// Config holds the consumer keys.
	Config ConsumersConfig
}

// AckState reads what an ack is decided on: the head, the sync epoch and the
// permission_version, in this order, in one round trip. An ack needs no more of catch-up's
// check (not the retention edge), and wire's implementation takes the three from an
// ackEvents request's authentication, which read them with its token, so the common ack
// costs that round trip and its update.
type AckState interface {
	// AckState returns the three reads, the head first and the permission version last.
	AckState(ctx context.Context) (SnapshotHead, error)
}

// Consumers implements sync.Consumers over a ConsumerStore and catch-up: it stores nothing
// but the cursor, and delivers through sync.CatchUp, so what a consumer receives is what
// catch-up gives its principal at delivery time.
type Consumers struct {
	store   ConsumerStore
	catchUp syncmod.CatchUp
	state   ConsumerPageState
	checker StateChecker
	head    AckState
	authz   authorize.Authorizer
	clock   clock.Clock
	cfg     ConsumersConfig
}

var _ syncmod.Consumers = (*Consumers)(nil)

// NewConsumers returns the consumer use cases; it fails for a missing dependency or an
// invalid configuration.
func NewConsumers(deps ConsumersDeps) (*Consumers, error) {
	var errs []error
	for _, d := range []struct {
		name    string
		missing bool
	}{
		{"store", deps.Store == nil}, {"catch-up", deps.CatchUp == nil},
		{"page state", deps.PageState == nil}, {"checker", deps.Checker == nil}, {"head", deps.Head == nil},
		{"authorizer", deps.Authorizer == nil}, {"clock", deps.Clock == nil},
	} {
		if d.missing {
			errs = append(errs, fmt.Errorf("%s is nil", d.name))
		}
	}
	errs = append(errs, deps.Config.Validate())
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("sync: new consumers: %w", err)
	}
	return &Consumers{
		store: deps.Store, catchUp: deps.CatchUp, state: deps.PageState, checker: deps.Checker,
		head: deps.Head, authz: deps.Authorizer, clock: deps.Clock, cfg: deps.Config,
	}, nil
}

// owner authorizes events.catch_up on the instance and returns the actor; name is checked
// when check is set. Consumers are made for agents and apps, but nothing in them is: a
// person's bot may hold one too (and AZ-P1 asks that the owner reaches every operation).
func (c *Consumers) owner(ctx context.Context, name string, check bool) (actor.Actor, error) {
	if err := c.authz.Authorize(ctx, kernel.ActionEventsCatchUp, authorize.Instance()); err != nil {
		return actor.Actor{}, err
	}
	a, ok := actor.From(ctx)
	if !ok {
		return actor.Actor{}, problem.ErrUnauthenticated
	}
	if check {
		if err := domain.ValidConsumerName(name, c.cfg.NameMaxLength); err != nil {
			return actor.Actor{}, err
		}
	}
	return a, nil
}

// errNoConsumer is the not-found of a consumer name the actor does not hold.
var errNoConsumer = problem.New(problem.ErrNotFound, "The consumer does not exist.")

// Ensure implements sync.Consumers: a new consumer starts at the head Check reads, in the
// current epoch.
func (c *Consumers) Ensure(ctx context.Context, name string) (syncmod.Consumer, bool, error) {
	a, err := c.owner(ctx, name, true)
	if err != nil {
		return syncmod.Consumer{}, false, err
	}
	if got, ok, err := c.store.Get(ctx, a.PrincipalID, name); err != nil {
		return syncmod.Consumer{}, false, fmt.Errorf("sync: consumer: %w", err)
	} else if ok {
		return got, false, nil
	}
	res, err := c.catchUp.Check(ctx, syncmod.CheckInput{})
	if err != nil {
		return syncmod.Consumer{}, false, err
	}
	now := c.clock.Now()
	out, created, err := c.store.Create(ctx, syncmod.Consumer{
		PrincipalID: a.PrincipalID, Name: name, AckedSeq: res.HeadSeq, SyncEpoch: res.SyncEpoch,
		CreatedAt: now, UpdatedAt: now,
	}, c.cfg.MaxPerPrincipal)
	if errors.Is(err, ErrConsumerLimit) {
		return syncmod.Consumer{}, false, fmt.Errorf("%w: %w", problem.New(problem.ErrConflict,
			"The principal holds as many consumers as it may; delete one first."), err)
	}
	if err != nil {
		return syncmod.Consumer{}, false, fmt.Errorf("sync: create consumer: %w", err)
	}
	return out, created, nil
}

// Get implements sync.Consumers.
func (c *Consumers) Get(ctx context.Context, name string) (syncmod.Consumer, error) {
	a, err := c.owner(ctx, name, true)
	if err != nil {
		return syncmod.Consumer{}, err
	}
	return c.get(ctx, a.PrincipalID, name)
}

func (c *Consumers) get(ctx context.Context, principalID uuid.UUID, name string) (syncmod.Consumer, error) {
	got, ok, err := c.store.Get(ctx, principalID, name)
	if err != nil {
		return syncmod.Consumer{}, fmt.Errorf("sync: consumer: %w", err)
	}
	if !ok {
		return syncmod.Consumer{}, errNoConsumer
	}
	return got, nil
}

// List implements sync.Consumers.
func (c *Consumers) List(ctx context.Context) ([]syncmod.Consumer, error) {
	a, err := c.owner(ctx, "", false)
	if err != nil {
		return nil, err
	}
	list, err := c.store.List(ctx, a.PrincipalID)
	if err != nil {
		return nil, fmt.Errorf("sync: consumers: %w", err)
	}
	return nonNil(list), nil
}

// Delete implements sync.Consumers.
func (c *Consumers) Delete(ctx context.Context, name string) error {
	a, err := c.owner(ctx, name, true)
	if err != nil {
		return err
	}
	if err := c.store.Delete(ctx, a.PrincipalID, name); err != nil {
		return fmt.Errorf("sync: delete consumer: %w", err)
	}
	return nil
}

// Ack implements sync.Consumers. The head is read (AckState) before the row is moved: the
// head only grows, so a seq at or below it stays valid however long the ack takes. The
// permission_version is read with it, and events.catch_up is decided at that version
// (nothing is returned or written before the decision), so the common ack (in the consumer's
// epoch, ahead of it, not above the head) costs the head's round trip and one update; any
// other is looked at row in hand.
func (c *Consumers) Ack(ctx context.Context, name string, seq int64) (syncmod.Consumer, error) {
	st, err := c.head.AckState(ctx)
	if err != nil {
		return syncmod.Consumer{}, fmt.Errorf("sync: ack consumer: %w", err)
	}
	a, err := c.owner(authz.WithPermissionVersion(ctx, st.PermissionVersion), name, true)
	if err != nil {
		return syncmod.Consumer{}, err
	}
	if seq < 0 {
		return syncmod.Consumer{}, problem.Validation(problem.FieldError{Field: "seq", Message: "must be at least 0"})
	}
	if seq <= st.Seq {
		out, ok, err := c.store.AdvanceInEpoch(ctx, a.PrincipalID, name, seq, st.Epoch, c.clock.Now())
		if err != nil {
			return syncmod.Consumer{}, fmt.Errorf("sync: ack consumer: %w", err)
		}
		if ok {
			return out, nil
		}
	}
	cur, err := c.get(ctx, a.PrincipalID, name)
	if err != nil {
		return syncmod.Consumer{}, err
	}
	if seq <= cur.AckedSeq {
		return cur, nil // behind the consumer: nothing to do
	}
	if cur.SyncEpoch != st.Epoch {
		return syncmod.Consumer{}, problem.New(problem.ErrConflict,
			"The consumer belongs to an earlier sync epoch (the database was restored); delete it and create it again.")
	}
	if seq > st.Seq {
		return syncmod.Consumer{}, problem.New(problem.ErrConflict,
			fmt.Sprintf("The ack is above the head of the log (head_seq %d).", st.Seq))
	}
	// Ahead of the row read a moment ago, in its epoch, within the head: another ack moved it
	// in between, or it was deleted. Advance never moves it back.
	out, ok, err := c.store.Advance(ctx, a.PrincipalID, name, seq, c.clock.Now())
	if err != nil {
		return syncmod.Consumer{}, fmt.Errorf("sync: ack consumer: %w", err)
	}
	if !ok {
		return syncmod.Consumer{}, errNoConsumer // deleted meanwhile
	}
	return out, nil
}

// pinVersion returns ctx with the permission_version Check read with the head, when it did:
// the Scope at that version serves the authorization that follows (authz.WithPermissionVersion,
// as catch-up's page uses it), so it does not read the counter again.
func pinVersion(ctx context.Context, res syncmod.CheckResult) context.Context {
	if !res.PermissionVersionRead {
		return ctx
	}
	return authz.WithPermissionVersion(ctx, res.PermissionVersion)
}

// errConsumerAfterNegative names listConsumerEvents' cursor parameter.
var errConsumerAfterNegative = problem.Validation(problem.FieldError{Field: "after", Message: "must be at least 0"})

// Events implements sync.Consumers: the consumer's row and the check's state in one round trip
// (ConsumerPageState), the check from the greater of in.After and acked_seq in the consumer's
// epoch, then one Page, exactly as listEvents does for the same actor and cursor.
// events.catch_up is decided at the permission_version the batch read (nothing is returned
// before the decision), so a page costs the round trips of listEvents': the batch and the page.
func (c *Consumers) Events(ctx context.Context, name string, in syncmod.ConsumerEventsInput) (syncmod.CheckResult, syncmod.PageResult, error) {
	who, ok := actor.From(ctx)
	if !ok || domain.ValidConsumerName(name, c.cfg.NameMaxLength) != nil {
		// The refusal, in owner's order (authorization first, then the name).
		_, err := c.owner(ctx, name, true)
		return syncmod.CheckResult{}, syncmod.PageResult{}, err
	}
	if in.AfterGiven && in.After < 0 {
		if _, err := c.owner(ctx, name, false); err != nil {
			return syncmod.CheckResult{}, syncmod.PageResult{}, err
		}
		return syncmod.CheckResult{}, syncmod.PageResult{}, errConsumerAfterNegative
	}
	cur, found, st, err := c.state.ConsumerPageState(ctx, who.PrincipalID, name)
	if err != nil {
		return syncmod.CheckResult{}, syncmod.PageResult{}, fmt.Errorf("sync: consumer page: %w", err)
	}
	check := syncmod.CheckInput{}
	if found {
		check = syncmod.CheckInput{After: cur.AckedSeq, Epoch: syncmod.EpochOf(cur.SyncEpoch)}
		if in.AfterGiven && in.After > cur.AckedSeq {
			check.After = in.After // reading ahead of the acks
		}
	}
	res, err := c.checker.CheckWith(check, st)
	if err != nil {
		return syncmod.CheckResult{}, syncmod.PageResult{}, err
	}
	if _, err := c.owner(pinVersion(ctx, res), name, false); err != nil {
		return syncmod.CheckResult{}, syncmod.PageResult{}, err
	}
	if !found {
		return syncmod.CheckResult{}, syncmod.PageResult{}, errNoConsumer
	}
	if res.Reason != "" {
		return res, syncmod.PageResult{}, nil
	}
	page, err := c.catchUp.Page(ctx, syncmod.PageInput{
		After: check.After, Head: res.HeadSeq, Limit: in.Limit,
		PermissionVersion: res.PermissionVersion, PermissionVersionRead: res.PermissionVersionRead,
	})
	if err != nil {
		return res, syncmod.PageResult{}, err
	}
	return res, page, nil
}
