package wire_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/pgtest"
	syncmod "bothy.example.com/server/internal/sync"
	syncapp "bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/wire"
	"bothy.example.com/server/internal/wiretest"
)

// messageEvent returns a valid message.created event in a fresh thread.
func messageEvent() kernel.Event {
	msg, thread, channel, space, author := ids.New(), ids.New(), ids.New(), ids.New(), ids.New()
	payload := fmt.Sprintf(`{"message_id":%q,"thread_id":%q,"channel_id":%q,"author_id":%q,"seq":1,"content_md":"Hello from Alex","created_at":"2025-01-02T03:04:05Z"}`,
		msg, thread, channel, author)
	return kernel.Event{
		ID:           ids.New(),
		Type:         "message.created",
		ActorID:      author,
		SpaceID:      space,
		ChannelID:    channel,
		ThreadID:     thread,
		ResourceKind: kernel.ResourceMessage,
		ResourceID:   msg,
		Payload:      json.RawMessage(payload),
	}
}

// appendEvents commits one transaction appending n events and returns their ids.
func appendEvents(ctx context.Context, app *wire.App, n int) ([]uuid.UUID, error) {
	events := make([]kernel.Event, n)
	out := make([]uuid.UUID, n)
	for i := range events {
		events[i] = messageEvent()
		out[i] = events[i].ID
	}
	err := app.Tx().RunInTx(ctx, func(ctx context.Context) error {
		return app.Appender().Append(ctx, events...)
	})
	return out, err
}

// receive reads sub until it has n events and returns their ids, checking that seqs are
// consecutive from after+1 and that batches follow each other.
func receive(t *testing.T, sub syncmod.Subscription, after int64, n int, within time.Duration) []uuid.UUID {
	t.Helper()
	var got []uuid.UUID
	last := after
	deadline := time.After(within)
	for len(got) < n {
		select {
		case b, ok := <-sub.Batches():
			if !ok {
				t.Fatalf("subscription ended after %d events: %v", len(got), sub.Err())
			}
			if b.After != last {
				t.Fatalf("batch after %d follows seq %d", b.After, last)
			}
			for _, e := range b.Events {
				if e.Seq != last+1 {
					t.Fatalf("seq %d after %d: a gap or a duplicate", e.Seq, last)
				}
				last = e.Seq
				got = append(got, e.ID)
			}
		case <-deadline:
			t.Fatalf("got %d of %d events within %v", len(got), n, within)
		}
	}
	return got
}

