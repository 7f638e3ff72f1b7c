package postgres_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	gosync "sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/pgtest"
)

// TestWriterKilledInCommitPhaseLeavesNoGap kills a writer process with SIGKILL inside the
// commit phase: its counter advance, INSERT and COMMIT are on their way to PostgreSQL in one
// round trip and wait there for the counter's row lock, which the test holds. Whatever
// PostgreSQL then does with the dead client's statements (run them to COMMIT, or roll them back
// when it notices the client is gone), the log must hold all five of the writer's events with
// contiguous seqs or none of them, the counter must equal the last seq in the log, and the next
// append must continue right after it: no gap, no seq without its event.
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

	// Hold the counter's row lock, as a writer of another process in its commit phase would:
	// a transaction whose commit-phase hook advances event_seq and then waits to be released,
	// and rolls back.
	locked, release := make(chan struct{}), make(chan struct{})
	holderDone := make(chan error, 1)
	go func() {
		holderDone <- e.runner.RunInTx(context.WithoutCancel(t.Context()), func(ctx context.Context) error {
			return tx.OnCommitPhase(ctx, func(ctx context.Context) error {
				if _, err := e.store.AdvanceEventSeq(ctx, 1); err != nil {
					return err
				}
				close(locked)
				<-release
				return errHolderReleased
			})
		})
	}()
	releaseOnce := gosync.OnceFunc(func() { close(release) })
	defer releaseOnce()
	select {
	case <-locked:
	case err := <-holderDone:
		t.Fatalf("lock holder ended early: %v", err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$") //nolint:gosec // G204: re-runs this test binary
	cmd.Env = append(os.Environ(), writerEnv+"="+url)
	cmd.Stderr = os.Stderr
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
	backend := waitForLockWait(t, pool)

	// The writer's statements wait for the lock: a lock-free reader sees nothing of them.
	if h := e.head(t); h != 3 {
		t.Errorf("event_seq while the writer waits in its commit phase = %d, want 3", h)
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
	releaseOnce()
	if err := <-holderDone; !errors.Is(err, errHolderReleased) {
		t.Fatalf("lock holder ended with %v, want its own rollback", err)
	}
	waitForBackendGone(t, pool, backend)

	e.commit(t, events("space.created", 2)...)
	all := e.all(t)
	var killed []int64
	for _, ev := range all {
		if ev.Type == "agent.created" {
			killed = append(killed, ev.Seq)
		}
	}
	switch len(killed) {
	case 0:
		e.checkContiguous(t, 5)
	case 5:
		if killed[0] != 4 || killed[4] != 8 {
			t.Errorf("the killed writer's events have seqs %v, want 4..8", killed)
		}
		e.checkContiguous(t, 10)
	default:
		t.Fatalf("the killed writer left %d of its 5 events (seqs %v): want all or none", len(killed), killed)
	}
	t.Logf("PostgreSQL %s the dead writer's round trip", map[bool]string{true: "committed", false: "rolled back"}[len(killed) == 5])
}

// errHolderReleased rolls the lock holder's transaction back once the test releases it.
var errHolderReleased = errors.New("lock holder released")

// waitForLockWait waits until the writer's backend waits for a lock and returns its pid.
func waitForLockWait(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var pid int
		err := pool.QueryRow(t.Context(),
			"SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", writerAppName).Scan(&pid)
		if err == nil {
			return pid
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			t.Fatalf("pg_stat_activity: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the writer never waited for the counter's lock")
	return 0
}

// waitForBackendGone waits until the backend with pid has ended.
func waitForBackendGone(t *testing.T, pool *pgxpool.Pool, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		if err := pool.QueryRow(t.Context(), "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid).Scan(&n); err != nil {
			t.Fatalf("pg_stat_activity: %v", err)
		}
		if n == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the killed writer's backend never ended")
}
