package syncbench

import (
	"bytes"
	"context"
	_ "embed" // the consumer case's SQL
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/internal/wire"
)

//go:embed queries/seed_consumer_rewind.sql
var seedConsumerRewind string

// consumerRounds is how many times the consumer catch-up and the REST catch-up each read the
// whole log.
const consumerRounds = 2

// consumerAckEvery is how often the figure's agent acknowledges while it catches up: the
// latest next_cursor at most once per interval (and the last page's always), as Kafka's
// consumers commit their offsets on a timer (auto.commit.interval.ms, 5 s by default) rather
// than after every fetch. A crash redelivers at most that long's events, which an agent must
// take anyway (at least once). The case also runs an agent that acknowledges every page.
const consumerAckEvery = 100 * time.Millisecond

// consumerSegments is how many stretches of the log one round reads, each by REST then by the
// consumer (or the other way round, in turn): a stretch takes about a second, so a slow
// moment of a shared machine falls on both sides rather than on one whole pass.
const consumerSegments = 10

// consumerName is the agent's durable consumer in the consumer case.
const consumerName = "bench"

// ConsumerResult is the consumer case: an agent's durable consumer read from seq 0 to the head
// (GET /api/v1/consumers/{name}/events, each page acknowledged with its next_cursor) beside the
// same agent's REST catch-up of the same log (GET /api/v1/events from 0).
type ConsumerResult struct {
	// catchUpEvents is the sync world's generated log, which the section's text compares with.
	catchUpEvents int64
	Spaces        int   `json:"spaces"`
	Events        int64 `json:"events"`
	Pages         int   `json:"pages"`
	Acks          int   `json:"acks"`
	// AckEveryMs is consumerAckEvery; EveryPageEventsPerSecond and EveryPageRatio are the
	// same catch-up by an agent that acknowledges every page (EveryPageAcks acks).
	AckEveryMs               float64 `json:"ack_every_ms"`
	EveryPageAcks            int     `json:"every_page_acks"`
	EveryPageEventsPerSecond float64 `json:"every_page_events_per_second"`
	EveryPageRatio           float64 `json:"every_page_ratio"`
	Rounds                   int     `json:"rounds"`
	Segments                 int     `json:"segments"`
	EventsPerSecond          float64 `json:"events_per_second"`
	BaselineEventsPerSecond  float64 `json:"rest_events_per_second"`
	Ratio                    float64 `json:"ratio"`
}

// consumerAgent is the agent that reads the world through its consumer.
type consumerAgent struct {
	id     uuid.UUID
	token  string
	spaces int
}

// newConsumerAgent creates, over HTTP as Alex, an agent with a viewer grant on every space of
// the world (so it may read every generated event) and its consumer, and issues its token.
func newConsumerAgent(ctx context.Context, app *wire.App, w *SyncWorld) (consumerAgent, error) {
	c := bench.NewPostClient()
	defer c.CloseIdleConnections()
	id, err := w.Create(ctx, c, "/api/v1/agents", map[string]string{
		"display_name": "Reader", "handle": "reader", "description": "Reads every event through its durable consumer.",
	})
	if err != nil {
		return consumerAgent{}, fmt.Errorf("consumer: create the agent: %w", err)
	}
	for _, space := range w.Spaces {
		if _, err := w.Create(ctx, c, "/api/v1/grants", map[string]string{
			"principal_id": id.String(), "resource_kind": "space", "resource_id": space.String(), "role": "viewer",
		}); err != nil {
			return consumerAgent{}, fmt.Errorf("consumer: grant the agent a space: %w", err)
		}
	}
	tok, err := app.Ports().Tokens.Issue(ctx, id, nil)
	if err != nil {
		return consumerAgent{}, fmt.Errorf("consumer: the agent's token: %w", err)
	}
	a := consumerAgent{id: id, token: tok.Token.Reveal(), spaces: len(w.Spaces)}
	if _, err := bench.Call(ctx, c, http.MethodPut, w.Base+"/api/v1/consumers/"+consumerName, a.token, nil, http.StatusCreated); err != nil {
		return consumerAgent{}, fmt.Errorf("consumer: create the consumer: %w", err)
	}
	return a, nil
}

