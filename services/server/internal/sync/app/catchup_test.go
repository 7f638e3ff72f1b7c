package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/sync/domain"
)

var _ syncmod.CatchUp = (*app.CatchUp)(nil)

var cuSeed = flag.Uint64("catchup.seed", 0, "seed of the catch-up property test (0: from the clock)")

// catchUp runs Check and then pages as who until the cursor reaches the head, returning every
// delivered envelope and the number of pages.
func (e cuEnv) catchUp(t *testing.T, who uuid.UUID, after int64, limit int) ([]cuEnvelope, int) {
	t.Helper()
	ctx := e.as(who)
	res, err := e.cu.Check(ctx, syncmod.CheckInput{After: after})
	if err != nil || res.Reason != "" {
		t.Fatalf("Check(%d) = %+v, %v; want a served cursor", after, res, err)
	}
	var got []cuEnvelope
	pages := 0
	for after < res.HeadSeq {
		p, err := e.cu.Page(ctx, syncmod.PageInput{After: after, Head: res.HeadSeq, Limit: limit})
		if err != nil {
			t.Fatalf("Page(after %d): %v", after, err)
		}
		if p.NextCursor <= after && after < res.HeadSeq {
			t.Fatalf("Page(after %d) did not advance: next %d", after, p.NextCursor)
		}
		if p.Events == nil {
			t.Fatalf("Page(after %d).Events is nil, want a list", after)
		}
		got = append(got, cuDecode(t, p.Events)...)
		after = p.NextCursor
		pages++
	}
	return got, pages
}

func TestPersonalEventsOnlyToAudience(t *testing.T) {
	t.Parallel()
	e := newCUEnv(t, cuTestConfig)
	// The SQL prefilter is switched off: the per-row audience rule alone must hold.
	e.log.loose = true
	msg := e.log.add(cuMessage(cuSupport, cuHelp, cuSam))
	samRead := e.log.add(cuPersonal("read_state.updated", cuSam, cuSupport, cuHelp))
	alexDraft := e.log.add(cuPersonal("draft.saved", cuAlex, cuSupport, cuHelp))
	samSetting := e.log.add(cuPersonal("setting.updated", cuSam, uuid.Nil, uuid.Nil))
	// A personal event of Alex in a channel Alex cannot read: personal events are never
	// authorized, their audience alone decides.
	alexRevoked := e.log.add(cuPersonal("draft.deleted", cuAlex, cuMarketing, cuNews))

	tests := []struct {
		who  uuid.UUID
		want []int64
	}{
		{who: cuAlex, want: []int64{msg, alexDraft, alexRevoked}},
		{who: cuSam, want: []int64{msg, samRead, samSetting}},
		{who: cuRobin, want: nil},
	}
	for _, tc := range tests {
		got, _ := e.catchUp(t, tc.who, 0, 2)
		if !slices.Equal(cuSeqs(got), tc.want) {
			t.Errorf("%v received seqs %v, want %v", tc.who, cuSeqs(got), tc.want)
		}
	}
	for _, d := range e.authz.recorded() {
		if d.res.Kind != kernel.ResourceMessage {
			t.Errorf("a personal event was authorized: %+v", d)
		}
	}
}

func TestPageSkipsInvisibleAndCursorIsLastChecked(t *testing.T) {
	t.Parallel()
	e := newCUEnv(t, cuTestConfig)
	var support []int64
	for i := range 30 {
		if i%3 == 0 {
			support = append(support, e.log.add(cuMessage(cuSupport, cuHelp, cuSam)))
		} else {
			e.log.add(cuMessage(cuMarketing, cuNews, cuSam))
		}
	}
	got, pages := e.catchUp(t, cuAlex, 0, 4)
	if !slices.Equal(cuSeqs(got), support) {
		t.Errorf("Alex received %v, want exactly the Support events %v", cuSeqs(got), support)
	}
	if pages != 3 {
		t.Errorf("pages = %d, want 3 (4 + 4 + 2 Support events)", pages)
	}
	// A full page ends at its last row read, seq 10 here (Support events at 1, 4, 7, 10).
	p, err := e.cu.Page(e.as(cuAlex), syncmod.PageInput{After: 0, Head: 30, Limit: 4})
	if err != nil || p.NextCursor != 10 {
		t.Errorf("first page next cursor = %d, %v; want 10", p.NextCursor, err)
	}
	// Sam reads both spaces: every event, and the decisions ran in filter mode.
	all, _ := e.catchUp(t, cuSam, 0, 7)
	if len(all) != 30 {
		t.Errorf("Sam received %d events, want 30", len(all))
	}
	for _, d := range e.authz.recorded() {
		if !d.filter || d.action != kernel.ActionThreadRead {
			t.Fatalf("decision %+v: want thread.read in filter mode", d)
		}
	}
}

