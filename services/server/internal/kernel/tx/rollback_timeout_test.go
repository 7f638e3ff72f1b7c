package tx_test

import (
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/internal/kernel/tx"
)

// TestWithRollbackTimeoutRefusesNonPositive: a rollback timeout that is not positive is refused,
// naming database.rollback_timeout; a positive one is taken.
func TestWithRollbackTimeoutRefusesNonPositive(t *testing.T) {
	t.Parallel()
	for _, d := range []time.Duration{0, -time.Second} {
		if _, err := tx.NewRunner(nil).WithRollbackTimeout(d); err == nil || !strings.Contains(err.Error(), tx.KeyRollbackTimeout.Name) {
			t.Errorf("WithRollbackTimeout(%v) = %v, want an error naming %s", d, err, tx.KeyRollbackTimeout.Name)
		}
	}
	if _, err := tx.NewRunner(nil).WithRollbackTimeout(time.Second); err != nil {
		t.Errorf("WithRollbackTimeout(1s) = %v, want nil", err)
	}
}
