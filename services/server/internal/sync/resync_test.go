package sync_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/problem"
	syncmod "bothy.example.com/server/internal/sync"
)

var testEpoch = uuid.MustParse("01938d2a-7c00-7a01-8000-00000000e001")

func TestCheckResultErrNone(t *testing.T) {
	t.Parallel()
	res := syncmod.CheckResult{HeadSeq: 10, MinRetainedSeq: 1, SyncEpoch: testEpoch}
	if err := res.Err(); err != nil {
		t.Fatalf("Err() without a reason = %v, want nil", err)
	}
	if got := res.OldestSeq(); got != 0 {
		t.Errorf("OldestSeq() = %d, want 0", got)
	}
}

func TestCheckResultErrIsTheGoneProblem(t *testing.T) {
	t.Parallel()
	for _, reason := range []syncmod.ResyncReason{
		syncmod.ResyncEpochChanged, syncmod.ResyncCursorAhead, syncmod.ResyncRetention, syncmod.ResyncTooFarBehind,
	} {
		t.Run(string(reason), func(t *testing.T) {
			t.Parallel()
			res := syncmod.CheckResult{
				HeadSeq: 1300, MinRetainedSeq: 1001, SyncEpoch: testEpoch,
				Reason: reason, Recovery: reason.Recovery(), RetryAfter: 812*time.Millisecond + 300*time.Microsecond,
			}
			err := fmt.Errorf("list events: %w", res.Err())
			if !errors.Is(err, problem.ErrResyncRequired) {
				t.Fatalf("errors.Is(%v, ErrResyncRequired) = false", err)
			}
			re, ok := syncmod.IsResync(err)
			if !ok || re.Check != res {
				t.Fatalf("IsResync = %+v, %v; want the check result", re, ok)
			}
			if re.Error() != "sync: resync required: "+string(reason) {
				t.Errorf("Error() = %q", re.Error())
			}
			p := problem.From(context.Background(), err)
			if p.Status != http.StatusGone || p.Code != "resync_required" || p.Detail == "" {
				t.Fatalf("problem = %+v, want 410 resync_required with a detail", p)
			}
			raw, mErr := json.Marshal(p)
			if mErr != nil {
				t.Fatalf("marshal: %v", mErr)
			}
			var body map[string]any
			if uErr := json.Unmarshal(raw, &body); uErr != nil {
				t.Fatalf("unmarshal %s: %v", raw, uErr)
			}
			want := map[string]any{
				"reason": string(reason), "recovery": string(reason.Recovery()), "retry_after_ms": float64(812),
				"head_seq": float64(1300), "sync_epoch": testEpoch.String(), "oldest_seq": float64(1000),
			}
			for k, v := range want {
				if body[k] != v {
					t.Errorf("body[%q] = %v, want %v (body %s)", k, body[k], v, raw)
				}
			}
		})
	}
}

func TestResyncErrorBuiltByHand(t *testing.T) {
	t.Parallel()
	err := &syncmod.ResyncError{Check: syncmod.CheckResult{Reason: "something new"}}
	if !errors.Is(err, problem.ErrResyncRequired) {
		t.Errorf("a hand-built ResyncError does not match ErrResyncRequired")
	}
	if p := problem.From(context.Background(), syncmod.CheckResult{Reason: "something new"}.Err()); p.Detail == "" {
		t.Errorf("an unknown reason has no detail")
	}
	if _, ok := syncmod.IsResync(errors.New("other")); ok {
		t.Errorf("IsResync(other) = true")
	}
}