// consumerCase measures the agent's consumer catch-up from seq 0 to the head, as an agent
// reads it ahead of its acks (consumerCatchUp: a page with after=<the last next_cursor> on one
// keep-alive connection while the last page's ack goes out on another), beside the same agent's
// REST catch-up (GET /api/v1/events?after=, the page's next_cursor as the next cursor) on the
// first. Each of consumerRounds rounds reads the log in consumerSegments stretches of seqs,
// each by both sides, REST first in even stretches and the consumer first in odd ones; the
// consumer is rewound in SQL to the stretch's start before it (not timed). Both must deliver
// the same events in every stretch, and the consumer's acked_seq must be its last page's
// next_cursor after it.
func consumerCase(ctx context.Context, app *wire.App, w *SyncWorld, bare *pgxpool.Pool, progress func(string, ...any)) (ConsumerResult, error) {
	res := ConsumerResult{Rounds: consumerRounds, Segments: consumerSegments, AckEveryMs: bench.Ms(consumerAckEvery)}
	a, err := newConsumerAgent(ctx, app, w)
	if err != nil {
		return res, err
	}
	res.Spaces = a.spaces
	head, err := app.Versions().EventSeq(ctx)
	if err != nil {
		return res, fmt.Errorf("consumer: the head: %w", err)
	}
	c := bench.NewPostClient()
	defer c.CloseIdleConnections()
	acks := bench.NewPostClient() // the consumer's acks, beside its pages
	defer acks.CloseIdleConnections()
	var (
		buf                                         bytes.Buffer
		consumerTime, everyPageTime, restTime       time.Duration
		consumerEvents, everyPageEvents, restEvents int64
	)
	for round := range consumerRounds {
		progress("consumer: round %d of %d (the log in %d stretches, each read by the agent's REST catch-up and by its consumer, acking on a timer and every page)", round+1, consumerRounds, consumerSegments)
		var events, pages, sent, everyPageSent int64
		from := int64(0)
		for seg := range consumerSegments {
			until := head * int64(seg+1) / consumerSegments
			rest := func() (segEvents int64, end int64, err error) {
				start := time.Now()
				segEvents, end, err = restCatchUp(ctx, c, w.Base, a.token, from, until, &buf)
				restTime += time.Since(start)
				restEvents += segEvents
				return segEvents, end, err
			}
			consumer := func(every time.Duration) func() (int64, int64, error) {
				return func() (got, end int64, err error) {
					if _, err := bare.Exec(ctx, seedConsumerRewind, a.id, consumerName, from); err != nil {
						return 0, 0, fmt.Errorf("consumer: rewind: %w", err)
					}
					start := time.Now()
					got, end, p, n, err := consumerCatchUp(ctx, c, acks, w.Base, a.token, until, every, &buf)
					if err != nil {
						return 0, 0, err
					}
					if every == 0 {
						everyPageTime += time.Since(start)
						everyPageEvents += got
						everyPageSent += int64(n)
					} else {
						consumerTime += time.Since(start)
						consumerEvents += got
						pages, sent = pages+int64(p), sent+int64(n)
					}
					if acked, err := consumerAckedSeq(ctx, c, w.Base, a.token); err != nil {
						return 0, 0, err
					} else if acked != end {
						return 0, 0, fmt.Errorf("consumer: acked_seq %d after the stretch, want its last next_cursor %d", acked, end)
					}
					return got, end, nil
				}
			}
			// The three in turn, each first in every third stretch.
			sides := []func() (int64, int64, error){rest, consumer(consumerAckEvery), consumer(0)}
			var got, ends [3]int64
			for i := range sides {
				k := (seg + i) % len(sides)
				if got[k], ends[k], err = sides[k](); err != nil {
					return res, err
				}
			}
			if got[1] != got[0] || got[2] != got[0] || ends[1] != ends[0] || ends[2] != ends[0] {
				return res, fmt.Errorf("consumer: after %d, events and last cursors %v and %v (REST, consumer, consumer acking every page)", from, got, ends)
			}
			events += got[0]
			from = ends[0]
		}
		if from != head {
			return res, fmt.Errorf("consumer: the round ended at %d, want the head %d", from, head)
		}
		if events == 0 {
			return res, fmt.Errorf("consumer: the agent sees no event")
		}
		res.Events, res.Pages, res.Acks, res.EveryPageAcks = events, int(pages), int(sent), int(everyPageSent)
	}
	res.EventsPerSecond = bench.Round1(float64(consumerEvents) / consumerTime.Seconds())
	res.EveryPageEventsPerSecond = bench.Round1(float64(everyPageEvents) / everyPageTime.Seconds())
	res.BaselineEventsPerSecond = bench.Round1(float64(restEvents) / restTime.Seconds())
	res.Ratio = bench.Round2(res.EventsPerSecond / res.BaselineEventsPerSecond)
	res.EveryPageRatio = bench.Round2(res.EveryPageEventsPerSecond / res.BaselineEventsPerSecond)
	return res, nil
}

