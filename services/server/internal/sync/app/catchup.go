package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/domain"
)

// CatchUpDeps are what CatchUp needs; all but State, Versions and Rand are required, and
// Versions is required when State is nil.
type CatchUpDeps struct {
	// Log reads the lowest retained seq and the pages (adapters/postgres.Reader).
	Log CatchUpLog
	// State reads the head, the retention edge and the epoch in one round trip (wire's
	// batch over instance.Versions and Log); nil means three reads, through Versions and Log.
	State CatchUpState
	// Versions reads the head (the event_seq counter) and the sync epoch (instance.Versions)
	// when State is nil.
	Versions CatchUpVersions
	// Authorizer gives the Decider of the actor with its Scope (authz.Authorizer).
	Authorizer DeciderSource
	// Directory names the actors of each page's events in one query (identity.Directory).
	Directory PrincipalRefs
	// Config holds the catch-up keys (CatchUpConfigFrom).
	Config CatchUpConfig
	// Tokens derives invocation tokens for the delivery-only members of invocation.requested
	// (Delivery.WithInvocationTokens); nil means no delivery carries them.
	Tokens InvocationTokens
	// Rand draws the jitter of retry_after_ms, uniform in [0, 1); nil means math/rand/v2's
	// Float64. Tests fix it.
	Rand func() float64
}

// CatchUp implements sync.CatchUp: Check against the counter, the retention edge and the
// epoch; Page with one prefiltered, window-bounded query, the audience rule and authorize per
// row, and one directory query for the actors. It is safe for concurrent use.
type CatchUp struct {
	log      CatchUpLog
	state    CatchUpState
	delivery *Delivery
	cfg      CatchUpConfig
	rand     func() float64
}

var _ syncmod.CatchUp = (*CatchUp)(nil)

// NewCatchUp returns catch-up over deps; it fails for a missing dependency or an invalid
// configuration (CatchUpConfig.Validate), so wiring mistakes stop the process at start.
func NewCatchUp(deps CatchUpDeps) (*CatchUp, error) {
	var errs []error
	for _, d := range []struct {
		name    string
		missing bool
	}{
		{"log", deps.Log == nil}, {"versions", deps.State == nil && deps.Versions == nil},
		{"authorizer", deps.Authorizer == nil}, {"directory", deps.Directory == nil},
	} {
		if d.missing {
			errs = append(errs, fmt.Errorf("%s is nil", d.name))
		}
	}
	errs = append(errs, deps.Config.Validate())
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("sync: new catch-up: %w", err)
	}
	rnd := deps.Rand
	if rnd == nil {
		rnd = rand.Float64
	}
	state := deps.State
	if state == nil {
		state = sequentialState{versions: deps.Versions, log: deps.Log}
	}
	// The per-row rule and the encoding are Delivery's, shared with the gateway's live
	// events, so both transports deliver a stored event alike.
	return &CatchUp{
		log: deps.Log, state: state,
		delivery: &Delivery{authorizer: deps.Authorizer, directory: deps.Directory, tokens: deps.Tokens},
		cfg:      deps.Config, rand: rnd,
	}, nil
}

// errAfterNegative and errAfterBeyondHead name the cursor parameter of listEvents (after).
var (
	errAfterNegative   = problem.Validation(problem.FieldError{Field: "after", Message: "must be at least 0"})
	errAfterBeyondHead = problem.Validation(problem.FieldError{Field: "after", Message: "must not be beyond the head of the log"})
)

// Check implements sync.CatchUp. It reads the head first (every seq up to it is committed and
// visible), then the retention edge, then the epoch, each without a lock (CatchUpState).
func (c *CatchUp) Check(ctx context.Context, in syncmod.CheckInput) (syncmod.CheckResult, error) {
	res, err := c.check(ctx, in)
	if err != nil {
		return syncmod.CheckResult{}, fmt.Errorf("sync: catch-up check: %w", err)
	}
	return res, nil
}

func (c *CatchUp) check(ctx context.Context, in syncmod.CheckInput) (syncmod.CheckResult, error) {
	if in.After < 0 {
		return syncmod.CheckResult{}, errAfterNegative
	}
	st, err := c.state.CheckState(ctx)
	if err != nil {
		return syncmod.CheckResult{}, err
	}
	return c.decide(in, st), nil
}

// CheckWith is Check on a CheckState the caller read already, in CatchUpState's order and
// with reads of its own in the same round trip (a consumer's page reads its row with it,
// ConsumerPageState): the same verdict, no I/O.
func (c *CatchUp) CheckWith(in syncmod.CheckInput, st CheckState) (syncmod.CheckResult, error) {
	if in.After < 0 {
		return syncmod.CheckResult{}, fmt.Errorf("sync: catch-up check: %w", errAfterNegative)
	}
	return c.decide(in, st), nil
}

// decide is Check's verdict on the state read.
func (c *CatchUp) decide(in syncmod.CheckInput, st CheckState) syncmod.CheckResult {
	head, lowest, epoch := st.Head, st.MinRetainedSeq, st.Epoch
	if !st.Retained {
		// An empty log: the reader's value is only horizon + 1. After retention the log can
		// be empty while the counter is not, so the edge is the head's next seq (spec 03).
		lowest = max(lowest, head+1)
	}
	reason := domain.ResyncReason(in.After, in.Epoch, head, lowest, epoch, int64(c.cfg.MaxEvents))
	return syncmod.CheckResult{
		HeadSeq:        head,
		MinRetainedSeq: lowest,
		SyncEpoch:      epoch,
		Reason:         reason,
		Recovery:       reason.Recovery(),
		RetryAfter:     domain.RetryAfter(reason, c.cfg.RetryBase, c.rand()),

		PermissionVersion:     st.PermissionVersion,
		PermissionVersionRead: st.PermissionVersionRead,
	}
}

