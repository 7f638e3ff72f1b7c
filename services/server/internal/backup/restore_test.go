package backup_test

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	instancepg "bothy.example.com/server/internal/instance/adapters/postgres"
	instanceapp "bothy.example.com/server/internal/instance/app"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/pglocal"
	"bothy.example.com/server/internal/wire"
	"bothy.example.com/server/internal/wiretest"
)

// state is what a test compares before and after a restore: the instance and its flags.
type state struct {
	instanceID, epoch string
	flags             []string
}

// readState reads the state of the database at url through a fresh App, closed again before it
// returns (a restore refuses while another session uses the database).
func readState(t *testing.T, url string) state {
	t.Helper()
	env := wiretest.New(t, wiretest.WithDatabaseURL(url))
	defer env.Server.Close()
	defer env.App.Close()
	var s state
	resp := env.Client.Get("/api/v1/instance")
	if resp.Status != 401 {
		t.Fatalf("getInstance without a token = %d, want 401 (the App serves)", resp.Status)
	}
	epoch, err := env.App.Versions().SyncEpoch(t.Context())
	if err != nil {
		t.Fatalf("SyncEpoch: %v", err)
	}
	s.epoch = epoch.String()
	flags, err := env.App.Ports().Flags.List(t.Context())
	if err != nil {
		t.Fatalf("Flags: %v", err)
	}
	for _, f := range flags {
		s.flags = append(s.flags, f.Key)
	}
	info, err := instanceapp.NewEpoch(instancepg.New(env.App.Tx())).Info(t.Context())
	if err != nil {
		t.Fatalf("read the instance: %v", err)
	}
	s.instanceID = info.ID.String()
	return s
}

// newInstance builds an instance of its own on a fresh database with the flag key defined
// and, when bulk, 1,000 more flags with incompressible descriptions (so that the data, not the
// table of contents, makes up most of a backup), and returns its database's URL with every
// session of it closed.
func newInstance(t *testing.T, key string, bulk bool) string {
	t.Helper()
	env := wiretest.New(t)
	if _, err := env.App.Ports().Flags.Define(t.Context(), key, "defined by the test", true); err != nil {
		t.Fatalf("define flag: %v", err)
	}
	if bulk {
		fill(t, env.App)
	}
	env.Server.Close()
	env.App.Close()
	return env.DatabaseURL
}

// fill defines 1,000 flags with 480 random characters of description each, four at a time.
func fill(t *testing.T, app *wire.App) {
	t.Helper()
	const flags, workers = 1000, 4
	var (
		wg   sync.WaitGroup
		errs = make(chan error, workers)
	)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < flags; i += workers {
				description := make([]byte, 240)
				_, _ = rand.Read(description)
				if _, err := app.Ports().Flags.Define(t.Context(), fmt.Sprintf("bulk.%d", i), hex.EncodeToString(description), false); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatalf("fill: %v", err)
	}
}

// backUp writes a backup of the database at url into a file of the test's.
func backUp(t *testing.T, url string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "bothy.dump")
	if _, err := wire.Backup(t.Context(), url, wire.BackupOptions{File: file}); err != nil {
		t.Fatalf("Backup: %v", err)
	}
	return file
}

// defineFlag defines the flag key on the database at url, as a change made after a backup.
func defineFlag(t *testing.T, url, key string) {
	t.Helper()
	env := wiretest.New(t, wiretest.WithDatabaseURL(url))
	defer env.Server.Close()
	defer env.App.Close()
	if _, err := env.App.Ports().Flags.Define(t.Context(), key, "defined after the backup", false); err != nil {
		t.Fatalf("define flag: %v", err)
	}
}

func configFor(t *testing.T, url string) *config.Config {
	t.Helper()
	cfg, err := config.Load("", []string{config.DatabaseURL.EnvName() + "=" + url})
	if err != nil {
		t.Fatalf("load config: %v", err)
	}
	return cfg
}

// TestRestoreOfATruncatedBackupKeepsTheDatabase: a real backup cut to 90% or 99% of its bytes
// still passes pg_restore --list (its table of contents is whole); its restore fails, and the
// database keeps serving exactly what it held before, the change made after the backup
// included (spec 06, ADR 0035).
func TestRestoreOfATruncatedBackupKeepsTheDatabase(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		percent int64
	}{
		{name: "90 percent", percent: 90},
		{name: "99 percent", percent: 99},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			url := newInstance(t, "backup.kept", true)
			whole := backUp(t, url)
			defineFlag(t, url, "after.backup")
			before := readState(t, url)

			data, err := os.ReadFile(whole) //nolint:gosec // G304: the backup this test wrote
			if err != nil {
				t.Fatal(err)
			}
			cut := filepath.Join(t.TempDir(), "cut.dump")
			//nolint:gosec // G703: a file in the test's own temporary directory
			if err := os.WriteFile(cut, data[:int64(len(data))*tc.percent/100], 0o600); err != nil {
				t.Fatal(err)
			}
			tools, err := pglocal.FindTools()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tools.List(ctx, cut); err != nil {
				t.Fatalf("pg_restore --list of the cut backup failed (%v): the test no longer shows the defect", err)
			}

			_, err = wire.Restore(ctx, configFor(t, url), url, wiretest.TestLogger(t), wire.RestoreOptions{File: cut})
			if err == nil {
				t.Fatal("Restore of a truncated backup succeeded")
			}
			after := readState(t, url)
			if after.instanceID != before.instanceID || after.epoch != before.epoch || !slices.Equal(after.flags, before.flags) {
				t.Fatalf("after the failed restore the database holds %+v, want what it held before, %+v", after, before)
			}
		})
	}
}

// TestRestoreOfAnotherInstance: a backup of another instance is refused by default, with a
// message that names the instances and the flag, and changes nothing; with AllowOtherInstance
// (bothy admin restore --allow-other-instance) it is restored and its instance id replaces the
// database's (spec 06).
func TestRestoreOfAnotherInstance(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	other := newInstance(t, "other.instance", false)
	file := backUp(t, other)
	otherState := readState(t, other)
	url := newInstance(t, "this.instance", false)
	before := readState(t, url)
	logger := wiretest.TestLogger(t)

	_, err := wire.Restore(ctx, configFor(t, url), url, logger, wire.RestoreOptions{File: file})
	if err == nil {
		t.Fatal("Restore of another instance's backup succeeded without being allowed")
	}
	for _, want := range []string{otherState.instanceID, before.instanceID, "--allow-other-instance"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("Restore refused with %q, want it to name %q", err, want)
		}
	}
	if !errors.Is(err, wire.ErrOtherInstance) {
		t.Fatalf("Restore refused with %v, want ErrOtherInstance", err)
	}
	if after := readState(t, url); after.instanceID != before.instanceID || after.epoch != before.epoch || !slices.Equal(after.flags, before.flags) {
		t.Fatalf("the refused restore changed the database: %+v, want %+v", after, before)
	}

	rep, err := wire.Restore(ctx, configFor(t, url), url, logger, wire.RestoreOptions{File: file, AllowOtherInstance: true})
	if err != nil {
		t.Fatalf("Restore with AllowOtherInstance: %v", err)
	}
	after := readState(t, url)
	if after.instanceID != otherState.instanceID || after.epoch != rep.NewEpoch || rep.OldEpoch != otherState.epoch ||
		!slices.Equal(after.flags, otherState.flags) {
		t.Fatalf("after the allowed restore the database holds %+v (report %+v), want the other instance %+v under a new epoch",
			after, rep, otherState)
	}
}