func TestPageDropsWhatAuthorizeDenies(t *testing.T) {
	t.Parallel()
	e := newCUEnv(t, cuTestConfig)
	e.log.loose = true
	visible := e.log.add(cuMessage(cuSupport, cuHelp, cuSam))
	e.log.add(cuMessage(cuMarketing, cuNews, cuSam))
	forbidden := cuMessage(cuSupport, cuHelp, cuSam)
	e.authz.forbidOn = forbidden.ResourceID
	e.log.add(forbidden)
	got, _ := e.catchUp(t, cuAlex, 0, 10)
	if !slices.Equal(cuSeqs(got), []int64{visible}) {
		t.Errorf("Alex received %v, want only %d", cuSeqs(got), visible)
	}
}

func TestPageWindowBoundsTheScan(t *testing.T) {
	t.Parallel()
	cfg := cuTestConfig
	cfg.ScanWindow = 10
	e := newCUEnv(t, cfg)
	for range 94 {
		e.log.add(cuMessage(cuMarketing, cuNews, cuSam))
	}
	only := e.log.add(cuMessage(cuSupport, cuHelp, cuSam))
	for range 5 {
		e.log.add(cuMessage(cuMarketing, cuNews, cuSam))
	}
	got, pages := e.catchUp(t, cuAlex, 0, 50)
	if !slices.Equal(cuSeqs(got), []int64{only}) {
		t.Errorf("Alex received %v, want [%d]", cuSeqs(got), only)
	}
	if pages != 10 {
		t.Errorf("pages = %d, want 10 windows of 10 seqs", pages)
	}
	for _, q := range e.log.pageQueries() {
		if q.Through-q.After > 10 || q.Through > 100 {
			t.Errorf("query %+v reads more than the window or beyond the head", q)
		}
	}
	// A short page inside the log ends at the end of its window, below the head.
	p, err := e.cu.Page(e.as(cuAlex), syncmod.PageInput{After: 20, Head: 100, Limit: 50})
	if err != nil || p.NextCursor != 30 || len(p.Events) != 0 {
		t.Errorf("Page(after 20) = %d events, next %d, %v; want none and next 30", len(p.Events), p.NextCursor, err)
	}
}

func TestPageLimitIsCapped(t *testing.T) {
	t.Parallel()
	cfg := cuTestConfig
	cfg.PageSize = 5
	e := newCUEnv(t, cfg)
	for range 20 {
		e.log.add(cuMessage(cuSupport, cuHelp, cuSam))
	}
	for _, tc := range []struct {
		limit, want int
	}{{0, 5}, {-1, 5}, {3, 3}, {5, 5}, {1000, 5}} {
		p, err := e.cu.Page(e.as(cuSam), syncmod.PageInput{After: 0, Head: 20, Limit: tc.limit})
		if err != nil || len(p.Events) != tc.want || p.NextCursor != int64(tc.want) {
			t.Errorf("limit %d: %d events, next %d, %v; want %d", tc.limit, len(p.Events), p.NextCursor, err, tc.want)
		}
	}
}

