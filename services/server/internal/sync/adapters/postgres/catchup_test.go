package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/kernel"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	"bothy.example.com/server/internal/sync/domain"
)

var cuSeed = flag.Uint64("catchup.seed", 0, "seed of the catch-up world of the page tests (0: from the clock)")

// cuWorld is a log in many channels of several spaces, a direct message and no place at all,
// with personal events for the readers, and the readers' prefilters.
type cuWorld struct {
	events  []domain.StoredEvent
	readers map[string]domain.Prefilter
}

// The readers of cuWorld: one who holds a grant on one channel only, one who sees everything,
// one with a space grant, one in a direct message only, one who sees nothing.
const (
	readerOneChannel = "one channel"
	readerEverything = "everything"
	readerSpace      = "space grant"
	readerDM         = "direct message"
	readerNothing    = "nothing"
)

// newCUWorld builds n events over spaces x channelsPerSpace channels, in seq order from 1.
func newCUWorld(rnd *rand.Rand, n, spaces, channelsPerSpace int) cuWorld {
	spaceIDs := make([]uuid.UUID, spaces)
	type place struct{ space, channel uuid.UUID }
	var channels []place
	for i := range spaceIDs {
		spaceIDs[i] = uuid.Must(uuid.NewV7())
		for range channelsPerSpace {
			channels = append(channels, place{spaceIDs[i], uuid.Must(uuid.NewV7())})
		}
	}
	dm := uuid.Must(uuid.NewV7())
	principal := map[string]uuid.UUID{}
	for _, r := range []string{readerOneChannel, readerEverything, readerSpace, readerDM, readerNothing} {
		principal[r] = uuid.Must(uuid.NewV7())
	}
	w := cuWorld{readers: map[string]domain.Prefilter{
		readerOneChannel: {PrincipalID: principal[readerOneChannel], ChannelIDs: []uuid.UUID{channels[0].channel}, VisibleSpaceIDs: []uuid.UUID{channels[0].space}},
		readerEverything: {PrincipalID: principal[readerEverything], InstanceWide: true},
		readerSpace:      {PrincipalID: principal[readerSpace], FullyVisibleSpaceIDs: []uuid.UUID{spaceIDs[1]}, VisibleSpaceIDs: []uuid.UUID{spaceIDs[1]}},
		readerDM:         {PrincipalID: principal[readerDM], ChannelIDs: []uuid.UUID{dm}},
		readerNothing:    {PrincipalID: principal[readerNothing]},
	}}
	audiences := []uuid.UUID{principal[readerOneChannel], principal[readerEverything], principal[readerSpace], principal[readerDM], principal[readerNothing]}
	at := time.Now().UTC().Truncate(time.Microsecond)
	for seq := int64(1); seq <= int64(n); seq++ {
		e := domain.StoredEvent{Seq: seq, ID: uuid.Must(uuid.NewV7()), OccurredAt: at, ActorID: audiences[rnd.IntN(len(audiences))]}
		p := channels[rnd.IntN(len(channels))]
		switch k := rnd.IntN(100); {
		case k < 70:
			e.Type, e.SpaceID, e.ChannelID, e.ThreadID = "message.created", p.space, p.channel, uuid.Must(uuid.NewV7())
			e.ResourceKind, e.ResourceID, e.ReceiveAction = kernel.ResourceMessage, uuid.Must(uuid.NewV7()), kernel.ActionThreadRead
		case k < 73:
			e.Type, e.ChannelID, e.ThreadID = "message.created", dm, uuid.Must(uuid.NewV7())
			e.ResourceKind, e.ResourceID, e.ReceiveAction = kernel.ResourceMessage, uuid.Must(uuid.NewV7()), kernel.ActionThreadRead
		case k < 80:
			e.Type, e.SpaceID = "space.updated", p.space
			e.ResourceKind, e.ResourceID, e.ReceiveAction = kernel.ResourceSpace, p.space, kernel.ActionSpaceRead
		case k < 84:
			e.Type = "agent.created"
			e.ResourceKind, e.ResourceID, e.ReceiveAction = kernel.ResourceAgent, uuid.Must(uuid.NewV7()), kernel.ActionAgentRead
		default:
			e.Type, e.SpaceID, e.ChannelID, e.ThreadID = "read_state.updated", p.space, p.channel, uuid.Must(uuid.NewV7())
			e.ResourceKind, e.ResourceID = kernel.ResourceThread, e.ThreadID
			e.AudienceID = audiences[rnd.IntN(len(audiences))]
		}
		e.Payload = json.RawMessage(fmt.Sprintf(`{"n": %d}`, seq))
		w.events = append(w.events, e)
	}
	return w
}

