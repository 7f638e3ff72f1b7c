package operations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/kernel/config"
	"bothy.example.com/server/internal/sync/adapters/gateway"
	"bothy.example.com/server/internal/wire"
	"bothy.example.com/server/internal/wiretest"
)

// progressLog records what a backup or a restore reported.
type progressLog struct{ steps []wire.BackupProgress }

func (p *progressLog) add(s wire.BackupProgress) { p.steps = append(p.steps, s) }

// check fails the test unless the reports went up by one step at a time to Total, and the last
// one said Total of Total.
func (p *progressLog) check(t *testing.T, what string) {
	t.Helper()
	if len(p.steps) < 2 {
		t.Fatalf("%s reported %d steps, want its progress", what, len(p.steps))
	}
	last := p.steps[len(p.steps)-1]
	if last.Total == 0 || last.Done != last.Total {
		t.Fatalf("%s ended at %d of %d", what, last.Done, last.Total)
	}
	for i := 1; i < len(p.steps); i++ {
		if p.steps[i].Done < p.steps[i-1].Done || p.steps[i].Done > p.steps[i].Total {
			t.Fatalf("%s went from %+v to %+v", what, p.steps[i-1], p.steps[i])
		}
	}
}

// sameState fails the test unless got is the snapshot want under the epoch restored: equal in
// every member but the epoch (which the restore rotated) and the instance's version (which the
// rotation raised).
func sameState(t *testing.T, who string, got, want apigen.Snapshot, newEpoch uuid.UUID) {
	t.Helper()
	if got.SyncEpoch != newEpoch || got.Instance.SyncEpoch != newEpoch {
		t.Fatalf("%s resynced to epoch %s (instance %s), want the restore's %s", who, got.SyncEpoch, got.Instance.SyncEpoch, newEpoch)
	}
	if got.Instance.Version != want.Instance.Version+1 {
		t.Fatalf("%s: instance version %d, want the backup's %d plus the rotation", who, got.Instance.Version, want.Instance.Version)
	}
	got.SyncEpoch, got.Instance.SyncEpoch, got.Instance.Version = want.SyncEpoch, want.Instance.SyncEpoch, want.Instance.Version
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("%s resynced to\n %s\nwant the state of the backup\n %s", who, g, w)
	}
}