func TestPageEncodesForTheReader(t *testing.T) {
	t.Parallel()
	e := newCUEnv(t, cuTestConfig)
	traced := cuMessage(cuSupport, cuHelp, cuSam)
	traced.TraceContext = json.RawMessage(`{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`)
	e.log.add(traced)
	e.log.add(cuMessage(cuSupport, cuHelp, cuAlex))
	e.log.add(cuMessage(cuSupport, cuHelp, cuSam))
	stranger := uuid.Must(uuid.NewV7())
	e.log.add(cuMessage(cuSupport, cuHelp, stranger))

	person, _ := e.catchUp(t, cuSam, 0, 10)
	agent, _ := e.catchUp(t, cuBot, 0, 10)
	if len(person) != 4 || len(agent) != 4 {
		t.Fatalf("received %d and %d events, want 4 each", len(person), len(agent))
	}
	if person[0].TraceContext != nil {
		t.Errorf("a person received trace_context %s", person[0].TraceContext)
	}
	if !strings.Contains(string(agent[0].TraceContext), "traceparent") {
		t.Errorf("an agent did not receive the trace context: %s", agent[0].TraceContext)
	}
	if person[0].Actor.DisplayName != "Sam" || person[1].Actor.DisplayName != "Alex" {
		t.Errorf("actors = %+v, %+v; want Sam and Alex resolved", person[0].Actor, person[1].Actor)
	}
	if person[3].Actor.ID != stranger || person[3].Actor.DisplayName != "" {
		t.Errorf("an unknown actor = %+v, want its bare id", person[3].Actor)
	}
	// One Refs call per page, each id once.
	calls := e.dir.recordedCalls()
	if len(calls) != 2 {
		t.Fatalf("Refs calls = %d, want one per page (2)", len(calls))
	}
	if ids := calls[0]; len(ids) != 3 {
		t.Errorf("Refs ids = %v, want the 3 distinct actors", ids)
	}
}

func TestPageWithoutDeliveriesNamesNobody(t *testing.T) {
	t.Parallel()
	e := newCUEnv(t, cuTestConfig)
	e.log.add(cuMessage(cuMarketing, cuNews, cuSam))
	got, _ := e.catchUp(t, cuRobin, 0, 10)
	if len(got) != 0 || len(e.dir.recordedCalls()) != 0 {
		t.Errorf("Robin received %v with %d Refs calls; want nothing and no call", got, len(e.dir.recordedCalls()))
	}
}

func TestPageAtHeadReadsNothing(t *testing.T) {
	t.Parallel()
	e := newCUEnv(t, cuTestConfig)
	e.log.add(cuMessage(cuSupport, cuHelp, cuSam))
	p, err := e.cu.Page(e.as(cuAlex), syncmod.PageInput{After: 1, Head: 1})
	if err != nil || p.NextCursor != 1 || p.Events == nil || len(p.Events) != 0 {
		t.Errorf("Page at head = %+v, %v; want an empty list and next 1", p, err)
	}
	if q := e.log.pageQueries(); len(q) != 0 {
		t.Errorf("queries at head = %v, want none", q)
	}
}

func TestPageWhenRetentionOvertakesTheReader(t *testing.T) {
	t.Parallel()
	e := newCUEnv(t, cuTestConfig)
	for range 10 {
		e.log.add(cuMessage(cuSupport, cuHelp, cuSam))
	}
	res, err := e.cu.Check(e.as(cuAlex), syncmod.CheckInput{After: 2})
	if err != nil || res.Reason != "" {
		t.Fatalf("Check = %+v, %v", res, err)
	}
	// Retention drops seqs 1..6 while the page is read: seqs 3..6 are lost to Alex.
	e.log.raiseHorizonOnPage = 6
	_, err = e.cu.Page(e.as(cuAlex), syncmod.PageInput{After: 2, Head: res.HeadSeq, Limit: 5})
	re, ok := syncmod.IsResync(err)
	if !ok || re.Check.Reason != syncmod.ResyncRetention || re.Check.MinRetainedSeq != 7 || re.Check.HeadSeq != 10 {
		t.Fatalf("Page = %v; want a ResyncError for retention with min 7 and head 10", err)
	}
	if !errors.Is(err, problem.ErrResyncRequired) {
		t.Errorf("the error does not match problem.ErrResyncRequired")
	}
	// A reader at the horizon lost nothing.
	if _, err := e.cu.Page(e.as(cuAlex), syncmod.PageInput{After: 6, Head: 10, Limit: 5}); err != nil {
		t.Errorf("Page(after the horizon) = %v, want a page", err)
	}
}

func TestPageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		ctx   func(e cuEnv) context.Context
		in    syncmod.PageInput
		setup func(e cuEnv)
		want  error
	}{
		{name: "no actor", ctx: func(cuEnv) context.Context { return context.Background() }, in: syncmod.PageInput{Head: 3}, want: problem.ErrUnauthenticated},
		{name: "pending device", ctx: func(cuEnv) context.Context {
			return actor.With(context.Background(), actor.Actor{PrincipalID: cuAlex, Kind: actor.KindPerson, DevicePending: true})
		}, in: syncmod.PageInput{Head: 3}, want: problem.ErrDevicePending},
		{name: "negative after", in: syncmod.PageInput{After: -1, Head: 3}, want: problem.ErrValidation},
		{name: "after beyond head", in: syncmod.PageInput{After: 4, Head: 3}, want: problem.ErrValidation},
		{name: "decider unavailable", in: syncmod.PageInput{Head: 3}, setup: func(e cuEnv) { e.authz.failFor = true }, want: errCU},
		{name: "log fails", in: syncmod.PageInput{Head: 3}, setup: func(e cuEnv) { e.log.failPage = true }, want: errCU},
		{name: "a decision fails", in: syncmod.PageInput{Head: 3}, setup: func(e cuEnv) { e.authz.failOn = e.log.events[1].ResourceID }, want: errCU},
		{name: "directory fails", in: syncmod.PageInput{Head: 3}, setup: func(e cuEnv) { e.dir.fail = true }, want: errCU},
		{name: "recheck after retention fails", in: syncmod.PageInput{Head: 3}, setup: func(e cuEnv) {
			e.log.raiseHorizonOnPage = 2
			e.log.failEpoch = true
		}, want: errCU},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newCUEnv(t, cuTestConfig)
			for range 3 {
				e.log.add(cuMessage(cuSupport, cuHelp, cuSam))
			}
			if tc.setup != nil {
				tc.setup(e)
			}
			ctx := e.as(cuAlex)
			if tc.ctx != nil {
				ctx = tc.ctx(e)
			}
			_, err := e.cu.Page(ctx, tc.in)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Page = %v, want %v", err, tc.want)
			}
			if errors.Is(tc.want, problem.ErrValidation) && !strings.Contains(problem.From(ctx, err).Errors[0].Field, "after") {
				t.Errorf("validation error %v does not name after", err)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		events    int
		dropped   int64 // retention dropped seqs 1..dropped
		after     int64
		epoch     uuid.UUID
		maxEvents int
		want      syncmod.CheckResult
	}{
		{name: "served", events: 10, after: 4, epoch: cuEpoch,
			want: syncmod.CheckResult{HeadSeq: 10, MinRetainedSeq: 1, SyncEpoch: cuEpoch}},
		{name: "an empty log from the start", after: 0,
			want: syncmod.CheckResult{HeadSeq: 0, MinRetainedSeq: 1, SyncEpoch: cuEpoch}},
		{name: "an emptied log: MinRetainedSeq is head + 1", events: 5, dropped: 5, after: 5,
			want: syncmod.CheckResult{HeadSeq: 5, MinRetainedSeq: 6, SyncEpoch: cuEpoch}},
		{name: "epoch changed", events: 10, after: 4, epoch: cuOldEpoch,
			want: syncmod.CheckResult{HeadSeq: 10, MinRetainedSeq: 1, SyncEpoch: cuEpoch, Reason: syncmod.ResyncEpochChanged, Recovery: syncmod.RecoverySnapshot, RetryAfter: time.Second}},
		{name: "cursor ahead", events: 10, after: 11,
			want: syncmod.CheckResult{HeadSeq: 10, MinRetainedSeq: 1, SyncEpoch: cuEpoch, Reason: syncmod.ResyncCursorAhead, Recovery: syncmod.RecoveryRetry, RetryAfter: time.Second}},
		{name: "retention", events: 10, dropped: 4, after: 2,
			want: syncmod.CheckResult{HeadSeq: 10, MinRetainedSeq: 5, SyncEpoch: cuEpoch, Reason: syncmod.ResyncRetention, Recovery: syncmod.RecoverySnapshot, RetryAfter: time.Second}},
		{name: "too far behind", events: 10, after: 2, maxEvents: 7,
			want: syncmod.CheckResult{HeadSeq: 10, MinRetainedSeq: 1, SyncEpoch: cuEpoch, Reason: syncmod.ResyncTooFarBehind, Recovery: syncmod.RecoverySnapshot, RetryAfter: time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := cuTestConfig
			if tc.maxEvents > 0 {
				cfg.MaxEvents = tc.maxEvents
			}
			e := newCUEnv(t, cfg)
			for range tc.events {
				e.log.add(cuMessage(cuSupport, cuHelp, cuSam))
			}
			if tc.dropped > 0 {
				e.log.drop(tc.dropped)
			}
			got, err := e.cu.Check(context.Background(), syncmod.CheckInput{After: tc.after, Epoch: givenEpoch(tc.epoch)})
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if got != tc.want {
				t.Fatalf("Check = %+v, want %+v", got, tc.want)
			}
			// The head is read first (spec 03): every seq up to it is visible.
			if e.log.order[0] != "head" {
				t.Errorf("reads in order %v, want the head first", e.log.order)
			}
		})
	}
}

