package postgres

import (
	"context"
	_ "embed" // the SQL of queries/
	"encoding/json"
	"errors"
	"fmt"
	gosync "sync"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/correlation"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/sync/domain"
)

// ErrAppendTooLate is returned by Append once the transaction's events were written, which
// can only happen from a last commit-phase hook queued after the appender's: such an event
// would have no seq.
var ErrAppendTooLate = errors.New("sync: append after the transaction's events were written")

// ErrInvalidResource is returned by Redact for an empty resource kind or a nil resource id.
var ErrInvalidResource = errors.New("sync: redact needs a resource kind and id")

var (
	//go:embed queries/event_log_insert.sql
	eventLogInsert string
	//go:embed queries/event_log_notify.sql
	eventLogNotify string
	//go:embed queries/event_log_redact.sql
	eventLogRedact string
)

// beforeCommit, when set, runs in the commit phase once the transaction is admitted and its
// statements are queued, right before the runner sends them with COMMIT. Only tests set it
// (export_test.go), to kill a writer at exactly that point.
var beforeCommit func()

// idFields maps every registered type to the names of its id fields, the part of a payload
// redaction keeps, as the JSON object event_log_redact.sql takes.
var idFields = func() []byte {
	m := map[string][]string{}
	for _, t := range domain.Types() {
		m[t.Name] = append([]string{}, t.IDFields()...)
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("sync: id fields: %v", err)) // a map of strings always encodes
	}
	return b
}()

// Appender implements kernel.Appender and kernel.Redactor on sync.event_log. Append validates
// and encodes each event at once and stages it in the caller's transaction; the transaction's
// one last commit-phase hook writes everything staged in one round trip (see Append).
//
// The appender also admits at most AppendConfig.Concurrency transactions of the process at
// once into the locked section, from the event_seq advance to the transaction's end; the
// others wait in the process for a slot (see ADR 0010, "Admission").
type Appender struct {
	runner   *tx.Runner
	counters instance.Counters
	// slots is the admission semaphore: a transaction holds one of its cap(slots) places from
	// right before its batch until it ends.
	slots chan struct{}
	// probe, when set, is told of every admission stage. Only tests set it (export_test.go),
	// to observe and hold admissions.
	probe func(admissionStage)
}

// admissionStage is a step of a transaction through admission, as a probe is told of it.
type admissionStage int

const (
	// admissionWaiting: the transaction is about to wait for a slot.
	admissionWaiting admissionStage = iota + 1
	// admissionAdmitted: the transaction got a slot and is about to send its batch.
	admissionAdmitted
	// admissionReleased: the transaction ended and is about to give its slot back.
	admissionReleased
)

var (
	_ kernel.Appender = (*Appender)(nil)
	_ kernel.Redactor = (*Appender)(nil)
)

// NewAppender returns an Appender whose statements run on runner's transaction of the context
// and whose seqs come from counters (the instance module's event_seq), admitting cfg's number
// of transactions at once into the locked section. The composition root makes one per process:
// the admission limit is per Appender. It fails with an error wrapping ErrInvalidAppendConfig
// when cfg does not validate.
func NewAppender(runner *tx.Runner, counters instance.Counters, cfg AppendConfig) (*Appender, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Appender{runner: runner, counters: counters, slots: make(chan struct{}, cfg.Concurrency)}, nil
}

// stagedKey keys an Appender's staged events in a transaction (tx.Value).
type stagedKey struct{ a *Appender }

// staged is what one transaction appended so far. The mutex guards Appends from goroutines of
// one transaction.
type staged struct {
	mu      gosync.Mutex
	rows    []stagedRow
	hooked  bool // the commit-phase hook is queued
	written bool // the hook ran: later appends would have no seq
}

// stagedRow is one validated, encoded event waiting for its seq.
type stagedRow struct {
	id, actor, space, channel, thread, resource, audience uuid.UUID
	typ, kind, action, correlation                        string
	payload, trace                                        json.RawMessage
	redacted                                              bool
}

func (a *Appender) staged(ctx context.Context) (*staged, error) {
	v, err := tx.Value(ctx, stagedKey{a}, func() any { return &staged{} })
	if err != nil {
		return nil, err
	}
	st, _ := v.(*staged) // only this file stores under stagedKey
	return st, nil
}

