package postgres_test

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"bothy.example.com/server/internal/pgtest"
	"bothy.example.com/server/internal/sync/domain"
)

// BenchmarkCatchUpPage measures one catch-up page's read (the statement and the horizon in
// one round trip) in a log of 200,000 events in 1,000 channels, for a reader who sees
// everything and one who sees one channel, at several scan windows, beside the bare seq range
// read of a page (EventsAfter). It sizes sync.catchup_scan_window: the one-channel reader's
// page, which reads a whole window, should cost at most about twice the everything reader's.
// The end-to-end numbers (authorize, encoding, HTTP) are make bench's.
func BenchmarkCatchUpPage(b *testing.B) {
	const n, limit = 200_000, 500
	e := envOn(pgtest.New(b))
	w := newCUWorld(rand.New(rand.NewPCG(1, 2)), n, 50, 20) //nolint:gosec // G404: a fixed benchmark world, not a secret
	w.seed(b, e)
	b.Run("bare", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			after := int64(i*7919) % (n - 20_000)
			if _, err := e.reader.EventsAfter(b.Context(), after, limit); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, reader := range []string{readerEverything, readerOneChannel} {
		for _, window := range []int64{1000, 2000, 5000, 10_000, 20_000} {
			if reader == readerEverything && window != 5000 {
				continue
			}
			b.Run(reader+"/window="+strconv.FormatInt(window, 10), func(b *testing.B) {
				f := w.readers[reader]
				for i := 0; b.Loop(); i++ {
					after := int64(i*7919) % (n - 20_000)
					q := domain.PageQuery{After: after, Through: after + window, Limit: limit, Filter: f}
					if _, err := e.reader.CatchUpPage(b.Context(), q); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