// fixedState is a CatchUpState that answers one state and counts its calls.
type fixedState struct {
	state app.CheckState
	err   error
	calls int
}

func (f *fixedState) CheckState(context.Context) (app.CheckState, error) {
	f.calls++
	return f.state, f.err
}

// TestCheckReadsThroughState: without a CatchUpState, Check reads the head, the retention edge
// and the epoch one after another in that order; with one (wire's single round trip), it reads
// them there alone and needs no Versions.
func TestCheckReadsThroughState(t *testing.T) {
	t.Parallel()
	t.Run("three reads in order", func(t *testing.T) {
		t.Parallel()
		e := newCUEnv(t, cuTestConfig)
		e.log.add(cuMessage(cuSupport, cuHelp, cuSam))
		if _, err := e.cu.Check(context.Background(), syncmod.CheckInput{After: 0}); err != nil {
			t.Fatalf("Check: %v", err)
		}
		if want := []string{"head", "min", "epoch"}; !slices.Equal(e.log.order, want) {
			t.Fatalf("reads %v, want %v", e.log.order, want)
		}
	})
	t.Run("one state read", func(t *testing.T) {
		t.Parallel()
		log := newCULog()
		st := &fixedState{state: app.CheckState{Head: 40, MinRetainedSeq: 11, Retained: true, Epoch: cuEpoch}}
		cu, err := app.NewCatchUp(app.CatchUpDeps{
			Log: log, State: st, Authorizer: newCUAuthz(), Directory: newCUDirectory(), Config: cuTestConfig,
			Rand: func() float64 { return 0.5 },
		})
		if err != nil {
			t.Fatalf("NewCatchUp without Versions: %v", err)
		}
		got, err := cu.Check(context.Background(), syncmod.CheckInput{After: 5, Epoch: syncmod.EpochOf(cuEpoch)})
		want := syncmod.CheckResult{HeadSeq: 40, MinRetainedSeq: 11, SyncEpoch: cuEpoch, Reason: syncmod.ResyncRetention,
			Recovery: syncmod.RecoverySnapshot, RetryAfter: time.Second}
		if err != nil || got != want {
			t.Fatalf("Check = %+v, %v; want %+v", got, err, want)
		}
		if st.calls != 1 || len(log.order) != 0 {
			t.Fatalf("%d state reads and log reads %v; want one state read and nothing else", st.calls, log.order)
		}
		// An empty log: the edge is the head's next seq.
		st.state = app.CheckState{Head: 40, MinRetainedSeq: 3, Epoch: cuEpoch}
		if got, err := cu.Check(context.Background(), syncmod.CheckInput{After: 40}); err != nil || got.MinRetainedSeq != 41 || got.Reason != "" {
			t.Fatalf("Check on an emptied log = %+v, %v; want MinRetainedSeq 41, served", got, err)
		}
		st.err = errCU
		if _, err := cu.Check(context.Background(), syncmod.CheckInput{After: 40}); !errors.Is(err, errCU) {
			t.Fatalf("Check = %v, want the state's error", err)
		}
	})
	t.Run("a state read by the caller", func(t *testing.T) {
		t.Parallel()
		// CheckWith (a consumer's page, which reads its row in the same batch) gives Check's
		// verdict on the state handed in and reads nothing.
		log := newCULog()
		st := &fixedState{}
		cu, err := app.NewCatchUp(app.CatchUpDeps{
			Log: log, State: st, Authorizer: newCUAuthz(), Directory: newCUDirectory(), Config: cuTestConfig,
			Rand: func() float64 { return 0.5 },
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			state app.CheckState
			in    syncmod.CheckInput
		}{
			{app.CheckState{Head: 40, MinRetainedSeq: 11, Retained: true, Epoch: cuEpoch, PermissionVersion: 3, PermissionVersionRead: true}, syncmod.CheckInput{After: 20, Epoch: syncmod.EpochOf(cuEpoch)}},
			{app.CheckState{Head: 40, MinRetainedSeq: 11, Retained: true, Epoch: cuEpoch}, syncmod.CheckInput{After: 5}},
			{app.CheckState{Head: 40, MinRetainedSeq: 1, Retained: true, Epoch: cuEpoch}, syncmod.CheckInput{After: 41}},
			{app.CheckState{Head: 40, MinRetainedSeq: 1, Retained: true, Epoch: cuEpoch}, syncmod.CheckInput{After: 41, Epoch: syncmod.EpochOf(cuOldEpoch)}},
			{app.CheckState{Head: 40, MinRetainedSeq: 3, Epoch: cuEpoch}, syncmod.CheckInput{After: 40}},
		} {
			st.state = tc.state
			want, err := cu.Check(context.Background(), tc.in)
			if err != nil {
				t.Fatal(err)
			}
			calls := st.calls
			if got, err := cu.CheckWith(tc.in, tc.state); err != nil || got != want {
				t.Fatalf("CheckWith(%+v, %+v) = %+v, %v; want Check's %+v", tc.in, tc.state, got, err, want)
			}
			if st.calls != calls || len(log.order) != 0 {
				t.Fatalf("CheckWith read the state (%d calls) or the log (%v)", st.calls-calls, log.order)
			}
		}
		if _, err := cu.CheckWith(syncmod.CheckInput{After: -1}, app.CheckState{}); !errors.Is(err, problem.ErrValidation) {
			t.Fatalf("CheckWith(-1) = %v, want a validation error", err)
		}
	})
}

// TestPageTakesTheCheckedPermissionVersion: the permission version a state read with the head
// comes back in CheckResult, and a page given it (PermissionVersionRead) asks for the actor's
// Scope at that version (authz.WithPermissionVersion) instead of having it read again; a page
// without it asks for the current Scope.
func TestPageTakesTheCheckedPermissionVersion(t *testing.T) {
	t.Parallel()
	log := newCULog()
	for range 3 {
		log.add(cuMessage(cuSupport, cuHelp, cuSam))
	}
	auth := newCUAuthz()
	st := &fixedState{state: app.CheckState{Head: 3, MinRetainedSeq: 1, Retained: true, Epoch: cuEpoch, PermissionVersion: 9, PermissionVersionRead: true}}
	cu, err := app.NewCatchUp(app.CatchUpDeps{Log: log, State: st, Authorizer: auth, Directory: newCUDirectory(), Config: cuTestConfig})
	if err != nil {
		t.Fatalf("NewCatchUp: %v", err)
	}
	ctx := actor.With(context.Background(), actor.Actor{PrincipalID: cuAlex, Kind: actor.KindPerson})
	res, err := cu.Check(ctx, syncmod.CheckInput{After: 0})
	if err != nil || res.PermissionVersion != 9 || !res.PermissionVersionRead {
		t.Fatalf("Check = %+v, %v; want permission version 9, read", res, err)
	}
	in := syncmod.PageInput{After: 0, Head: res.HeadSeq, PermissionVersion: res.PermissionVersion, PermissionVersionRead: res.PermissionVersionRead}
	if _, err := cu.Page(ctx, in); err != nil {
		t.Fatalf("Page: %v", err)
	}
	in.PermissionVersionRead = false
	if _, err := cu.Page(ctx, in); err != nil {
		t.Fatalf("Page: %v", err)
	}
	auth.mu.Lock()
	known := slices.Clone(auth.known)
	auth.mu.Unlock()
	if !slices.Equal(known, []int64{9, -1}) {
		t.Fatalf("ForActor saw permission versions %v, want [9 -1] (the checked one, then none)", known)
	}
}

// TestPageReleasesItsRowsAfterEncoding: the page hands its rows back once (CatchUpLog's
// Release) only after encoding them, so the envelopes hold the payloads as read, and its own
// Release may be called twice.
func TestPageReleasesItsRowsAfterEncoding(t *testing.T) {
	t.Parallel()
	e := newCUEnv(t, cuTestConfig)
	e.log.releasing = true
	for range 5 {
		e.log.add(cuMessage(cuSupport, cuHelp, cuSam))
	}
	ctx := e.as(cuAlex)
	res, err := e.cu.Check(ctx, syncmod.CheckInput{})
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	page, err := e.cu.Page(ctx, syncmod.PageInput{Head: res.HeadSeq})
	if err != nil || len(page.Events) != 5 {
		t.Fatalf("Page = %d events, %v; want 5", len(page.Events), err)
	}
	if e.log.releases != 1 {
		t.Fatalf("the rows were released %d times, want once", e.log.releases)
	}
	for i, env := range page.Events {
		var got struct {
			Payload map[string]any `json:"payload"`
		}
		if err := json.Unmarshal(env, &got); err != nil || got.Payload["n"] != float64(i+1) {
			t.Fatalf("envelope %d = %s (%v): the payload was not copied before the release", i, env, err)
		}
	}
	if page.Release == nil {
		t.Fatal("a page without Release")
	}
	page.Release()
	page.Release()
	// The next page may reuse the buffer: it still encodes its own events.
	e.log.add(cuMessage(cuSupport, cuHelp, cuSam))
	next, err := e.cu.Page(ctx, syncmod.PageInput{After: page.NextCursor, Head: res.HeadSeq + 1})
	if err != nil || len(next.Events) != 1 || !strings.Contains(string(next.Events[0]), `"payload":{"n":6}`) {
		t.Fatalf("next page = %s, %v", next.Events, err)
	}
}

func TestCheckErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		after int64
		setup func(l *cuLog)
		want  error
	}{
		{name: "negative after", after: -1, want: problem.ErrValidation},
		{name: "head", setup: func(l *cuLog) { l.failHead = true }, want: errCU},
		{name: "min retained", setup: func(l *cuLog) { l.failMin = true }, want: errCU},
		{name: "epoch", setup: func(l *cuLog) { l.failEpoch = true }, want: errCU},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newCUEnv(t, cuTestConfig)
			if tc.setup != nil {
				tc.setup(e.log)
			}
			if _, err := e.cu.Check(context.Background(), syncmod.CheckInput{After: tc.after}); !errors.Is(err, tc.want) {
				t.Fatalf("Check = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestCheckJitter(t *testing.T) {
	t.Parallel()
	log := newCULog()
	log.add(cuMessage(cuSupport, cuHelp, cuSam))
	draws := []float64{0, 0.999}
	cu, err := app.NewCatchUp(app.CatchUpDeps{
		Log: log, Versions: log, Authorizer: newCUAuthz(), Directory: newCUDirectory(), Config: cuTestConfig,
		Rand: func() float64 { d := draws[0]; draws = draws[1:]; return d },
	})
	if err != nil {
		t.Fatalf("NewCatchUp: %v", err)
	}
	var got []time.Duration
	for range 2 {
		res, err := cu.Check(context.Background(), syncmod.CheckInput{After: 5})
		if err != nil {
			t.Fatalf("Check: %v", err)
		}
		got = append(got, res.RetryAfter)
	}
	if got[0] != 500*time.Millisecond || got[1] < 1490*time.Millisecond || got[1] >= 1500*time.Millisecond {
		t.Errorf("retry afters %v, want half the base and just below one and a half", got)
	}
	// Without a Rand the process's random source jitters within the same bounds.
	cu, err = app.NewCatchUp(app.CatchUpDeps{Log: log, Versions: log, Authorizer: newCUAuthz(), Directory: newCUDirectory(), Config: cuTestConfig})
	if err != nil {
		t.Fatalf("NewCatchUp: %v", err)
	}
	res, err := cu.Check(context.Background(), syncmod.CheckInput{After: 5})
	if err != nil || res.RetryAfter < 500*time.Millisecond || res.RetryAfter >= 1500*time.Millisecond {
		t.Errorf("RetryAfter = %v, %v; want within base +- half", res.RetryAfter, err)
	}
}

func TestNewCatchUpRefusesMissingParts(t *testing.T) {
	t.Parallel()
	log := newCULog()
	full := app.CatchUpDeps{Log: log, Versions: log, Authorizer: newCUAuthz(), Directory: newCUDirectory(), Config: cuTestConfig}
	for _, tc := range []struct {
		name   string
		change func(d *app.CatchUpDeps)
		want   string
	}{
		{"log", func(d *app.CatchUpDeps) { d.Log = nil }, "log is nil"},
		{"versions without state", func(d *app.CatchUpDeps) { d.Versions = nil }, "versions is nil"},
		{"authorizer", func(d *app.CatchUpDeps) { d.Authorizer = nil }, "authorizer is nil"},
		{"directory", func(d *app.CatchUpDeps) { d.Directory = nil }, "directory is nil"},
		{"config", func(d *app.CatchUpDeps) { d.Config.PageSize = 0 }, "sync.catchup_page_size"},
	} {
		d := full
		tc.change(&d)
		if _, err := app.NewCatchUp(d); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: NewCatchUp = %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
}

func TestCatchUpConfig(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load("", nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	got := app.CatchUpConfigFrom(cfg)
	want := app.CatchUpConfig{PageSize: 500, ScanWindow: 5000, MaxEvents: 1_000_000, RetryBase: time.Second}
	if got != want || got.Validate() != nil {
		t.Errorf("defaults = %+v (valid: %v), want %+v", got, got.Validate(), want)
	}
	for _, tc := range []struct {
		change func(c *app.CatchUpConfig)
		key    string
	}{
		{func(c *app.CatchUpConfig) { c.PageSize = 0 }, "sync.catchup_page_size"},
		{func(c *app.CatchUpConfig) { c.ScanWindow = 0 }, "sync.catchup_scan_window"},
		{func(c *app.CatchUpConfig) { c.MaxEvents = -1 }, "sync.catchup_max_events"},
		{func(c *app.CatchUpConfig) { c.RetryBase = 0 }, "sync.resync_retry_base"},
	} {
		c := want
		tc.change(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", c, err, tc.key)
		}
	}
}

// TestCatchUpDeliversExactlyWhatAuthorizeAllows is the catch-up property over random worlds:
// every reader, paging with any page size and scan window, receives exactly the events the
// audience rule and the policy allow, in seq order, without gap or duplicate.
func TestCatchUpDeliversExactlyWhatAuthorizeAllows(t *testing.T) {
	t.Parallel()
	seed := *cuSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -catchup.seed=%d)", seed, seed)
	rnd := rand.New(rand.NewPCG(seed, seed^0x5eed)) //nolint:gosec // G404: reproducible test worlds, not secrets
	readers := []uuid.UUID{cuAlex, cuSam, cuRobin, cuBot}
	places := [][2]uuid.UUID{{cuSupport, cuHelp}, {cuMarketing, cuNews}, {cuSupport, uuid.Nil}, {cuMarketing, uuid.Nil}, {uuid.Nil, uuid.Nil}}
	for world := range 40 {
		cfg := app.CatchUpConfig{PageSize: 1 + rnd.IntN(8), ScanWindow: 1 + rnd.IntN(30), MaxEvents: 1 << 30, RetryBase: time.Second}
		e := newCUEnv(t, cfg)
		e.log.loose = rnd.IntN(2) == 0
		n := rnd.IntN(120)
		for range n {
			p := places[rnd.IntN(len(places))]
			switch rnd.IntN(4) {
			case 0:
				e.log.add(cuPersonal("read_state.updated", readers[rnd.IntN(len(readers))], p[0], p[1]))
			case 1:
				e.log.add(cuAgentCreated(cuSam))
			default:
				if p[1] == uuid.Nil {
					e.log.add(domain.StoredEvent{Type: "space.updated", ActorID: cuSam, SpaceID: p[0],
						ResourceKind: kernel.ResourceSpace, ResourceID: p[0], ReceiveAction: kernel.ActionSpaceRead})
					continue
				}
				e.log.add(cuMessage(p[0], p[1], cuSam))
			}
		}
		for _, who := range readers {
			var want []int64
			r := e.authz.readers[who]
			for _, ev := range e.log.events {
				ok := ev.AudienceID == who
				if !ev.Personal() {
					ok = r.mayRead(resourceOf(ev))
				}
				if ok {
					want = append(want, ev.Seq)
				}
			}
			after := int64(rnd.IntN(n/2 + 1))
			want = slices.DeleteFunc(want, func(s int64) bool { return s <= after })
			got, _ := e.catchUp(t, who, after, 1+rnd.IntN(10))
			if !slices.Equal(cuSeqs(got), want) {
				t.Fatalf("world %d (seed %d, config %+v, loose %v): %v after %d received %v, want %v",
					world, seed, cfg, e.log.loose, who, after, cuSeqs(got), want)
			}
		}
	}
}

// resourceOf is the oracle's own reading of an event's resource.
func resourceOf(e domain.StoredEvent) authorize.Resource {
	return authorize.Resource{Kind: e.ResourceKind, ID: e.ResourceID, SpaceID: e.SpaceID, ChannelID: e.ChannelID, ThreadID: e.ThreadID}
}

// givenEpoch is the cursor epoch of a table row: none for uuid.Nil, else that epoch.
func givenEpoch(id uuid.UUID) syncmod.CursorEpoch {
	if id == uuid.Nil {
		return syncmod.CursorEpoch{}
	}
	return syncmod.EpochOf(id)
}
