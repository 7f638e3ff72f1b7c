package app_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/app"
)

// consumerStore is a map-backed app.ConsumerStore.
type consumerStore struct {
	rows    map[string]syncmod.Consumer // by principal and name
	inEpoch int                         // calls of AdvanceInEpoch
	gets    int                         // calls of Get
}

func key(p uuid.UUID, name string) string { return p.String() + "/" + name }

func (s *consumerStore) Create(_ context.Context, c syncmod.Consumer, maxPer int) (syncmod.Consumer, bool, error) {
	if got, ok := s.rows[key(c.PrincipalID, c.Name)]; ok {
		return got, false, nil
	}
	n := 0
	for k := range s.rows {
		if strings.HasPrefix(k, c.PrincipalID.String()) {
			n++
		}
	}
	if n >= maxPer {
		return syncmod.Consumer{}, false, app.ErrConsumerLimit
	}
	s.rows[key(c.PrincipalID, c.Name)] = c
	return c, true, nil
}

func (s *consumerStore) Get(_ context.Context, p uuid.UUID, name string) (syncmod.Consumer, bool, error) {
	s.gets++
	c, ok := s.rows[key(p, name)]
	return c, ok, nil
}

func (s *consumerStore) List(_ context.Context, p uuid.UUID) ([]syncmod.Consumer, error) {
	var out []syncmod.Consumer
	for _, c := range s.rows {
		if c.PrincipalID == p {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b syncmod.Consumer) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (s *consumerStore) Delete(_ context.Context, p uuid.UUID, name string) error {
	delete(s.rows, key(p, name))
	return nil
}

func (s *consumerStore) Advance(_ context.Context, p uuid.UUID, name string, seq int64, at time.Time) (syncmod.Consumer, bool, error) {
	c, ok := s.rows[key(p, name)]
	if !ok {
		return syncmod.Consumer{}, false, nil
	}
	if seq > c.AckedSeq {
		c.AckedSeq, c.UpdatedAt = seq, at
		s.rows[key(p, name)] = c
	}
	return c, true, nil
}

func (s *consumerStore) AdvanceInEpoch(_ context.Context, p uuid.UUID, name string, seq int64, epoch uuid.UUID, at time.Time) (syncmod.Consumer, bool, error) {
	s.inEpoch++
	c, ok := s.rows[key(p, name)]
	if !ok || c.SyncEpoch != epoch || c.AckedSeq >= seq {
		return syncmod.Consumer{}, false, nil
	}
	c.AckedSeq, c.UpdatedAt = seq, at
	s.rows[key(p, name)] = c
	return c, true, nil
}

// consumerCatchUp is a sync.CatchUp whose Check reports a fixed head and epoch and counts its
// calls; Page returns the cursor it was asked for.
type consumerCatchUp struct {
	head   int64
	epoch  uuid.UUID
	checks int
	pages  []syncmod.PageInput
}

func (c *consumerCatchUp) Check(_ context.Context, in syncmod.CheckInput) (syncmod.CheckResult, error) {
	c.checks++
	res := syncmod.CheckResult{HeadSeq: c.head, SyncEpoch: c.epoch}
	if in.Epoch.Given && in.Epoch.ID != c.epoch {
		res.Reason = syncmod.ResyncEpochChanged
	}
	return res, nil
}

// AckState reads the fake's head and epoch, counted with the checks: an ack's one read.
func (c *consumerCatchUp) AckState(context.Context) (app.SnapshotHead, error) {
	c.checks++
	return app.SnapshotHead{Seq: c.head, Epoch: c.epoch, PermissionVersion: 1}, nil
}

// CheckWith decides on the state the page-state fake read, as Check does on its own reads:
// cursor_ahead above the head, then epoch_changed for a foreign epoch.
func (c *consumerCatchUp) CheckWith(in syncmod.CheckInput, st app.CheckState) (syncmod.CheckResult, error) {
	if in.After < 0 {
		return syncmod.CheckResult{}, problem.ErrValidation
	}
	res := syncmod.CheckResult{HeadSeq: st.Head, SyncEpoch: st.Epoch}
	switch {
	case in.Epoch.Given && in.Epoch.ID != st.Epoch:
		res.Reason = syncmod.ResyncEpochChanged
	case in.After > st.Head:
		res.Reason = syncmod.ResyncCursorAhead
	}
	return res, nil
}

// pageState is an app.ConsumerPageState over the fake store and the fake catch-up's head and
// epoch; it counts its reads (each one round trip in wire).
type pageState struct {
	store *consumerStore
	cu    *consumerCatchUp
	reads int
}

func (p *pageState) ConsumerPageState(_ context.Context, principalID uuid.UUID, name string) (syncmod.Consumer, bool, app.CheckState, error) {
	p.reads++
	c, ok := p.store.rows[key(principalID, name)]
	return c, ok, app.CheckState{Head: p.cu.head, Epoch: p.cu.epoch}, nil
}

func (c *consumerCatchUp) Page(_ context.Context, in syncmod.PageInput) (syncmod.PageResult, error) {
	c.pages = append(c.pages, in)
	return syncmod.PageResult{Events: nil, NextCursor: in.Head}, nil
}

// allowCatchUp allows events.catch_up on the instance to everyone and nothing else.
type allowCatchUp struct{}

func (allowCatchUp) Authorize(_ context.Context, a kernel.Action, r authorize.Resource) error {
	if a == kernel.ActionEventsCatchUp && r.Kind == kernel.ResourceInstance {
		return nil
	}
	return problem.ErrForbidden
}

func newConsumers(t *testing.T, head int64, epoch uuid.UUID) (*app.Consumers, *consumerStore, *consumerCatchUp) {
	t.Helper()
	c, store, cu, _ := newConsumersWithState(t, head, epoch)
	return c, store, cu
}

// newConsumersWithState is newConsumers with the page-state fake, to count a page's reads.
func newConsumersWithState(t *testing.T, head int64, epoch uuid.UUID) (*app.Consumers, *consumerStore, *consumerCatchUp, *pageState) {
	t.Helper()
	store := &consumerStore{rows: map[string]syncmod.Consumer{}}
	cu := &consumerCatchUp{head: head, epoch: epoch}
	ps := &pageState{store: store, cu: cu}
	c, err := app.NewConsumers(app.ConsumersDeps{
		Store: store, CatchUp: cu, PageState: ps, Checker: cu, Head: cu, Authorizer: allowCatchUp{},
		Clock:  clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)),
		Config: app.ConsumersConfig{NameMaxLength: 16, MaxPerPrincipal: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c, store, cu, ps
}

// denyAll refuses every action, as for an app without events:subscribe.
type denyAll struct{}

func (denyAll) Authorize(context.Context, kernel.Action, authorize.Resource) error {
	return problem.ErrForbidden
}

func TestConsumersAuthorize(t *testing.T) {
	t.Parallel()
	c, err := app.NewConsumers(app.ConsumersDeps{
		Store: &consumerStore{rows: map[string]syncmod.Consumer{}}, CatchUp: &consumerCatchUp{},
		PageState: &pageState{}, Checker: &consumerCatchUp{}, Head: &consumerCatchUp{}, Authorizer: denyAll{},
		Clock:  clock.NewFake(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)),
		Config: app.ConsumersConfig{NameMaxLength: 16, MaxPerPrincipal: 2},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := actor.With(context.Background(), actor.Actor{PrincipalID: uuid.New(), Kind: actor.KindApp})
	if _, _, err := c.Ensure(ctx, "main"); !errors.Is(err, problem.ErrForbidden) {
		t.Errorf("Ensure without events.catch_up = %v, want forbidden", err)
	}
	if _, err := c.Ack(ctx, "main", 1); !errors.Is(err, problem.ErrForbidden) {
		t.Errorf("Ack without events.catch_up = %v, want forbidden", err)
	}
	allowed, _, _ := newConsumers(t, 10, uuid.New())
	if _, err := allowed.List(context.Background()); !errors.Is(err, problem.ErrUnauthenticated) {
		t.Errorf("List without an actor = %v, want unauthenticated", err)
	}
	person := actor.With(context.Background(), actor.Actor{PrincipalID: uuid.New(), Kind: actor.KindPerson})
	if _, created, err := allowed.Ensure(person, "bot"); err != nil || !created {
		t.Errorf("Ensure as a person = %v, %v; want created (consumers are open to every principal)", created, err)
	}
}

func TestConsumersAck(t *testing.T) {
	t.Parallel()
	epoch := uuid.New()
	// Every ack reads the head (and the permission_version) first; the common one (ahead,
	// in the epoch, within the head) is then one conditional update, any other reads the row.
	tests := []struct {
		name     string
		start    int64
		rowEpoch uuid.UUID
		seq      int64
		want     int64
		err      error
		gets     int // Get calls of the ack (0: the update alone)
	}{
		{"forward", 3, epoch, 7, 7, nil, 0},
		{"to the head", 3, epoch, 10, 10, nil, 0},
		{"same", 3, epoch, 3, 3, nil, 1},
		{"back", 5, epoch, 2, 5, nil, 1},
		{"above the head", 3, epoch, 11, 3, problem.ErrConflict, 1},
		{"an earlier epoch", 3, uuid.New(), 4, 3, problem.ErrConflict, 1},
		{"an earlier epoch, behind", 5, uuid.New(), 4, 5, nil, 1},
		{"negative", 3, epoch, -1, 3, problem.ErrValidation, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, store, cu := newConsumers(t, 10, epoch)
			agent := actor.Actor{PrincipalID: uuid.New(), Kind: actor.KindAgent}
			store.rows[key(agent.PrincipalID, "main")] = syncmod.Consumer{PrincipalID: agent.PrincipalID, Name: "main", AckedSeq: tt.start, SyncEpoch: tt.rowEpoch}
			got, err := c.Ack(actor.With(context.Background(), agent), "main", tt.seq)
			if !errors.Is(err, tt.err) {
				t.Fatalf("Ack(%d) error %v, want %v", tt.seq, err, tt.err)
			}
			if err == nil && got.AckedSeq != tt.want {
				t.Fatalf("Ack(%d) = %d, want %d", tt.seq, got.AckedSeq, tt.want)
			}
			if row := store.rows[key(agent.PrincipalID, "main")]; row.AckedSeq != tt.want {
				t.Fatalf("stored acked_seq %d, want %d", row.AckedSeq, tt.want)
			}
			if cu.checks != 1 || store.gets != tt.gets {
				t.Fatalf("%d head reads and %d row reads, want 1 and %d", cu.checks, store.gets, tt.gets)
			}
		})
	}
	// A consumer that does not exist is not found, ahead of the head or not.
	c, _, _ := newConsumers(t, 10, epoch)
	agent := actor.With(context.Background(), actor.Actor{PrincipalID: uuid.New(), Kind: actor.KindAgent})
	for _, seq := range []int64{4, 11} {
		if _, err := c.Ack(agent, "gone", seq); !errors.Is(err, problem.ErrNotFound) {
			t.Errorf("Ack(gone, %d) = %v, want not found", seq, err)
		}
	}
}

func TestConsumersEnsureAndEvents(t *testing.T) {
	t.Parallel()
	epoch := uuid.New()
	c, _, cu := newConsumers(t, 10, epoch)
	app1 := actor.With(context.Background(), actor.Actor{PrincipalID: uuid.New(), Kind: actor.KindApp})
	got, created, err := c.Ensure(app1, "main")
	if err != nil || !created || got.AckedSeq != 10 || got.SyncEpoch != epoch {
		t.Fatalf("Ensure = %+v, %v, %v; want created at head 10 in the epoch", got, created, err)
	}
	cu.head = 12
	if again, created, err := c.Ensure(app1, "main"); err != nil || created || again != got {
		t.Fatalf("Ensure again = %+v, %v, %v; want the first unchanged", again, created, err)
	}
	if _, _, err := c.Ensure(app1, "Bad"); !errors.Is(err, problem.ErrValidation) {
		t.Fatalf("Ensure(Bad) = %v, want a validation error", err)
	}
	if _, _, err := c.Ensure(app1, "b"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Ensure(app1, "c"); !errors.Is(err, problem.ErrConflict) {
		t.Fatalf("a third consumer (cap 2) = %v, want conflict", err)
	}
	res, _, err := c.Events(app1, "main", syncmod.ConsumerEventsInput{Limit: 5})
	if err != nil || res.Reason != "" {
		t.Fatalf("Events = %+v, %v", res, err)
	}
	if p := cu.pages[len(cu.pages)-1]; p.After != 10 || p.Head != 12 || p.Limit != 5 {
		t.Fatalf("Events paged %+v, want after the acked_seq 10 up to the head 12, limit 5", p)
	}
	cu.epoch = uuid.New() // a restore
	if res, _, err := c.Events(app1, "main", syncmod.ConsumerEventsInput{}); err != nil || res.Reason != syncmod.ResyncEpochChanged {
		t.Fatalf("Events after a restore = %+v, %v; want epoch_changed", res.Reason, err)
	}
	if _, _, err := c.Events(app1, "gone", syncmod.ConsumerEventsInput{}); !errors.Is(err, problem.ErrNotFound) {
		t.Fatalf("Events of an unknown consumer = %v, want not found", err)
	}
}

// TestConsumersEventsAfter: a page starts after the greater of the client's after and
// acked_seq, in the consumer's epoch; a cursor above the head is cursor_ahead and a negative one
// a validation error; the page reads its row and state once (one round trip in wire), reads
// nothing else before the page, and moves nothing.
func TestConsumersEventsAfter(t *testing.T) {
	t.Parallel()
	epoch := uuid.New()
	given := func(after int64) syncmod.ConsumerEventsInput {
		return syncmod.ConsumerEventsInput{After: after, AfterGiven: true, Limit: 7}
	}
	tests := []struct {
		name     string
		rowEpoch uuid.UUID
		in       syncmod.ConsumerEventsInput
		from     int64 // where the page starts; -1: no page
		reason   syncmod.ResyncReason
		err      error
		reads    int
	}{
		{"without after: acked_seq", epoch, syncmod.ConsumerEventsInput{Limit: 7}, 4, "", nil, 1},
		{"ahead of the acks", epoch, given(8), 8, "", nil, 1},
		{"at acked_seq", epoch, given(4), 4, "", nil, 1},
		{"below acked_seq: acked_seq", epoch, given(1), 4, "", nil, 1},
		{"zero: acked_seq", epoch, given(0), 4, "", nil, 1},
		{"at the head: an empty page", epoch, given(10), 10, "", nil, 1},
		{"above the head", epoch, given(11), -1, syncmod.ResyncCursorAhead, nil, 1},
		{"another epoch", uuid.New(), given(8), -1, syncmod.ResyncEpochChanged, nil, 1},
		{"negative", epoch, given(-1), -1, "", problem.ErrValidation, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, store, cu, ps := newConsumersWithState(t, 10, epoch)
			agent := actor.Actor{PrincipalID: uuid.New(), Kind: actor.KindAgent}
			row := syncmod.Consumer{PrincipalID: agent.PrincipalID, Name: "main", AckedSeq: 4, SyncEpoch: tt.rowEpoch}
			store.rows[key(agent.PrincipalID, "main")] = row
			res, _, err := c.Events(actor.With(context.Background(), agent), "main", tt.in)
			if !errors.Is(err, tt.err) || (tt.err != nil) != (err != nil) {
				t.Fatalf("Events(%+v) error %v, want %v", tt.in, err, tt.err)
			}
			if res.Reason != tt.reason {
				t.Fatalf("Events(%+v) reason %q, want %q", tt.in, res.Reason, tt.reason)
			}
			switch {
			case tt.from < 0 && len(cu.pages) != 0:
				t.Fatalf("Events(%+v) paged %+v, want no page", tt.in, cu.pages)
			case tt.from >= 0 && (len(cu.pages) != 1 || cu.pages[0].After != tt.from || cu.pages[0].Head != 10 || cu.pages[0].Limit != 7):
				t.Fatalf("Events(%+v) paged %+v, want one page after %d up to the head 10, limit 7", tt.in, cu.pages, tt.from)
			}
			if ps.reads != tt.reads || cu.checks != 0 || store.gets != 0 || store.inEpoch != 0 {
				t.Fatalf("%d batched reads, %d checks, %d row reads, %d updates; want %d batched and nothing else",
					ps.reads, cu.checks, store.gets, store.inEpoch, tt.reads)
			}
			if got := store.rows[key(agent.PrincipalID, "main")]; got != row {
				t.Fatalf("the page moved the consumer to %+v", got)
			}
		})
	}
}
