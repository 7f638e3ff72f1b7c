package pglocal_test

import (
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/internal/pglocal"
)

// TestTimeoutsValidate: every wait must be positive and the leftover timeout at least a second,
// and the error names the key.
func TestTimeoutsValidate(t *testing.T) {
	t.Parallel()
	good := pglocal.Timeouts{Start: time.Minute, Stop: time.Second, Leftover: time.Second, Poll: time.Millisecond}
	if err := good.Validate(); err != nil {
		t.Fatalf("Validate(%+v) = %v, want nil", good, err)
	}
	tests := []struct {
		change func(*pglocal.Timeouts)
		want   string
	}{
		{func(o *pglocal.Timeouts) { o.Start = 0 }, "embedded.start_timeout"},
		{func(o *pglocal.Timeouts) { o.Stop = 0 }, "embedded.stop_timeout"},
		{func(o *pglocal.Timeouts) { o.Leftover = 0 }, "embedded.leftover_timeout"},
		{func(o *pglocal.Timeouts) { o.Leftover = 500 * time.Millisecond }, "embedded.leftover_timeout"},
		{func(o *pglocal.Timeouts) { o.Poll = 0 }, "embedded.poll_interval"},
	}
	for _, tc := range tests {
		o := good
		tc.change(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", o, err, tc.want)
		}
	}
}