// seed copies the world's events into the log as they are (seqs included), bypassing the
// appender: the page's read does not care how rows came.
func (w cuWorld) seed(t testing.TB, e env) {
	t.Helper()
	rows := make([][]any, len(w.events))
	for i, ev := range w.events {
		var action any
		if ev.ReceiveAction != "" {
			action = string(ev.ReceiveAction)
		}
		rows[i] = []any{
			ev.Seq, ev.ID, ev.Type, ev.OccurredAt, ev.ActorID, nilUUID(ev.SpaceID), nilUUID(ev.ChannelID), nilUUID(ev.ThreadID),
			string(ev.ResourceKind), ev.ResourceID, nilUUID(ev.AudienceID), action, []byte(ev.Payload),
		}
	}
	_, err := e.pool.CopyFrom(t.Context(), pgx.Identifier{"sync", "event_log"},
		[]string{"seq", "id", "type", "occurred_at", "actor_id", "space_id", "channel_id", "thread_id",
			"resource_kind", "resource_id", "audience_principal_id", "receive_action", "payload"},
		pgx.CopyFromRows(rows))
	if err != nil {
		t.Fatalf("copy %d events: %v", len(rows), err)
	}
	if _, err := e.pool.Exec(t.Context(), "ANALYZE sync.event_log"); err != nil {
		t.Fatalf("analyze: %v", err)
	}
}

// nilUUID maps uuid.Nil to NULL.
func nilUUID(u uuid.UUID) any {
	if u == uuid.Nil {
		return nil
	}
	return u
}

// want returns the seqs of the first limit events in (after, through] that pass f.
func (w cuWorld) want(f domain.Prefilter, after, through int64, limit int) []int64 {
	var out []int64
	for _, e := range w.events {
		if e.Seq > after && e.Seq <= through && f.Match(e) {
			out = append(out, e.Seq)
			if len(out) == limit {
				break
			}
		}
	}
	return out
}

// pageThrough pages the whole log for f the way app.CatchUp does and checks every page
// against the Go prefilter; it returns every row read and the number of pages.
func (w cuWorld) pageThrough(t *testing.T, e env, f domain.Prefilter, window int64, limit int) ([]int64, int) {
	t.Helper()
	head := int64(len(w.events))
	var all []int64
	pages := 0
	for after := int64(0); after < head; pages++ {
		through := domain.ScanEnd(after, head, window)
		got, err := e.reader.CatchUpPage(t.Context(), domain.PageQuery{After: after, Through: through, Limit: limit, Filter: f})
		if err != nil {
			t.Fatalf("CatchUpPage(after %d): %v", after, err)
		}
		if want := w.want(f, after, through, limit); !slices.Equal(seqs(got.Events), want) {
			t.Fatalf("page after %d through %d: seqs %v, want %v", after, through, seqs(got.Events), want)
		}
		var last int64
		if len(got.Events) > 0 {
			last = got.Events[len(got.Events)-1].Seq
		}
		all = append(all, seqs(got.Events)...)
		after = domain.NextCursor(after, head, through, len(got.Events), limit, last)
	}
	return all, pages
}

