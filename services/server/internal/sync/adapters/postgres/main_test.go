package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/leaktest"
	"bothy.example.com/server/internal/pgtest"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	"bothy.example.com/server/internal/sync/domain"
	"bothy.example.com/server/internal/sync/domain/eventtest"
)

// writerEnv, when set, turns the test binary into the writer process of
// TestWriterKilledInCommitPhaseLeavesNoGap; its value is the database URL.
const writerEnv = "SYNCPG_TEST_WRITER_URL"

func TestMain(m *testing.M) {
	if url := os.Getenv(writerEnv); url != "" {
		os.Exit(runWriter(url))
	}
	code := pgtest.Main(m, instancepg.Migrations(), syncpg.Migrations())
	os.Exit(leaktest.Check(code))
}

var errBoom = errors.New("boom")

// env is one test's database with the adapters under test.
type env struct {
	pool     *pgxpool.Pool
	runner   *tx.Runner
	store    *instancepg.Store
	appender *syncpg.Appender
	reader   *syncpg.Reader
}

// defaultAppendConcurrency is sync.append_concurrency's default, which the tests' appenders
// use unless they test admission.
const defaultAppendConcurrency = 2

func newEnv(t *testing.T) env {
	t.Helper()
	return envOn(pgtest.New(t))
}

func envOn(pool *pgxpool.Pool) env {
	runner := tx.NewRunner(pool)
	store := instancepg.New(runner)
	appender, err := syncpg.NewAppender(runner, store, syncpg.AppendConfig{Concurrency: defaultAppendConcurrency})
	if err != nil {
		panic(err) // a constant, valid configuration
	}
	return env{
		pool:     pool,
		runner:   runner,
		store:    store,
		appender: appender,
		reader:   syncpg.NewReader(runner),
	}
}

// commit appends events in one transaction and fails the test on any error.
func (e env) commit(t *testing.T, events ...kernel.Event) {
	t.Helper()
	err := e.runner.RunInTx(t.Context(), func(ctx context.Context) error {
		return e.appender.Append(ctx, events...)
	})
	if err != nil {
		t.Fatalf("append %d events: %v", len(events), err)
	}
}

// all reads the whole log in seq order.
func (e env) all(t *testing.T) []domain.StoredEvent {
	t.Helper()
	events, err := e.reader.EventsAfter(t.Context(), 0, 1_000_000)
	if err != nil {
		t.Fatalf("EventsAfter: %v", err)
	}
	return events
}

// head reads the event_seq counter, as catch-up does.
func (e env) head(t *testing.T) int64 {
	t.Helper()
	h, err := e.store.EventSeq(t.Context())
	if err != nil {
		t.Fatalf("EventSeq: %v", err)
	}
	return h
}

// seqs returns the seqs of events.
func seqs(events []domain.StoredEvent) []int64 {
	out := make([]int64, len(events))
	for i, e := range events {
		out[i] = e.Seq
	}
	return out
}

// span returns from, from+1, ..., to.
func span(from, to int64) []int64 {
	var out []int64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

// checkContiguous fails unless the log holds exactly the seqs 1..head with head the counter.
func (e env) checkContiguous(t *testing.T, wantHead int64) {
	t.Helper()
	if got := seqs(e.all(t)); !slices.Equal(got, span(1, wantHead)) {
		t.Errorf("seqs in the log = %v, want 1..%d", got, wantHead)
	}
	if got := e.head(t); got != wantHead {
		t.Errorf("event_seq = %d, want %d", got, wantHead)
	}
}

// events returns n valid events of typ.
func events(typ string, n int) []kernel.Event {
	out := make([]kernel.Event, n)
	for i := range out {
		out[i] = eventtest.Event(typ)
		out[i].ID = uuid.Must(uuid.NewV7())
	}
	return out
}

// writerMarker is the line the writer process prints once its statements are queued.
const writerMarker = "commit sent"

// writerAppName names the writer process's connection, so the test finds its backend.
const writerAppName = "bothy-killed-writer"

// runWriter is the writer process: it appends five agent.created events and, once its
// commit-phase statements are queued, prints writerMarker; the runner then sends them with
// COMMIT, which waits for the counter's row lock the test holds, until the test kills the
// process with SIGKILL.
func runWriter(url string) int {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, "writer:", err)
		return 2
	}
	cfg.MaxConns = 1
	cfg.ConnConfig.RuntimeParams["application_name"] = writerAppName
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "writer:", err)
		return 2
	}
	e := envOn(pool)
	syncpg.SetBeforeCommit(func() { fmt.Println(writerMarker) })
	err = e.runner.RunInTx(ctx, func(ctx context.Context) error {
		return e.appender.Append(ctx, events("agent.created", 5)...)
	})
	fmt.Fprintln(os.Stderr, "writer: the transaction ended although it should have been killed:", err)
	return 4
}

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("json %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("json %s: %v", b, err)
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return string(ja) == string(jb)
}
