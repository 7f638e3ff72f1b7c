package postgres_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/internal/pgtest"
)

// TestWriterKilledInCommitPhaseLeavesNoGap kills a writer process with SIGKILL inside the
// commit phase, after its batch advanced event_seq and inserted its events but before COMMIT:
// PostgreSQL rolls the transaction back, so the log keeps no event and no seq of it, the
// counter still equals the last committed seq, and the next append continues right after it.
func TestWriterKilledInCommitPhaseLeavesNoGap(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	pool, err := pgxpool.New(t.Context(), url)
	if err != nil {
		t.Fatalf("pool: %v", err)
	}
	t.Cleanup(pool.Close)
	e := envOn(pool)
	e.commit(t, events("space.created", 3)...)

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$") //nolint:gosec // G204: re-runs this test binary
	cmd.Env = append(os.Environ(), writerEnv+"="+url)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatalf("stdin: %v", err)
	}
	defer func() { _ = stdin.Close() }()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("stdout: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start writer: %v", err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != writerMarker {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("writer said %q (%v), want %q", line, err, writerMarker)
	}

	// The writer now holds the counter's row lock with its seqs 4..8 inserted, uncommitted:
	// a lock-free reader sees neither.
	if h := e.head(t); h != 3 {
		t.Errorf("event_seq while the writer is in its commit phase = %d, want 3", h)
	}
	if evs, err := e.reader.EventsAfter(t.Context(), 3, 10); err != nil || len(evs) != 0 {
		t.Errorf("EventsAfter(3) while the writer is in its commit phase = %v, %v; want nothing", seqs(evs), err)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill writer: %v", err)
	}
	_, _ = io.Copy(io.Discard, stdout)
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("writer ended with %v, want killed by SIGKILL", err)
	}

	// This append waits for the counter's lock until PostgreSQL has rolled the dead writer's
	// transaction back, then takes the seqs right after the last committed one.
	e.commit(t, events("space.created", 2)...)
	e.checkContiguous(t, 5)
	for _, ev := range e.all(t) {
		if ev.Type != "space.created" {
			t.Errorf("seq %d is a %s of the killed writer", ev.Seq, ev.Type)
		}
	}
}
