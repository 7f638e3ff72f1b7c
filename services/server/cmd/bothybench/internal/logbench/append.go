package logbench

import (
	"context"
	_ "embed" // the bare baseline's SQL
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/wire"
)

// appendRounds is how many rounds the append cases run in; each gives every case a quarter of
// the duration.
const appendRounds = 4

// appendCases measures every combination of o.writers and o.batches, in that order. After a
// warm-up of every case (half of o.warmup for the baseline, then half for the appender), the
// cases run in appendRounds rounds: in each, every case runs the baseline and then the
// appender for o.duration/appendRounds. So drift (other load on a shared machine, a
// checkpoint, a growing table) hits every figure alike: an appender figure and its baseline,
// which the ratio compares, and the cases with 1 and 16 writers, which the writer-scaling
// targets compare.
func appendCases(ctx context.Context, app *wire.App, bare *pgxpool.Pool, o bench.Options, progress func(string, ...any)) ([]AppendResult, error) {
	appender := func(ctx context.Context, ev []kernel.Event) error { return bench.AppendReal(ctx, app, ev) }
	base := func(ctx context.Context, ev []kernel.Event) error { return bench.AppendBare(ctx, bare, ev) }
	var results []AppendResult
	for _, w := range o.Writers {
		for _, k := range o.Batches {
			results = append(results, AppendResult{Writers: w, EventsPerTx: k})
		}
	}
	if o.Warmup > 0 {
		progress("append: warm-up of %d cases", len(results))
		for _, r := range results {
			for _, op := range []func(context.Context, []kernel.Event) error{base, appender} {
				if _, _, err := bench.Drive(ctx, r.Writers, r.EventsPerTx, o.Warmup/2, op); err != nil {
					return nil, fmt.Errorf("warm-up, %d writers x %d: %w", r.Writers, r.EventsPerTx, err)
				}
			}
		}
	}
	realRates, baseRates := make([]float64, len(results)), make([]float64, len(results))
	for round := range appendRounds {
		progress("append: round %d of %d over the %d cases", round+1, appendRounds, len(results))
		for i := range results {
			r := &results[i]
			rate, n, err := bench.Drive(ctx, r.Writers, r.EventsPerTx, o.Duration/appendRounds, base)
			if err != nil {
				return nil, fmt.Errorf("baseline, %d writers x %d: %w", r.Writers, r.EventsPerTx, err)
			}
			baseRates[i] += rate / appendRounds
			r.BaselineTransactions += n
			rate, n, err = bench.Drive(ctx, r.Writers, r.EventsPerTx, o.Duration/appendRounds, appender)
			if err != nil {
				return nil, fmt.Errorf("appender, %d writers x %d: %w", r.Writers, r.EventsPerTx, err)
			}
			realRates[i] += rate / appendRounds
			r.Transactions += n
		}
	}
	for i := range results {
		r := &results[i]
		r.EventsPerSecond, r.BaselineEventsPerSecond = bench.Round1(realRates[i]), bench.Round1(baseRates[i])
		r.Ratio = bench.Round2(realRates[i] / baseRates[i])
	}
	return results, nil
}