// Append implements kernel.Appender. It validates and encodes every event with the register
// of durable types (domain.Encode; its errors are wrapped, so errors.Is finds
// domain.ErrUnregisteredType, domain.ErrAudienceMissing and the others), assigns a UUIDv7 to
// an event without an id, takes the correlation id from ctx, and stages the events in the
// transaction of ctx: all of them or, on any error, none. Nothing is written yet.
//
// The first Append of a transaction queues one last commit-phase hook (tx.OnCommitPhaseLast),
// so it runs after every other hook, including a permission_version advance. The hook queues
// the statements the transaction runner sends together with COMMIT, in one round trip
// (tx.QueueFinal): the event_seq advance by the number of staged events
// (instance.Counters.QueueAdvanceEventSeq, which takes the counter's row lock and publishes
// the new head as bothy.event_seq), one INSERT of every staged event with seqs head - n + 1 ..
// head in call order, and pg_notify on NotifyChannel with the head. The lock is then held from
// the UPDATE to the COMMIT of that same round trip, with no network round trip inside it. A
// rolled-back transaction writes nothing and takes no seq.
//
// Before it queues anything the hook waits for an admission slot, which the transaction gives
// back when it ends however it ends (tx.OnEnd). A context that ends while the hook waits fails
// the transaction.
//
// Append fails with tx.ErrNoTransaction outside a transaction and with ErrAppendTooLate after
// the transaction's events were written.
func (a *Appender) Append(ctx context.Context, events ...kernel.Event) error {
	st, err := a.staged(ctx)
	if err != nil {
		return fmt.Errorf("sync: append: %w", err)
	}
	corr := correlation.From(ctx)
	rows := make([]stagedRow, 0, len(events))
	for i, e := range events {
		enc, err := domain.Encode(e)
		if err != nil {
			return fmt.Errorf("sync: append event %d of %d: %w", i+1, len(events), err)
		}
		id := e.ID
		if id == uuid.Nil {
			id = ids.New()
		}
		rows = append(rows, stagedRow{
			id: id, actor: e.ActorID, space: e.SpaceID, channel: e.ChannelID, thread: e.ThreadID,
			resource: e.ResourceID, audience: e.AudienceID,
			typ: e.Type, kind: string(e.ResourceKind), action: string(enc.Type.ReceiveAction), correlation: corr,
			payload: enc.Payload, trace: enc.TraceContext,
		})
	}
	if len(rows) == 0 {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.written {
		return ErrAppendTooLate
	}
	if !st.hooked {
		if err := tx.OnCommitPhaseLast(ctx, func(ctx context.Context) error { return a.write(ctx, st) }); err != nil {
			return fmt.Errorf("sync: append: %w", err)
		}
		st.hooked = true
	}
	st.rows = append(st.rows, rows...)
	return nil
}

// write is the last commit-phase hook: once the transaction is admitted it queues the counter
// advance, the INSERT and the NOTIFY, which the runner sends with COMMIT in one round trip.
func (a *Appender) write(ctx context.Context, st *staged) error {
	st.mu.Lock()
	rows := st.rows
	st.rows, st.written = nil, true
	st.mu.Unlock()
	if len(rows) == 0 {
		return nil
	}
	if err := a.admit(ctx); err != nil {
		return fmt.Errorf("sync: write %d events: %w", len(rows), err)
	}
	if err := a.counters.QueueAdvanceEventSeq(ctx, len(rows)); err != nil {
		return fmt.Errorf("sync: write %d events: %w", len(rows), err)
	}
	if err := tx.QueueFinal(ctx, eventLogInsert, insertArgs(rows)...); err != nil {
		return fmt.Errorf("sync: write %d events: %w", len(rows), err)
	}
	if err := tx.QueueFinal(ctx, eventLogNotify); err != nil {
		return fmt.Errorf("sync: write %d events: %w", len(rows), err)
	}
	if beforeCommit != nil {
		beforeCommit()
	}
	return nil
}

// admit takes an admission slot for the transaction of ctx, waiting while all are taken, and
// queues its return for the transaction's end (tx.OnEnd), so it comes back exactly once after
// COMMIT, a rollback or a panic. It fails with ctx's error when ctx ends before a slot is
// free, holding nothing then.
//
// It runs in the last commit-phase hook, before the batch takes the event_seq lock, so a
// transaction waits for a slot holding no counter lock, and a slot holder waits only for that
// lock, held by another slot holder or a transaction of another process that waits for nothing
// in this one, or for partition upkeep, which gives up after sync.upkeep_lock_timeout: no
// deadlock (ADR 0010, "Admission").
func (a *Appender) admit(ctx context.Context) error {
	a.report(admissionWaiting)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("wait for admission: %w", err)
	}
	select {
	case a.slots <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("wait for admission: %w", ctx.Err())
	}
	a.report(admissionAdmitted)
	if err := tx.OnEnd(ctx, a.release); err != nil {
		a.release(ctx)
		return fmt.Errorf("admission: %w", err)
	}
	return nil
}