// TestTailDeliversCommittedEvents appends through the wired appender and expects the tail's
// subscriber to get exactly the committed events, in commit order; a rolled-back
// transaction's events never arrive.
func TestTailDeliversCommittedEvents(t *testing.T) {
	t.Parallel()
	env := wiretest.New(t)
	ctx := t.Context()
	before, err := appendEvents(ctx, env.App, 2) // before the tail starts: not delivered
	if err != nil || len(before) != 2 {
		t.Fatalf("append: %v", err)
	}
	tail := env.App.Tail()
	sub := tail.Subscribe(100)
	e2etest.RunTail(t, tail)
	start, _ := tail.Last()
	if head, err := env.App.Versions().EventSeq(ctx); err != nil || head != start || head != 2 {
		t.Fatalf("tail starts at %d, head is %d (%v); want both 2", start, head, err)
	}

	var want []uuid.UUID
	for _, n := range []int{1, 5, 3} {
		got, err := appendEvents(ctx, env.App, n)
		if err != nil {
			t.Fatalf("append %d: %v", n, err)
		}
		want = append(want, got...)
	}
	rollback := errors.New("changed our mind")
	err = env.App.Tx().RunInTx(ctx, func(ctx context.Context) error {
		if err := env.App.Appender().Append(ctx, messageEvent()); err != nil {
			return err
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatalf("rolled-back append = %v", err)
	}
	last, err := appendEvents(ctx, env.App, 1)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	want = append(want, last...)

	if got := receive(t, sub, start, len(want), e2etest.WaitTimeout); !slices.Equal(got, want) {
		t.Fatalf("subscriber got %v, want %v", got, want)
	}
}

// logSpy collects an App's JSON log lines and tells when a message appears.
type logSpy struct {
	mu    sync.Mutex
	lines []string
	msgs  chan string
}

func newLogSpy() *logSpy { return &logSpy{msgs: make(chan string, 1000)} }

func (s *logSpy) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.lines = append(s.lines, strings.TrimSpace(string(p)))
	s.mu.Unlock()
	var rec struct {
		Msg string `json:"msg"`
	}
	if json.Unmarshal(p, &rec) == nil {
		select {
		case s.msgs <- rec.Msg:
		default:
		}
	}
	return len(p), nil
}

func (s *logSpy) logger() *slog.Logger { return slog.New(slog.NewJSONHandler(s, nil)) }

func (s *logSpy) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// waitFor waits until msg is logged.
func (s *logSpy) waitFor(t *testing.T, msg string) {
	t.Helper()
	deadline := time.After(e2etest.WaitTimeout)
	for {
		select {
		case m := <-s.msgs:
			if m == msg {
				return
			}
		case <-deadline:
			t.Fatalf("%q not logged within %v. Log:\n%s", msg, e2etest.WaitTimeout, s)
		}
	}
}

// TestServeRunsTheMaintenanceRole serves the maintenance role alone: no HTTP, one upkeep at
// once and then one per sync.maintenance_interval, and a clean stop.
func TestServeRunsTheMaintenanceRole(t *testing.T) {
	t.Parallel()
	cfg := e2etest.LoadConfig(t, map[config.Key]string{
		config.DatabaseURL:             pgtest.URL(t),
		syncapp.KeyMaintenanceInterval: "10ms",
	})
	spy := newLogSpy()
	app, err := wire.New(t.Context(), cfg, spy.logger(), wire.Options{Roles: []string{wire.RoleMaintenance}})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(app.Close)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- app.Serve(ctx) }()
	spy.waitFor(t, "serving without http")
	spy.waitFor(t, "partition upkeep done")
	spy.waitFor(t, "partition upkeep done")
	cancel()
	if err := e2etest.WaitServe(t, done, e2etest.WaitTimeout); err != nil {
		t.Fatalf("Serve = %v, want nil", err)
	}
	if log := spy.String(); !strings.Contains(log, `"msg":"maintenance stopped"`) || strings.Contains(log, "serving http") {
		t.Fatalf("log of a maintenance-only process:\n%s", log)
	}
}

// TestMigrateSetsTheDatabaseUp migrates a database bothy never touched: the instance exists
// afterwards, named by instance.name, and partitions are in place; a second run changes
// nothing.
func TestMigrateSetsTheDatabaseUp(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	url := pgtest.URL(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	wiretest.Unmigrate(t, conn)

	cfg := e2etest.LoadConfig(t, map[config.Key]string{config.DatabaseURL: url, wire.KeyInstanceName: "Robin's bothy"})
	n, err := wire.Migrate(ctx, cfg, url, wiretest.TestLogger(t))
	if err != nil || n == 0 {
		t.Fatalf("Migrate = %d, %v; want migrations applied", n, err)
	}
	app, err := wire.New(ctx, cfg, wiretest.TestLogger(t), wire.Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(app.Close)
	epoch, err := app.Versions().SyncEpoch(ctx)
	if err != nil || epoch == uuid.Nil {
		t.Fatalf("SyncEpoch after Migrate = %v, %v", epoch, err)
	}
	rep, err := app.Maintain(ctx)
	if err != nil || len(rep.Created) != 0 || len(rep.Dropped) != 0 {
		t.Fatalf("Maintain after Migrate = %+v, %v; want nothing left to do", rep, err)
	}

	n, err = wire.Migrate(ctx, cfg, url, wiretest.TestLogger(t))
	if err != nil || n != 0 {
		t.Fatalf("second Migrate = %d, %v; want 0, nil", n, err)
	}
	if again, err := app.Versions().SyncEpoch(ctx); err != nil || again != epoch {
		t.Fatalf("SyncEpoch after a second Migrate = %v, %v; want %v", again, err, epoch)
	}
}

// TestMigrateRejectsBadValues fails before touching the database.
func TestMigrateRejectsBadValues(t *testing.T) {
	t.Parallel()
	cfg := e2etest.LoadConfig(t, map[config.Key]string{syncapp.KeyTailBatchSize: "0"})
	if _, err := wire.Migrate(t.Context(), cfg, "postgres://bothy@127.0.0.1:1/bothy", slog.New(slog.NewJSONHandler(io.Discard, nil))); err == nil || !strings.Contains(err.Error(), "sync.tail_batch_size") {
		t.Fatalf("Migrate = %v, want an error naming sync.tail_batch_size", err)
	}
}
