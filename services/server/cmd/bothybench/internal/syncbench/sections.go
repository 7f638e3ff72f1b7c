package syncbench

import (
	"fmt"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
)

// Key is the catch_up member of benchmarks.json.
func (CatchUpResult) Key() string { return "catch_up" }

// Targets checks the catch-up targets: a catch-up page of the owner and of the
// reader of 10% of the channels at most 1.5 times the bare range read of the same rows at p50
// and 2.5 times at p99, and the one-channel reader's page at most twice the owner's (p50); the
// full catch-up over HTTP at least 100,000 events/s and half the bare read loop.
func (r CatchUpResult) Targets() []bench.Target {
	var ts []bench.Target
	var everything, one pageCase
	for _, p := range r.Pages {
		switch p.Reader {
		case readerEverything, ReaderTenth:
			ts = append(ts,
				bench.Target{Name: "catch-up page, " + p.Reader + ": p50 / bare range read p50", Value: p.P50Ratio, Limit: "<= 1.5", Pass: p.P50Ratio <= 1.5},
				bench.Target{Name: "catch-up page, " + p.Reader + ": p99 / bare range read p99", Value: p.P99Ratio, Limit: "<= 2.5", Pass: p.P99Ratio <= 2.5},
			)
			if p.Reader == readerEverything {
				everything = p
			}
		case readerOne:
			one = p
		}
	}
	if everything.P50Ms > 0 && one.P50Ms > 0 {
		v := bench.Round2(one.P50Ms / everything.P50Ms)
		ts = append(ts, bench.Target{Name: "catch-up page p50, " + readerOne + " / " + readerEverything, Value: v, Limit: "<= 2", Pass: v <= 2})
	}
	if f := r.Full; f.Events > 0 {
		ts = append(ts,
			bench.Target{Name: fmt.Sprintf("full catch-up over HTTP of %d events: events/s", f.Events), Value: f.EventsPerSecond, Limit: ">= 100000", Pass: f.EventsPerSecond >= 100_000},
			bench.Target{Name: "full catch-up over HTTP: events/s / bare read loop events/s", Value: f.Ratio, Limit: ">= 0.5", Pass: f.Ratio >= 0.5},
		)
	}
	return ts
}

// Key is the snapshot member of benchmarks.json.
func (SnapshotResult) Key() string { return "snapshot" }

// Targets checks the snapshot at most 1.3 times its component queries issued bare at p50, in
// at most 300 bytes per visible channel.
func (r SnapshotResult) Targets() []bench.Target {
	var ts []bench.Target
	if s := r; s.Requests > 0 {
		ts = append(ts,
			bench.Target{Name: fmt.Sprintf("snapshot (%d channels, %d unread threads, gzip): p50 / bare component queries p50", s.VisibleChannels, s.UnreadThreads), Value: s.P50Ratio, Limit: "<= 1.3", Pass: s.P50Ratio <= 1.3},
			bench.Target{Name: "snapshot: response bytes per visible channel (on the wire, Accept-Encoding: gzip)", Value: s.BytesPerChannel, Limit: "<= 300", Pass: s.BytesPerChannel <= 300},
		)
	}
	return ts
}

// Key is the consumer_catch_up member of benchmarks.json.
func (ConsumerResult) Key() string { return "consumer_catch_up" }

// Markdown renders the consumer section through w, beside the catch-up's event count.
func (r ConsumerResult) Markdown(w func(string, ...any)) { r.markdown(w, r.catchUpEvents) }

// Targets checks the consumer catch-up at least 0.9 of the same agent's REST catch-up.
func (r ConsumerResult) Targets() []bench.Target {
	var ts []bench.Target
	if c := r; c.Events > 0 {
		ts = append(ts,
			bench.Target{Name: fmt.Sprintf("consumer catch-up of an agent %d events behind (an ack at most every %.0f ms): events/s / the same agent's REST catch-up events/s", c.Events, c.AckEveryMs), Value: c.Ratio, Limit: ">= 0.9", Pass: c.Ratio >= 0.9})
	}
	return ts
}
