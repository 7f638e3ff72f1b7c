package app_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"bothy.example.com/server/internal/instance"
	"bothy.example.com/server/internal/instance/app"
	"bothy.example.com/server/internal/kernel/ids"
)

// epochStore is an app.EpochStore that records the calls it gets and fails where told.
type epochStore struct {
	calls                       []string
	infoErr, rotateErr, saveErr error
	rotated                     instance.Restore
}

func (s *epochStore) Info(context.Context) (instance.Info, error) {
	s.calls = append(s.calls, "info")
	return instance.Info{ID: s.rotated.ID}, s.infoErr
}

func (s *epochStore) RotateEpoch(_ context.Context, in instance.RestoreInput) (instance.Restore, error) {
	s.calls = append(s.calls, "rotate "+in.Source)
	return s.rotated, s.rotateErr
}

func (s *epochStore) Record(_ context.Context, at time.Time) (bool, error) {
	s.calls = append(s.calls, "record "+at.Format(time.RFC3339))
	return s.saveErr == nil, s.saveErr
}

func TestEpochRotateAfterRestore(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 20, 40, 5, 0, time.UTC)
	in := instance.RestoreInput{At: at, How: instance.RestoreByCommand, Source: "/backups/bothy.dump"}
	broken := errors.New("broken")
	for _, tc := range []struct {
		name      string
		store     epochStore
		wantCalls []string
		wantErr   error
	}{
		{
			name:      "rotates, then records the cluster's identity",
			wantCalls: []string{"rotate /backups/bothy.dump", "record 2026-12-01T20:40:05Z"},
		},
		{
			name:      "a failed rotation records nothing",
			store:     epochStore{rotateErr: instance.ErrNoInstance},
			wantCalls: []string{"rotate /backups/bothy.dump"},
			wantErr:   instance.ErrNoInstance,
		},
		{
			name:      "a failed record is reported",
			store:     epochStore{saveErr: broken},
			wantCalls: []string{"rotate /backups/bothy.dump", "record 2026-12-01T20:40:05Z"},
			wantErr:   broken,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := tc.store
			store.rotated = instance.Restore{ID: ids.New(), NewEpoch: ids.New()}
			r, err := app.NewEpoch(&store).RotateAfterRestore(t.Context(), in)
			if !slices.Equal(store.calls, tc.wantCalls) {
				t.Fatalf("calls %q, want %q", store.calls, tc.wantCalls)
			}
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("RotateAfterRestore = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || r != store.rotated {
				t.Fatalf("RotateAfterRestore = %+v, %v, want %+v", r, err, store.rotated)
			}
		})
	}
}

func TestEpochInfo(t *testing.T) {
	t.Parallel()
	store := epochStore{rotated: instance.Restore{ID: ids.New()}}
	info, err := app.NewEpoch(&store).Info(t.Context())
	if err != nil || info.ID != store.rotated.ID {
		t.Fatalf("Info = %+v, %v, want the store's instance", info, err)
	}
	store.infoErr = instance.ErrNoInstance
	if _, err := app.NewEpoch(&store).Info(t.Context()); !errors.Is(err, instance.ErrNoInstance) {
		t.Fatalf("Info without an instance = %v, want ErrNoInstance", err)
	}
}