// restCatchUp pages GET /api/v1/events as token from after from until a page's next_cursor
// reaches until (or the head) and returns the events read and that next_cursor.
func restCatchUp(ctx context.Context, c *http.Client, base, token string, from, until int64, buf *bytes.Buffer) (events, end int64, err error) {
	after := from
	for {
		if err := bench.GetRaw(ctx, c, pageURL(base, after), token, buf); err != nil {
			return 0, 0, fmt.Errorf("consumer: REST catch-up after %d: %w", after, err)
		}
		next, head, err := pageTail(buf.Bytes())
		if err != nil {
			return 0, 0, fmt.Errorf("consumer: REST catch-up after %d: %w", after, err)
		}
		events += countEnvelopes(buf.Bytes())
		if next <= after && next != head {
			return 0, 0, fmt.Errorf("consumer: REST catch-up: next_cursor %d does not move on from %d", next, after)
		}
		after = next
		if after >= until || after == head {
			return events, after, nil
		}
	}
}

// consumerCatchUp reads the consumer's pages as token from its acked_seq until a page's
// next_cursor reaches until (or the head), as an agent that reads ahead of its acks does
// (Kafka's and JetStream's fetch ahead, commit in the background): page n+1 is asked for with
// after=<page n's next_cursor> on c while an ack goes out on acks, a second keep-alive
// connection, at most one ack in flight (an ack waits for the one before). A page's
// next_cursor is acknowledged when every has passed since the last ack went out (every page
// with every 0), the last page's always, and that ack is awaited before it returns. It returns
// the events, the last next_cursor, the pages and the acks.
func consumerCatchUp(ctx context.Context, c, acks *http.Client, base, token string, until int64, every time.Duration, buf *bytes.Buffer) (events, end int64, pages, sent int, err error) {
	pageURL := base + "/api/v1/consumers/" + consumerName + "/events"
	ackURL := base + "/api/v1/consumers/" + consumerName + "/ack"
	var inFlight chan error // the ack on its way, nil when none
	wait := func() error {
		if inFlight == nil {
			return nil
		}
		err := <-inFlight
		inFlight = nil
		return err
	}
	defer func() { _ = wait() }()
	var after, acked int64 // the cursor read to, the last ack sent
	var ackedAt time.Time  // when the last ack went out
	url := pageURL         // the first page starts at acked_seq
	for {
		if err := bench.GetRaw(ctx, c, url, token, buf); err != nil {
			return 0, 0, 0, 0, fmt.Errorf("consumer: page after %d: %w", after, err)
		}
		next, head, err := pageTail(buf.Bytes())
		if err != nil {
			return 0, 0, 0, 0, fmt.Errorf("consumer: page after %d: %w", after, err)
		}
		pages++
		events += countEnvelopes(buf.Bytes())
		if next <= after && next != head {
			return 0, 0, 0, 0, fmt.Errorf("consumer: next_cursor %d does not move on from %d", next, after)
		}
		last := next >= until || next == head
		if next > acked && (last || time.Since(ackedAt) >= every) {
			if err := wait(); err != nil {
				return 0, 0, 0, 0, err
			}
			inFlight = make(chan error, 1)
			go func(seq int64, done chan<- error) {
				_, err := bench.Post(ctx, acks, ackURL, token, []byte(`{"seq":`+strconv.FormatInt(seq, 10)+`}`), http.StatusOK)
				if err != nil {
					err = fmt.Errorf("consumer: ack %d: %w", seq, err)
				}
				done <- err
			}(next, inFlight)
			sent++
			acked, ackedAt = next, time.Now()
		}
		after = next
		if last {
			if err := wait(); err != nil {
				return 0, 0, 0, 0, err
			}
			return events, after, pages, sent, nil
		}
		url = pageURL + "?after=" + strconv.FormatInt(after, 10)
	}
}

