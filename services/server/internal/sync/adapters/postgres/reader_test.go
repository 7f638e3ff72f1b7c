package postgres_test

import (
	"errors"
	"slices"
	"testing"

	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
)

func TestEventsAfterPagesBySeq(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for range 3 {
		e.commit(t, events("space.created", 3)...)
	}
	tests := []struct {
		name  string
		after int64
		limit int
		want  []int64
	}{
		{name: "from the start", after: 0, limit: 4, want: span(1, 4)},
		{name: "inside a transaction's range", after: 4, limit: 3, want: span(5, 7)},
		{name: "short page at the head", after: 7, limit: 5, want: span(8, 9)},
		{name: "at the head", after: 9, limit: 5},
		{name: "beyond the head", after: 42, limit: 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := e.reader.EventsAfter(t.Context(), tc.after, tc.limit)
			if err != nil {
				t.Fatalf("EventsAfter: %v", err)
			}
			if !slices.Equal(seqs(got), tc.want) {
				t.Errorf("seqs = %v, want %v", seqs(got), tc.want)
			}
		})
	}
	if _, err := e.reader.EventsAfter(t.Context(), 0, 0); !errors.Is(err, syncpg.ErrInvalidLimit) {
		t.Errorf("limit 0: err = %v, want ErrInvalidLimit", err)
	}
}

func TestMinRetainedSeqWithoutRetention(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	check := func(wantSeq int64, wantOK bool) {
		t.Helper()
		seq, ok, err := e.reader.MinRetainedSeq(t.Context())
		if err != nil {
			t.Fatalf("MinRetainedSeq: %v", err)
		}
		if seq != wantSeq || ok != wantOK {
			t.Errorf("MinRetainedSeq = %d, %v; want %d, %v", seq, ok, wantSeq, wantOK)
		}
	}
	check(1, false) // empty: horizon 0 + 1, and the caller uses HeadSeq + 1 = 1 too
	e.commit(t, events("space.created", 2)...)
	check(1, true)
}