func TestCatchUpPageOneChannelReaderAndEverythingReader(t *testing.T) {
	t.Parallel()
	seed := *cuSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -catchup.seed=%d)", seed, seed)
	rnd := rand.New(rand.NewPCG(seed, seed^1)) //nolint:gosec // G404: reproducible test worlds, not secrets
	const n, window, limit = 4000, 400, 50
	w := newCUWorld(rnd, n, 4, 25)
	e := newEnv(t)
	// Partitions as in production: the rows land in a time partition, and the query merges
	// the partitions' seq indexes.
	upkeep(t, newPartitions(t, e, 24*time.Hour, 2, 90*24*time.Hour), time.Now())
	w.seed(t, e)

	for _, name := range []string{readerOneChannel, readerEverything, readerSpace, readerDM, readerNothing} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := w.readers[name]
			got, pages := w.pageThrough(t, e, f, window, limit)
			if want := w.want(f, 0, n, n); !slices.Equal(got, want) {
				t.Fatalf("paged %d rows, want the %d the prefilter passes", len(got), len(want))
			}
			// Every reader pays per page at most one window of rows; the one-channel reader
			// needs a page per window, the everything reader a page per limit rows.
			if minPages := n / window; pages < minPages {
				t.Errorf("pages = %d, want at least %d", pages, minPages)
			}
			if full := (len(got) + limit - 1) / limit; name == readerEverything && (pages < full || pages > full+1) {
				t.Errorf("everything reader: pages = %d for %d rows, want full pages (%d)", pages, len(got), full)
			}
		})
	}

	// The statement reads the window through the seq indexes, whatever the reader sees: the
	// one-channel reader examines at most a window of rows, the everything reader a page and
	// the few personal events of others among them, with custom and with generic plans, and
	// never by a sequential scan.
	for _, tc := range []struct {
		reader string
		bound  int64
	}{{readerOneChannel, window}, {readerEverything, 2 * limit}} {
		for _, generic := range []bool{false, true} {
			q := domain.PageQuery{After: 1000, Through: 1000 + window, Limit: limit, Filter: w.readers[tc.reader]}
			plan := explain(t, e, q, generic)
			if plan.examined > tc.bound {
				t.Errorf("%s (generic %v): examined %d rows, want at most %d\n%s", tc.reader, generic, plan.examined, tc.bound, plan.raw)
			}
			if plan.seqScan || !plan.indexScan {
				t.Errorf("%s (generic %v): want index scans only\n%s", tc.reader, generic, plan.raw)
			}
			if testing.Verbose() {
				t.Logf("%s (generic %v): examined %d rows", tc.reader, generic, plan.examined)
			}
			if tc.reader == readerOneChannel && !plan.hashed {
				t.Errorf("%s (generic %v): want the id sets hashed\n%s", tc.reader, generic, plan.raw)
			}
		}
	}
}

// planSummary is what explain found in a plan.
type planSummary struct {
	examined           int64 // rows the scans produced or removed by their filter
	seqScan, indexScan bool
	hashed             bool // a hashed subplan matched the id sets
	raw                string
}