// release gives back the slot admit took; it runs once per admitted transaction.
func (a *Appender) release(context.Context) {
	a.report(admissionReleased)
	<-a.slots
}

// report tells the probe, if any, of an admission stage.
func (a *Appender) report(stage admissionStage) {
	if a.probe != nil {
		a.probe(stage)
	}
}

// insertArgs turns the staged rows into the fourteen arrays of event_log_insert.sql.
func insertArgs(rows []stagedRow) []any {
	n := len(rows)
	var (
		idsArr, actors, spaces, channels, threads, resources, audiences = make([]pgtype.UUID, n), make([]pgtype.UUID, n), make([]pgtype.UUID, n), make([]pgtype.UUID, n), make([]pgtype.UUID, n), make([]pgtype.UUID, n), make([]pgtype.UUID, n)
		types, kinds, actions, payloads, correlations                   = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		traces                                                          = make([]pgtype.Text, n)
		redacted                                                        = make([]bool, n)
	)
	for i, r := range rows {
		idsArr[i], actors[i], spaces[i], channels[i], threads[i] = toUUID(r.id), toUUID(r.actor), toUUID(r.space), toUUID(r.channel), toUUID(r.thread)
		resources[i], audiences[i] = toUUID(r.resource), toUUID(r.audience)
		types[i], kinds[i], actions[i], correlations[i] = r.typ, r.kind, r.action, r.correlation
		payloads[i] = string(r.payload)
		traces[i] = pgtype.Text{String: string(r.trace), Valid: r.trace != nil}
		redacted[i] = r.redacted
	}
	return []any{idsArr, types, actors, spaces, channels, threads, kinds, resources, audiences, actions, payloads, redacted, correlations, traces}
}

// Redact implements kernel.Redactor: in the transaction of ctx it marks every event of the
// resource (kind, id) redacted and reduces its payload to the id fields of its type, so
// catch-up never serves deleted text. It covers the events committed before and those this
// transaction appended before the call; an event appended after it (the message.deleted that
// goes with a deletion) is not redacted. The resource is matched exactly: redacting a message
// covers the events whose resource is that message (message.created, message.edited, ...),
// not those of its thread. Redacting again changes nothing.
//
// It fails with tx.ErrNoTransaction outside a transaction and ErrInvalidResource for an
// empty kind or a nil id; database errors are wrapped.
func (a *Appender) Redact(ctx context.Context, kind kernel.ResourceKind, id uuid.UUID) error {
	if kind == "" || id == uuid.Nil {
		return fmt.Errorf("sync: redact %s %s: %w", kind, id, ErrInvalidResource)
	}
	st, err := a.staged(ctx)
	if err != nil {
		return fmt.Errorf("sync: redact %s %s: %w", kind, id, err)
	}
	if err := st.redact(kind, id); err != nil {
		return fmt.Errorf("sync: redact %s %s: %w", kind, id, err)
	}
	if _, err := a.runner.DB(ctx).Exec(ctx, eventLogRedact, string(kind), id, idFields); err != nil {
		return fmt.Errorf("sync: redact %s %s: %w", kind, id, err)
	}
	return nil
}

// redact reduces the staged, not yet written events of the resource.
func (st *staged) redact(kind kernel.ResourceKind, id uuid.UUID) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	for i := range st.rows {
		r := &st.rows[i]
		if r.redacted || r.kind != string(kind) || r.resource != id {
			continue
		}
		p, err := domain.RedactedPayload(r.typ, r.payload)
		if err != nil {
			return err
		}
		r.payload, r.redacted = p, true
	}
	return nil
}
