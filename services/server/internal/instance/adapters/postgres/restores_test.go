package postgres_test

import (
	"errors"
	"testing"
	"time"

	"bothy.example.com/server/internal/instance"
)

// TestRotateEpochRecordsEachRotation: each rotation gives the instance a fresh epoch, raises its
// version and records the epoch it replaced, the head of the log and the backup's time; the
// list has every rotation, oldest first.
func TestRotateEpochRecordsEachRotation(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := t.Context()
	if _, err := e.store.RotateEpoch(ctx, instance.RestoreInput{At: time.Now(), How: instance.RestoreByCommand, Source: "x.dump"}); !errors.Is(err, instance.ErrNoInstance) {
		t.Fatalf("RotateEpoch before Ensure = %v, want ErrNoInstance", err)
	}
	before, err := e.store.Ensure(ctx, "Example")
	if err != nil {
		t.Fatal(err)
	}
	if list, err := e.store.ListRestores(ctx); err != nil || list == nil || len(list) != 0 {
		t.Fatalf("ListRestores of a new instance = %v, %v, want an empty list", list, err)
	}
	at := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	taken := at.Add(-time.Hour)
	first, err := e.store.RotateEpoch(ctx, instance.RestoreInput{At: at, How: instance.RestoreByCommand, Source: "bothy-1.dump", BackupTakenAt: taken})
	if err != nil {
		t.Fatalf("RotateEpoch: %v", err)
	}
	second, err := e.store.RotateEpoch(ctx, instance.RestoreInput{At: at.Add(time.Minute), How: instance.RestoreDetected, Source: "log head 7 below the 9 seen"})
	if err != nil {
		t.Fatalf("RotateEpoch: %v", err)
	}
	after, err := e.store.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case first.OldEpoch != before.SyncEpoch || first.NewEpoch == before.SyncEpoch:
		t.Errorf("first rotation %v -> %v, want from %v to a fresh epoch", first.OldEpoch, first.NewEpoch, before.SyncEpoch)
	case second.OldEpoch != first.NewEpoch || after.SyncEpoch != second.NewEpoch:
		t.Errorf("second rotation %v -> %v, instance %v", second.OldEpoch, second.NewEpoch, after.SyncEpoch)
	case after.Version != before.Version+2:
		t.Errorf("version %d after two rotations of %d", after.Version, before.Version)
	case !first.BackupTakenAt.Equal(taken) || !second.BackupTakenAt.IsZero() || first.HeadSeq != 0:
		t.Errorf("records %+v %+v", first, second)
	}
	if v, err := e.store.SyncEpoch(ctx); err != nil || v != second.NewEpoch {
		t.Errorf("SyncEpoch = %v, %v, want %v", v, err, second.NewEpoch)
	}
	list, err := e.store.ListRestores(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0] != first || list[1] != second {
		t.Errorf("ListRestores = %+v, want %+v then %+v", list, first, second)
	}
	for _, bad := range []instance.RestoreInput{
		{How: instance.RestoreByCommand, Source: "x"},
		{At: at, How: "by hand", Source: "x"},
		{At: at, How: instance.RestoreDetected},
	} {
		if _, err := e.store.RotateEpoch(ctx, bad); !errors.Is(err, instance.ErrInvalidRestore) {
			t.Errorf("RotateEpoch(%+v) = %v, want ErrInvalidRestore", bad, err)
		}
	}
}

// TestReconcileRotatesWhenTheClusterChanged: the first check records the cluster's identity,
// an unchanged one does nothing, and a database whose recorded identity is another cluster's
// (restored into this one) or another timeline's (a point-in-time recovery) gets a fresh epoch,
// recorded as detected, once.
func TestReconcileRotatesWhenTheClusterChanged(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := t.Context()
	info, err := e.store.Ensure(ctx, "Example")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)
	for i := range 2 {
		if _, rotated, ok, err := e.store.Reconcile(ctx, at); err != nil || !ok || rotated {
			t.Fatalf("Reconcile %d on an unchanged cluster = rotated %v, ok %v, %v", i, rotated, ok, err)
		}
	}
	for _, change := range []string{
		"UPDATE instance.cluster_identity SET timeline_id = timeline_id + 1",
		"UPDATE instance.cluster_identity SET system_identifier = '1'",
	} {
		if _, err := e.pool.Exec(ctx, change); err != nil {
			t.Fatal(err)
		}
		before, err := e.store.SyncEpoch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r, rotated, ok, err := e.store.Reconcile(ctx, at)
		if err != nil || !ok || !rotated || r.How != instance.RestoreDetected || r.OldEpoch != before || r.Source == "" {
			t.Fatalf("Reconcile after %q = %+v, rotated %v, ok %v, %v", change, r, rotated, ok, err)
		}
		if _, rotated, _, err := e.store.Reconcile(ctx, at); err != nil || rotated {
			t.Fatalf("Reconcile right after the rotation = rotated %v, %v", rotated, err)
		}
	}
	if ok, err := e.store.Record(ctx, at); err != nil || !ok {
		t.Fatalf("Record = %v, %v", ok, err)
	}
	list, err := e.store.ListRestores(ctx)
	if err != nil || len(list) != 2 || list[0].OldEpoch != info.SyncEpoch {
		t.Fatalf("ListRestores = %+v, %v, want the two detected rotations", list, err)
	}
}
