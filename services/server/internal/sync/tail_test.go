package sync_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/domain"
)

func TestBatchLast(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		batch syncmod.Batch
		want  int64
	}{
		{name: "events", batch: syncmod.Batch{After: 4, Events: []domain.StoredEvent{{Seq: 5}, {Seq: 6}}}, want: 6},
		{name: "empty", batch: syncmod.Batch{After: 4}, want: 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.batch.Last(); got != tc.want {
				t.Fatalf("Last = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestLaggedError(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("gateway: %w", &syncmod.LaggedError{Last: 1234})
	var lagged *syncmod.LaggedError
	if !errors.Is(err, syncmod.ErrLagged) || !errors.As(err, &lagged) || lagged.Last != 1234 {
		t.Fatalf("%v does not match ErrLagged with Last 1234", err)
	}
	if !strings.Contains(err.Error(), "1234") {
		t.Fatalf("message %q does not name the last seq", err)
	}
	if errors.Is(syncmod.ErrTailStopped, syncmod.ErrLagged) {
		t.Fatal("ErrTailStopped matches ErrLagged")
	}
}
