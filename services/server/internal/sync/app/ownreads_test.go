package app_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/clock"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/app"
)

func TestNewOwnReadsRefusesMissingDeps(t *testing.T) {
	t.Parallel()
	w := newPersonalWorld()
	for _, tc := range []struct {
		name     string
		store    app.PersonalStore
		appender kernel.Appender
		clk      clock.Clock
	}{
		{"store is nil", nil, w, clock.NewFake(start)},
		{"appender is nil", w, nil, clock.NewFake(start)},
		{"clock is nil", w, w, nil},
	} {
		if _, err := app.NewOwnReads(tc.store, tc.appender, tc.clk); err == nil || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("NewOwnReads without %s: %v", tc.name, err)
		}
	}
}

// TestOwnReadsMarkRead: an author's post moves the read state forward with the author's
// read_state.updated; a read state already at or past the post's seq stays as it is, with no
// event; a failed write or append fails the post's transaction.
func TestOwnReadsMarkRead(t *testing.T) {
	t.Parallel()
	post := app.OwnPost{AuthorID: sam, SpaceID: space, ChannelID: channel, ThreadID: thread, Seq: 4}
	for _, tc := range []struct {
		name      string
		before    int64 // Sam's read seq before the post; -1 for no read state
		wantSeq   int64
		wantVer   int64
		wantEvent bool
		failWrite error
		failApp   error
	}{
		{"no read state yet", -1, 4, 1, true, nil, nil},
		{"behind the post", 2, 4, 2, true, nil, nil},
		{"at the post", 4, 4, 1, false, nil, nil},
		{"past the post (never backwards)", 6, 6, 1, false, nil, nil},
		{"store fails", -1, 0, 0, false, errors.New("disk full"), nil},
		{"append fails", -1, 0, 0, false, nil, errors.New("log full")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newPersonalWorld()
			key := [2]uuid.UUID{sam, thread}
			if tc.before >= 0 {
				w.readStates[key] = syncmod.ReadState{PrincipalID: sam, ThreadID: thread, ChannelID: channel, LastReadSeq: tc.before, Version: 1}
			}
			w.failWrite, w.failAppend = tc.failWrite, tc.failApp
			o, err := app.NewOwnReads(w, w, clock.NewFake(start))
			if err != nil {
				t.Fatal(err)
			}
			err = w.RunInTx(context.Background(), func(ctx context.Context) error { return o.MarkRead(ctx, post) })
			if tc.failWrite != nil || tc.failApp != nil {
				if err == nil {
					t.Fatal("MarkRead succeeded, want the failure")
				}
				if _, ok := w.readStates[key]; ok || len(w.committed) != 0 {
					t.Fatalf("a failed mark left %+v and %d events", w.readStates[key], len(w.committed))
				}
				return
			}
			if err != nil {
				t.Fatalf("MarkRead: %v", err)
			}
			if got := w.readStates[key]; got.LastReadSeq != tc.wantSeq || got.Version != tc.wantVer {
				t.Errorf("read state %+v, want seq %d at version %d", got, tc.wantSeq, tc.wantVer)
			}
			if !tc.wantEvent {
				if len(w.committed) != 0 {
					t.Errorf("events %+v, want none", w.committed)
				}
				return
			}
			if len(w.committed) != 1 {
				t.Fatalf("events %+v, want one", w.committed)
			}
			e := w.committed[0]
			if e.Type != app.EventReadStateUpdated || e.ActorID != sam || e.AudienceID != sam || e.SpaceID != space ||
				e.ChannelID != channel || e.ThreadID != thread || e.ResourceKind != kernel.ResourceThread || e.ResourceID != thread {
				t.Errorf("event %+v, want Sam's read_state.updated on the thread", e)
			}
		})
	}
}
