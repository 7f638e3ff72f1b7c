package e2etest

import (
	"context"
	"testing"
	"time"

	syncapp "bothy.example.com/server/internal/sync/app"
)

// RunTail runs app's tail until the test ends and waits until it has read its head.
func RunTail(t *testing.T, tail *syncapp.Tail) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tail.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("tail.Run = %v", err)
		}
	})
	select {
	case <-tail.Ready():
	case <-time.After(WaitTimeout):
		t.Fatal("the tail did not read its head")
	}
}