// TestRestoreRotatesTheEpochForEveryClient restores an older backup (bothy admin backup's and
// restore's wire.Backup and wire.Restore, the real pg_dump and pg_restore) under live clients:
// a REST catch-up client whose cursor is newer than the backup, one whose cursor is older, a
// snapshot client holding an ETag, and a gateway client connected to bothy serve when it stops
// for the restore. A restore while serve runs is refused. Afterwards every client gets
// epoch_changed (the one that sends no epoch, cursor_ahead, as before), and after resyncing
// from a fresh snapshot each arrives at exactly the state of the backup; the next event takes
// the seq after the backup's head and reaches them all.
func TestRestoreRotatesTheEpochForEveryClient(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	w := e2etest.NewSyncWorld(t)
	url := w.Env.DatabaseURL
	logger := wiretest.TestLogger(t)
	cfg := e2etest.LoadConfig(t, map[config.Key]string{config.DatabaseURL: url})

	// bothy serve (every role) on the database; the world's own App stands for the API.
	serve, err := wire.New(ctx, cfg, logger, wire.Options{Clock: w.Env.Clock})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(serve.Close)
	base, stop, done := e2etest.Serving(t, serve)

	for i := range 3 {
		w.Post(t, w.Alex, w.TicketThread, fmt.Sprintf("Before the backup, %d", i))
	}
	olderCursor := w.Head(t) // the older client stopped here, below the backup's head
	w.Post(t, w.Sam, w.CampaignThread, "Still before the backup")
	w.ReadTo(t, w.Sam, w.CampaignThread, 2)
	epoch, backupHead := w.Epoch(t), w.Head(t)
	alexBefore, alexResp := w.Snapshot(t, w.Alex)
	samBefore, _ := w.Snapshot(t, w.Sam)
	alexEvents, _ := w.CatchUp(t, w.Alex, 0, 0)

	var dumped progressLog
	file := filepath.Join(t.TempDir(), "bothy.dump")
	backup, err := wire.Backup(ctx, url, wire.BackupOptions{File: file, Progress: dumped.add})
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	dumped.check(t, "the backup")
	if backup.HeadSeq != backupHead || backup.SyncEpoch != epoch.String() || backup.Bytes <= 0 || backup.File != file {
		t.Fatalf("backup report %+v, want head %d, epoch %s, the file %s", backup, backupHead, epoch, file)
	}

	// After the backup: events the restore will lose, and clients that saw them.
	lost := w.Post(t, w.Alex, w.TicketThread, "After the backup: lost by the restore")
	w.Post(t, w.Sam, w.CampaignThread, "After the backup as well")
	newerCursor := w.Head(t)
	if _, cursor := w.CatchUp(t, w.Alex, olderCursor, 0); cursor != newerCursor {
		t.Fatalf("Alex caught up to %d, want the head %d", cursor, newerCursor)
	}
	live := e2etest.MustDial(t, base, w.Sam.Token)
	live.Send(fmt.Sprintf(`{"op":"resume","after":%d,"epoch":%q}`, backupHead, epoch))
	if got, _ := live.Until(newerCursor, true); len(got) == 0 {
		t.Fatal("the gateway delivered Sam nothing after the backup")
	}

	// A restore while bothy serve runs is refused, and changes nothing.
	if _, err := wire.Restore(ctx, cfg, url, logger, wire.RestoreOptions{File: file}); !errors.Is(err, wire.ErrDatabaseInUse) {
		t.Fatalf("Restore under a running server = %v, want ErrDatabaseInUse", err)
	}
	if w.Head(t) != newerCursor || w.Epoch(t) != epoch {
		t.Fatal("the refused restore changed the database")
	}

	// The operator stops bothy serve (the gateway client is told to go away) and restores.
	stop()
	if code, _ := live.Closed(); code != gateway.CloseGoingAway {
		t.Fatalf("the gateway closed Sam's connection with %d, want %d", code, gateway.CloseGoingAway)
	}
	if err := e2etest.WaitServe(t, done, e2etest.WaitTimeout); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	serve.Close()
	w.Env.Server.Close()
	w.Env.App.Close()
	if _, err := wire.Restore(ctx, cfg, url, logger, wire.RestoreOptions{File: filepath.Join(t.TempDir(), "none.dump")}); err == nil {
		t.Fatal("Restore of a missing file succeeded")
	}
	var restored progressLog
	rep, err := wire.Restore(ctx, cfg, url, logger, wire.RestoreOptions{File: file, Progress: restored.add})
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	restored.check(t, "the restore")
	if rep.OldEpoch != epoch.String() || rep.NewEpoch == epoch.String() || rep.HeadSeq != backupHead || rep.Applied != 0 || rep.BackupTakenAt == "" {
		t.Fatalf("restore report %+v, want epoch %s rotated, head %d", rep, epoch, backupHead)
	}

	// bothy serve starts again on the restored database.
	w.Env = wiretest.New(t, wiretest.WithDatabaseURL(url))
	e2etest.RunTail(t, w.Env.App.Tail())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), e2etest.WaitTimeout)
		defer cancel()
		_ = w.Env.App.Gateway().Shutdown(ctx)
	})
	newEpoch := w.Epoch(t)
	if newEpoch.String() != rep.NewEpoch || w.Head(t) != backupHead {
		t.Fatalf("restored database at epoch %s head %d, want %s and %d", newEpoch, w.Head(t), rep.NewEpoch, backupHead)
	}
	records, err := w.Env.App.Restores(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 1 || records[0].ID.String() != rep.RestoreID || records[0].How != instance.RestoreByCommand ||
		records[0].Source != file || records[0].OldEpoch != epoch || records[0].NewEpoch != newEpoch || records[0].BackupTakenAt.IsZero() {
		t.Fatalf("restore records %+v, want the one of %+v", records, rep)
	}

	// The start-up check of bothy serve takes the restored database for what it is: the
	// restore recorded this cluster's identity, so it rotates nothing more.
	if err := w.Env.App.ReconcileClusterIdentity(ctx); err != nil {
		t.Fatal(err)
	}
	if w.Epoch(t) != newEpoch {
		t.Fatal("the start-up check rotated the epoch again after bothy's own restore")
	}

	// Every client that sends its epoch learns of the restore, whichever side of the backup
	// its cursor is; without the epoch, a cursor past the restored head is only "ahead".
	w.RequireResync(t, w.Alex, newerCursor, epoch.String(), "epoch_changed", 0)
	w.RequireResync(t, w.Alex, olderCursor, epoch.String(), "epoch_changed", 0)
	w.RequireResync(t, w.Alex, newerCursor, "", "cursor_ahead", 0)
	r := w.Do(t, w.Alex, http.MethodGet, "/api/v1/sync/snapshot", "", "If-None-Match", alexResp.Header.Get("ETag"))
	if r.Status != http.StatusOK {
		t.Fatalf("getSnapshot with the ETag of before the backup = %d, want 200 with the new epoch", r.Status)
	}
	again := e2etest.MustDial(t, w.Env.Server.URL, w.Sam.Token)
	again.Send(fmt.Sprintf(`{"op":"resume","after":%d,"epoch":%q}`, newerCursor, epoch))
	if f := again.Expect("resync_required"); f.Reason != "epoch_changed" {
		t.Fatalf("the gateway's resync_required says %s, want epoch_changed", f.Raw)
	}
	if code, _ := again.Closed(); code != gateway.CloseResyncRequired {
		t.Fatalf("the gateway closed with %d after resync_required, want %d", code, gateway.CloseResyncRequired)
	}

	// Resynced from a fresh snapshot, each client has exactly the state of the backup.
	alexAfter, _ := w.Snapshot(t, w.Alex)
	sameState(t, "Alex (REST)", alexAfter, alexBefore, newEpoch)
	fresh := e2etest.MustDial(t, w.Env.Server.URL, w.Sam.Token)
	fresh.Send(`{"op":"hello"}`)
	var samAfter apigen.Snapshot
	if err := json.Unmarshal(fresh.Expect("ready").Snapshot, &samAfter); err != nil {
		t.Fatal(err)
	}
	sameState(t, "Sam (gateway)", samAfter, samBefore, newEpoch)
	events, _ := w.CatchUp(t, w.Alex, 0, 0)
	if !reflect.DeepEqual(events, alexEvents) {
		t.Fatalf("catch-up from 0 after the restore gave Alex %s, want the backup's %s", e2etest.DescribeEnvelopes(events), e2etest.DescribeEnvelopes(alexEvents))
	}
	for _, e := range events {
		if e.Resource.ID == lost.Id {
			t.Fatalf("the lost message %s is in the restored log", lost.Id)
		}
	}

	// The next event takes the seq after the backup's head, in the new epoch, for everyone.
	next := w.Post(t, w.Alex, w.TicketThread, "After the restore")
	got, _ := fresh.Until(w.Head(t), false)
	if seqs := e2etest.GatewaySeqs(got); !slices.Contains(seqs, backupHead+1) {
		t.Fatalf("the gateway delivered Sam %v after the restore, want seq %d", seqs, backupHead+1)
	}
	page := w.Page(t, w.Alex, alexAfter.HeadSeq, 0)
	if len(page.Events) == 0 || page.Events[0].Seq != backupHead+1 || page.SyncEpoch != newEpoch {
		t.Fatalf("catch-up after the resync gave Alex %s in epoch %s, want message %s at seq %d", e2etest.DescribeEnvelopes(page.Events), page.SyncEpoch, next.Id, backupHead+1)
	}
}

// TestRestoreRefusesWhatIsNoBackup: an archive without bothy's instance schema is refused before
// the database is touched.
func TestRestoreRefusesWhatIsNoBackup(t *testing.T) {
	t.Parallel()
	w := e2etest.NewSyncPeople(t)
	url := w.Env.DatabaseURL
	file := filepath.Join(t.TempDir(), "other.dump")
	if err := os.WriteFile(file, []byte("not an archive"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := e2etest.LoadConfig(t, map[config.Key]string{config.DatabaseURL: url})
	if _, err := wire.Restore(t.Context(), cfg, url, wiretest.TestLogger(t), wire.RestoreOptions{File: file}); err == nil {
		t.Fatal("Restore of a file that is no archive succeeded")
	}
	if w.Head(t) == 0 {
		t.Fatal("the refused restore emptied the log")
	}
}