// explain runs EXPLAIN ANALYZE of the page's statement for q, with a generic plan when asked.
func explain(t *testing.T, e env, q domain.PageQuery, generic bool) planSummary {
	t.Helper()
	var raw string
	err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
		db := e.runner.DB(ctx)
		if generic {
			if _, err := db.Exec(ctx, "SET LOCAL plan_cache_mode = force_generic_plan"); err != nil {
				return err
			}
		}
		return db.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+syncpg.CatchUpPageSQL, syncpg.CatchUpPageArgs(q)...).Scan(&raw)
	})
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	var doc []struct {
		Plan map[string]any `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(raw), &doc); err != nil || len(doc) != 1 {
		t.Fatalf("plan %s: %v", raw, err)
	}
	s := planSummary{raw: raw}
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		typ, _ := n["Node Type"].(string)
		rel, _ := n["Relation Name"].(string)
		if strings.HasPrefix(rel, "event_log") {
			switch typ {
			case "Seq Scan":
				s.seqScan = true
			case "Index Scan", "Index Only Scan":
				s.indexScan = true
			}
			loops, _ := n["Actual Loops"].(float64)
			rows, _ := n["Actual Rows"].(float64)
			removed, _ := n["Rows Removed by Filter"].(float64)
			s.examined += int64(rows*max(loops, 1) + removed)
		}
		if f, _ := n["Filter"].(string); strings.Contains(f, "hashed SubPlan") {
			s.hashed = true
		}
		kids, _ := n["Plans"].([]any)
		for _, k := range kids {
			if m, ok := k.(map[string]any); ok {
				walk(m)
			}
		}
	}
	walk(doc[0].Plan)
	return s
}

func TestCatchUpPageIsBoundedByItsWindowAndLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.commit(t, events("space.created", 100)...)
	everything := domain.Prefilter{PrincipalID: uuid.Must(uuid.NewV7()), InstanceWide: true}
	tests := []struct {
		name           string
		after, through int64
		limit          int
		want           []int64
	}{
		{name: "the window ends the page", after: 10, through: 30, limit: 100, want: span(11, 30)},
		{name: "the limit ends the page", after: 10, through: 30, limit: 5, want: span(11, 15)},
		{name: "a window beyond the log", after: 95, through: 500, limit: 100, want: span(96, 100)},
		{name: "an empty window", after: 30, through: 30, limit: 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := e.reader.CatchUpPage(t.Context(), domain.PageQuery{After: tc.after, Through: tc.through, Limit: tc.limit, Filter: everything})
			if err != nil {
				t.Fatalf("CatchUpPage: %v", err)
			}
			if !slices.Equal(seqs(got.Events), tc.want) || got.HorizonSeq != 0 {
				t.Errorf("seqs %v, horizon %d; want %v, 0", seqs(got.Events), got.HorizonSeq, tc.want)
			}
		})
	}
	if _, err := e.reader.CatchUpPage(t.Context(), domain.PageQuery{After: 0, Through: 10, Limit: 0, Filter: everything}); !errors.Is(err, syncpg.ErrInvalidLimit) {
		t.Errorf("limit 0: err = %v, want ErrInvalidLimit", err)
	}
	// Rows come back whole: the stored event as the appender wrote it.
	got, err := e.reader.CatchUpPage(t.Context(), domain.PageQuery{After: 0, Through: 1, Limit: 1, Filter: everything})
	if err != nil || len(got.Events) != 1 {
		t.Fatalf("first row: %v, %v", got, err)
	}
	if first := e.all(t)[0]; got.Events[0].ID != first.ID || !jsonEqual(t, got.Events[0].Payload, first.Payload) || got.Events[0].ReceiveAction != kernel.ActionSpaceRead {
		t.Errorf("row %+v, want %+v", got.Events[0], first)
	}
}

func TestCatchUpPageOnAnEmptyLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	got, err := e.reader.CatchUpPage(t.Context(), domain.PageQuery{After: 0, Through: 0, Limit: 10, Filter: domain.Prefilter{InstanceWide: true}})
	if err != nil || len(got.Events) != 0 || got.HorizonSeq != 0 {
		t.Errorf("CatchUpPage on an empty log = %+v, %v; want no rows and horizon 0", got, err)
	}
	if seq, ok := e.minRetained(t); seq != 1 || ok {
		t.Errorf("MinRetainedSeq = %d, %v; want 1, false (the caller uses HeadSeq + 1)", seq, ok)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := e.reader.CatchUpPage(ctx, domain.PageQuery{Through: 1, Limit: 1}); !errors.Is(err, context.Canceled) {
		t.Errorf("CatchUpPage with an ended context = %v, want context.Canceled", err)
	}
}

func TestCatchUpPageReportsTheRetentionHorizon(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := newPartitions(t, e, time.Hour, 1, 24*time.Hour)
	for seq, at := range []time.Duration{10 * time.Minute, 50 * time.Minute, 70 * time.Minute, 130 * time.Minute} {
		insertAt(t, e, int64(seq+1), base.Add(at))
	}
	upkeep(t, p, base.Add(150*time.Minute))
	everything := domain.Prefilter{PrincipalID: uuid.Must(uuid.NewV7()), InstanceWide: true}
	page := func(after int64) domain.PageRows {
		t.Helper()
		got, err := e.reader.CatchUpPage(t.Context(), domain.PageQuery{After: after, Through: 4, Limit: 10, Filter: everything})
		if err != nil {
			t.Fatalf("CatchUpPage: %v", err)
		}
		return got
	}
	if got := page(0); !slices.Equal(seqs(got.Events), span(1, 4)) || got.HorizonSeq != 0 {
		t.Fatalf("before retention: seqs %v, horizon %d", seqs(got.Events), got.HorizonSeq)
	}
	// Retention drops the first hour's partition with seqs 1 and 2.
	upkeep(t, p, base.Add(25*time.Hour))
	got := page(0)
	if !slices.Equal(seqs(got.Events), span(3, 4)) || got.HorizonSeq != 2 {
		t.Errorf("after retention: seqs %v, horizon %d; want 3..4 and horizon 2", seqs(got.Events), got.HorizonSeq)
	}
	// A cursor at 0 is below the horizon: its page misses seqs 1 and 2, which the caller sees.
	if got.HorizonSeq <= 0 {
		t.Errorf("a reader after 0 cannot tell it lost events")
	}
	if seq, ok := e.minRetained(t); seq != 3 || !ok {
		t.Errorf("MinRetainedSeq = %d, %v; want 3, true", seq, ok)
	}
}

func TestCatchUpPageInTheCallersTransaction(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.commit(t, events("agent.created", 3)...)
	err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
		got, err := e.reader.CatchUpPage(ctx, domain.PageQuery{After: 0, Through: 3, Limit: 10, Filter: domain.Prefilter{InstanceWide: true}})
		if err != nil {
			return err
		}
		if len(got.Events) != 3 {
			return fmt.Errorf("got %d rows, want 3", len(got.Events))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("page in a transaction: %v", err)
	}
}

// TestCatchUpPageReleaseReusesItsMemory: once a page is released, its memory serves the next
// page, which still holds exactly its own rows (payloads, strings and all, as EventsAfter reads
// them); releasing twice is harmless. Not parallel: no other page may take the released memory
// in between.
func TestCatchUpPageReleaseReusesItsMemory(t *testing.T) {
	e := newEnv(t)
	var appended []kernel.Event
	for _, typ := range []string{"space.created", "message.created", "channel.created", "message.created"} {
		appended = append(appended, events(typ, 25)...)
	}
	e.commit(t, appended...)
	want := e.all(t)
	everything := domain.Prefilter{PrincipalID: uuid.Must(uuid.NewV7()), InstanceWide: true}
	page := func(after, through int64) domain.PageRows {
		t.Helper()
		got, err := e.reader.CatchUpPage(t.Context(), domain.PageQuery{After: after, Through: through, Limit: 100, Filter: everything})
		if err != nil {
			t.Fatalf("CatchUpPage(%d, %d): %v", after, through, err)
		}
		if got.Release == nil {
			t.Fatal("a page without Release")
		}
		if !reflect.DeepEqual(got.Events, want[after:through]) {
			t.Fatalf("page (%d, %d] differs from the log", after, through)
		}
		return got
	}
	a := page(0, 40)
	first := &a.Events[0]
	a.Release()
	a.Release()
	b := page(40, 100)
	if &b.Events[0] != first {
		t.Error("the second page did not reuse the first page's memory")
	}
	b.Release()
	c := page(10, 20)
	c.Release()
}