// consumerAckedSeq reads the consumer's acked_seq as token.
func consumerAckedSeq(ctx context.Context, c *http.Client, base, token string) (int64, error) {
	body, err := bench.Call(ctx, c, http.MethodGet, base+"/api/v1/consumers/"+consumerName, token, nil, http.StatusOK)
	if err != nil {
		return 0, fmt.Errorf("consumer: read the consumer: %w", err)
	}
	var got struct {
		AckedSeq *int64 `json:"acked_seq"`
	}
	if err := json.Unmarshal(body, &got); err != nil || got.AckedSeq == nil {
		return 0, fmt.Errorf("consumer: no acked_seq in %s", body)
	}
	return *got.AckedSeq, nil
}

// markdown renders the consumer section of docs/benchmarks.md through w.
func (r ConsumerResult) markdown(w func(format string, args ...any), events int64) {
	w("\n## Consumer catch-up\n\n")
	w("The sync world's log (%d generated events), read by an agent with a viewer grant on each of\n", events)
	w("its %d spaces, %d events behind: its durable consumer rewound to seq 0. Figure: the agent\n", r.Spaces, r.Events)
	w("reads `GET /api/v1/consumers/{name}/events` page by page (the default page size) ahead of\n")
	w("its acks, as Kafka and JetStream pull consumers do: page n+1 with `after=` page n's\n")
	w("`next_cursor` while an ack (`POST /api/v1/consumers/{name}/ack` of a page's cursor) goes\n")
	w("out on a second keep-alive connection, at most one ack in flight. It acknowledges the latest\n")
	w("cursor at most once per %.0f ms, as Kafka consumers commit their offsets on a timer, and\n", r.AckEveryMs)
	w("the last page's always, awaited before the clock stops; the consumer's `acked_seq` is then\n")
	w("the last `next_cursor` (checked). %d pages, %d acks. Beside it, the same agent acknowledging\n", r.Pages, r.Acks)
	w("every page (%d acks): each ack is a write request of its own. Baseline: the same agent's\n", r.EveryPageAcks)
	w("REST catch-up of the same log,\n")
	w("`GET /api/v1/events?after=` with each page's `next_cursor`, on the pages' connection; every\n")
	w("page asked for with `Accept-Encoding: identity`, the body read to its end. Each of %d rounds\n", r.Rounds)
	w("reads the log in %d stretches of seqs, each stretch by all three in turn (each first in\n", r.Segments)
	w("every third stretch, the consumer rewound to the stretch's start before its turn), so that\n")
	w("a slow moment of the machine falls on all; they deliver the same events in every stretch\n")
	w("(checked). Higher is better; the ratios are figure / baseline.\n\n")
	w("| events | pages | acks | consumer events/s | REST events/s | ratio | acks, every page | consumer events/s, every page | ratio, every page |\n")
	w("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	w("| %d | %d | %d | %.0f | %.0f | %.2f | %d | %.0f | %.2f |\n", r.Events, r.Pages, r.Acks, r.EventsPerSecond, r.BaselineEventsPerSecond, r.Ratio,
		r.EveryPageAcks, r.EveryPageEventsPerSecond, r.EveryPageRatio)
}
