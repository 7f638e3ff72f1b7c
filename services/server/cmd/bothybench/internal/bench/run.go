package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/wire"
)

// MaxConns is the pool size of the wired App and of the baseline's pool: room for the
// largest writer count, the tail and the latency probes, and the postMessage clients.
const MaxConns = 40

// profileEnv, when set to a directory, has each case group write a CPU profile of the
// benchmark's process (the server's side of every case served in it, world building included)
// there as <group>.pprof, to find where a figure's time goes.
const profileEnv = "BOTHYBENCH_PROFILE"

// profiled runs one case group, under a CPU profile when profileEnv names a directory.
func profiled(group string, run func() error) error {
	dir := os.Getenv(profileEnv)
	if dir == "" {
		return run()
	}
	f, err := os.Create(filepath.Join(dir, group+".pprof")) //nolint:gosec // G304: a directory the user chose.
	if err != nil {
		return fmt.Errorf("%s: profile: %w", group, err)
	}
	defer func() { _ = f.Close() }()
	if err := pprof.StartCPUProfile(f); err != nil {
		return fmt.Errorf("%s: profile: %w", group, err)
	}
	defer pprof.StopCPUProfile()
	return run()
}

// machineFacts records what the figures depend on.
func machineFacts(ctx context.Context, app *wire.App) (machine, error) {
	m := machine{
		Cores:      runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		GoVersion:  runtime.Version(),
		OS:         runtime.GOOS + "/" + runtime.GOARCH,
		Date:       time.Now().UTC().Format(time.DateOnly),
		Kernel:     readKernelFacts(),
	}
	pool := app.Pool()
	for name, dst := range map[string]*string{
		"server_version":     &m.PostgresVersion,
		"fsync":              &m.Fsync,
		"synchronous_commit": &m.SynchronousCommit,
		"wal_sync_method":    &m.WalSyncMethod,
	} {
		if err := pool.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(dst); err != nil {
			return m, fmt.Errorf("read setting %s: %w", name, err)
		}
	}
	return m, nil
}

// Rotation is the order in which a case runs its n sides (baseline, figure, and any reference,
// by index) in round: the rotation that starts with side round mod n. Over a multiple of n
// rounds every side runs first, second and so on equally often, so a drift of the machine's
// speed at some point of a round does not land on the same side every time (DECISIONS).
func Rotation(round, n int) []int {
	order := make([]int, n)
	for k := range order {
		order[k] = (round + k) % n
	}
	return order
}

// Connect opens a plain connection (no pool, no hooks) for the bare round trip.
func Connect(ctx context.Context, url string) (*pgx.Conn, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return conn, nil
}