// sequentialState is CatchUpState by three reads, one after another.
type sequentialState struct {
	versions CatchUpVersions
	log      CatchUpLog
}

// CheckState implements CatchUpState.
func (s sequentialState) CheckState(ctx context.Context) (CheckState, error) {
	var st CheckState
	var err error
	if st.Head, err = s.versions.EventSeq(ctx); err != nil {
		return st, fmt.Errorf("head: %w", err)
	}
	if st.MinRetainedSeq, st.Retained, err = s.log.MinRetainedSeq(ctx); err != nil {
		return st, err
	}
	if st.Epoch, err = s.versions.SyncEpoch(ctx); err != nil {
		return st, fmt.Errorf("sync epoch: %w", err)
	}
	return st, nil
}

// Page implements sync.CatchUp.
func (c *CatchUp) Page(ctx context.Context, in syncmod.PageInput) (syncmod.PageResult, error) {
	res, err := c.page(ctx, in)
	if err != nil {
		return syncmod.PageResult{}, fmt.Errorf("sync: catch-up page: %w", err)
	}
	return res, nil
}

func (c *CatchUp) page(ctx context.Context, in syncmod.PageInput) (syncmod.PageResult, error) {
	who, err := receiverOf(ctx)
	if err != nil {
		return syncmod.PageResult{}, err
	}
	switch {
	case in.After < 0:
		return syncmod.PageResult{}, errAfterNegative
	case in.After > in.Head:
		return syncmod.PageResult{}, errAfterBeyondHead
	case in.After == in.Head:
		return syncmod.PageResult{Events: []json.RawMessage{}, NextCursor: in.Head}, nil
	}
	if in.PermissionVersionRead {
		// Read with the head by the Check right before: the Scope at that version serves.
		ctx = authz.WithPermissionVersion(ctx, in.PermissionVersion)
	}
	filter, err := c.delivery.For(ctx)
	if err != nil {
		return syncmod.PageResult{}, err
	}
	limit := domain.PageLimit(in.Limit, c.cfg.PageSize)
	through := domain.ScanEnd(in.After, in.Head, int64(c.cfg.ScanWindow))
	rows, err := c.log.CatchUpPage(ctx, domain.PageQuery{
		After: in.After, Through: through, Limit: limit, Filter: prefilter(who.PrincipalID, filter.Scope()),
	})
	if err != nil {
		return syncmod.PageResult{}, err
	}
	if rows.Release != nil {
		// Encoding copies what it needs of the rows, so they go back once the page is made.
		defer rows.Release()
	}
	if rows.HorizonSeq > in.After {
		return syncmod.PageResult{}, c.overtaken(ctx, in.After)
	}
	read := len(rows.Events)
	var lastSeq int64
	if read > 0 {
		lastSeq = rows.Events[read-1].Seq
	}
	// The rows are this page's own, so the delivered ones are kept in place, moved only when a
	// row before them was dropped.
	n := 0
	for i := range rows.Events {
		ok, err := filter.Allow(ctx, rows.Events[i])
		if err != nil {
			return syncmod.PageResult{}, err
		}
		if ok {
			if n != i {
				rows.Events[n] = rows.Events[i]
			}
			n++
		}
	}
	delivered := rows.Events[:n]
	names, err := c.delivery.Names(ctx, delivered)
	if err != nil {
		return syncmod.PageResult{}, err
	}
	only, err := c.delivery.Only(ctx, delivered)
	if err != nil {
		return syncmod.PageResult{}, err
	}
	events, release := encodeReusing(delivered, names, only, filter.Receiver())
	return syncmod.PageResult{
		Events:     events,
		NextCursor: domain.NextCursor(in.After, in.Head, through, read, limit, lastSeq),
		Release:    release,
	}, nil
}

// overtaken answers a page that retention overtook between Check and the page's read: the
// events after the cursor up to the horizon may be gone, so the page cannot be served. The
// state is read again, so the error carries the current head and retention edge.
func (c *CatchUp) overtaken(ctx context.Context, after int64) error {
	res, err := c.check(ctx, syncmod.CheckInput{After: after})
	if err != nil {
		return err
	}
	if res.Reason == "" {
		// The horizon never falls, so the check sees it too; anything else is a broken log.
		return fmt.Errorf("retention passed cursor %d, but the check serves it", after)
	}
	return res.Err()
}

// prefilter turns the reader's Scope into spec 03's SQL prefilter.
func prefilter(principalID uuid.UUID, s authz.Scope) domain.Prefilter {
	return domain.Prefilter{
		PrincipalID:          principalID,
		InstanceWide:         s.InstanceWide(),
		ChannelIDs:           s.VisibleChannelIDs(),
		FullyVisibleSpaceIDs: s.FullyVisibleSpaceIDs(),
		VisibleSpaceIDs:      s.VisibleSpaceIDs(),
	}
}
