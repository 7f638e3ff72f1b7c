package domain_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/sync/domain"
)

var (
	epochNow = uuid.MustParse("01938d2a-7c00-7a01-8000-00000000e001")
	epochOld = uuid.MustParse("01938d2a-7c00-7a01-8000-00000000e000")
)

func TestResyncReasonOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		after       int64
		epoch       domain.CursorEpoch
		head        int64
		minRetained int64
		maxEvents   int64
		want        domain.Reason
	}{
		{name: "caught up", after: 100, epoch: domain.EpochOf(epochNow), head: 100, minRetained: 1, maxEvents: 1000, want: domain.ReasonNone},
		{name: "behind, served", after: 40, epoch: domain.EpochOf(epochNow), head: 100, minRetained: 1, maxEvents: 1000, want: domain.ReasonNone},
		{name: "no epoch given: no epoch check", after: 40, epoch: domain.CursorEpoch{}, head: 100, minRetained: 1, maxEvents: 1000, want: domain.ReasonNone},
		{name: "the nil UUID given: not the current epoch", after: 40, epoch: domain.EpochOf(uuid.Nil), head: 100, minRetained: 1, maxEvents: 1000, want: domain.ReasonEpochChanged},
		{name: "epoch changed", after: 40, epoch: domain.EpochOf(epochOld), head: 100, minRetained: 1, maxEvents: 1000, want: domain.ReasonEpochChanged},
		{name: "epoch wrong and cursor ahead: epoch first", after: 500, epoch: domain.EpochOf(epochOld), head: 100, minRetained: 1, maxEvents: 1000, want: domain.ReasonEpochChanged},
		{name: "epoch wrong and retention: epoch first", after: 5, epoch: domain.EpochOf(epochOld), head: 100, minRetained: 50, maxEvents: 1000, want: domain.ReasonEpochChanged},
		{name: "cursor ahead", after: 101, epoch: domain.EpochOf(epochNow), head: 100, minRetained: 1, maxEvents: 1000, want: domain.ReasonCursorAhead},
		{name: "cursor ahead without epoch: the second net", after: 101, epoch: domain.CursorEpoch{}, head: 100, minRetained: 1, maxEvents: 1000, want: domain.ReasonCursorAhead},
		{name: "cursor ahead of an empty log", after: 1, epoch: domain.CursorEpoch{}, head: 0, minRetained: 1, maxEvents: 1000, want: domain.ReasonCursorAhead},
		{name: "retention", after: 48, epoch: domain.EpochOf(epochNow), head: 100, minRetained: 50, maxEvents: 1000, want: domain.ReasonRetention},
		{name: "after exactly MinRetainedSeq - 1: served", after: 49, epoch: domain.EpochOf(epochNow), head: 100, minRetained: 50, maxEvents: 1000, want: domain.ReasonNone},
		{name: "retention and too far behind: retention first", after: 0, epoch: domain.EpochOf(epochNow), head: 5000, minRetained: 50, maxEvents: 1000, want: domain.ReasonRetention},
		{name: "too far behind", after: 100, epoch: domain.EpochOf(epochNow), head: 1101, minRetained: 1, maxEvents: 1000, want: domain.ReasonTooFarBehind},
		{name: "exactly max events behind: served", after: 100, epoch: domain.EpochOf(epochNow), head: 1100, minRetained: 1, maxEvents: 1000, want: domain.ReasonNone},
		{name: "empty log from the start", after: 0, epoch: domain.CursorEpoch{}, head: 0, minRetained: 1, maxEvents: 1000, want: domain.ReasonNone},
		{name: "empty log after retention, caught up", after: 300, epoch: domain.EpochOf(epochNow), head: 300, minRetained: 301, maxEvents: 1000, want: domain.ReasonNone},
		{name: "empty log after retention, cursor behind", after: 299, epoch: domain.EpochOf(epochNow), head: 300, minRetained: 301, maxEvents: 1000, want: domain.ReasonRetention},
		{name: "empty log after retention, fresh client", after: 0, epoch: domain.CursorEpoch{}, head: 300, minRetained: 301, maxEvents: 1000, want: domain.ReasonRetention},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := domain.ResyncReason(tc.after, tc.epoch, tc.head, tc.minRetained, epochNow, tc.maxEvents)
			if got != tc.want {
				t.Fatalf("ResyncReason(after %d, epoch %v, head %d, min %d, max %d) = %q, want %q",
					tc.after, tc.epoch, tc.head, tc.minRetained, tc.maxEvents, got, tc.want)
			}
		})
	}
}

func TestReasonRecovery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		reason domain.Reason
		want   domain.Recovery
	}{
		{domain.ReasonNone, domain.RecoveryNone},
		{domain.ReasonEpochChanged, domain.RecoverySnapshot},
		{domain.ReasonRetention, domain.RecoverySnapshot},
		{domain.ReasonTooFarBehind, domain.RecoverySnapshot},
		{domain.ReasonCursorAhead, domain.RecoveryRetry},
	}
	for _, tc := range tests {
		if got := tc.reason.Recovery(); got != tc.want {
			t.Errorf("%q.Recovery() = %q, want %q", tc.reason, got, tc.want)
		}
	}
	if got := domain.Reasons(); len(got) != 4 || got[0] != domain.ReasonEpochChanged || got[3] != domain.ReasonTooFarBehind {
		t.Errorf("Reasons() = %v, want the four reasons in check order", got)
	}
}

func TestNextCursor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                 string
		after, head, scanEnd int64
		rows, limit          int
		lastSeq              int64
		want                 int64
	}{
		{name: "page full: the seq of the last row read", after: 10, head: 1000, scanEnd: 1000, rows: 5, limit: 5, lastSeq: 42, want: 42},
		{name: "page full, every row dropped by authorize: still the last row read", after: 10, head: 1000, scanEnd: 1000, rows: 5, limit: 5, lastSeq: 42, want: 42},
		{name: "page not full, window reaches head: head", after: 10, head: 60, scanEnd: 60, rows: 3, limit: 5, lastSeq: 58, want: 60},
		{name: "page not full, every row dropped: head all the same", after: 10, head: 60, scanEnd: 60, rows: 3, limit: 5, lastSeq: 12, want: 60},
		{name: "no row at all: head", after: 10, head: 60, scanEnd: 60, rows: 0, limit: 5, want: 60},
		{name: "window shorter than head: the end of the window", after: 10, head: 5000, scanEnd: 510, rows: 2, limit: 5, lastSeq: 400, want: 510},
		{name: "window shorter than head, nothing visible in it", after: 10, head: 5000, scanEnd: 510, rows: 0, limit: 5, want: 510},
		{name: "full page inside a short window", after: 10, head: 5000, scanEnd: 510, rows: 5, limit: 5, lastSeq: 20, want: 20},
		{name: "caught up: stays", after: 60, head: 60, scanEnd: 60, rows: 0, limit: 5, want: 60},
		{name: "a scan end beyond head is clamped to head", after: 10, head: 60, scanEnd: 90, rows: 0, limit: 5, want: 60},
		{name: "a scan end before after is clamped to after", after: 10, head: 60, scanEnd: 3, rows: 0, limit: 5, want: 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := domain.NextCursor(tc.after, tc.head, tc.scanEnd, tc.rows, tc.limit, tc.lastSeq)
			if got != tc.want {
				t.Fatalf("NextCursor(after %d, head %d, scanEnd %d, rows %d, limit %d, last %d) = %d, want %d",
					tc.after, tc.head, tc.scanEnd, tc.rows, tc.limit, tc.lastSeq, got, tc.want)
			}
		})
	}
}

func TestScanEnd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                string
		after, head, window int64
		want                int64
	}{
		{name: "window inside the log", after: 100, head: 10_000, window: 500, want: 600},
		{name: "window reaches head", after: 100, head: 300, window: 500, want: 300},
		{name: "at head", after: 300, head: 300, window: 500, want: 300},
		{name: "no overflow near the top", after: 1<<63 - 10, head: 1<<63 - 1, window: 500, want: 1<<63 - 1},
		{name: "a window below one scans one seq", after: 100, head: 300, window: 0, want: 101},
		{name: "after beyond head scans nothing", after: 400, head: 300, window: 500, want: 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := domain.ScanEnd(tc.after, tc.head, tc.window); got != tc.want {
				t.Fatalf("ScanEnd(%d, %d, %d) = %d, want %d", tc.after, tc.head, tc.window, got, tc.want)
			}
		})
	}
}

func TestPageLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ requested, pageSize, want int }{
		{0, 500, 500}, {-3, 500, 500}, {1, 500, 1}, {499, 500, 499}, {500, 500, 500}, {501, 500, 500}, {1 << 40, 500, 500},
	} {
		if got := domain.PageLimit(tc.requested, tc.pageSize); got != tc.want {
			t.Errorf("PageLimit(%d, %d) = %d, want %d", tc.requested, tc.pageSize, got, tc.want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	base := time.Second
	tests := []struct {
		name   string
		reason domain.Reason
		u      float64
		want   time.Duration
	}{
		{name: "no reason: no wait", reason: domain.ReasonNone, u: 0.7, want: 0},
		{name: "lowest draw: half the base", reason: domain.ReasonRetention, u: 0, want: 500 * time.Millisecond},
		{name: "middle draw: the base", reason: domain.ReasonCursorAhead, u: 0.5, want: time.Second},
		{name: "high draw: below one and a half", reason: domain.ReasonEpochChanged, u: 0.999, want: 1499 * time.Millisecond},
		{name: "a draw below 0 counts as 0", reason: domain.ReasonTooFarBehind, u: -4, want: 500 * time.Millisecond},
		{name: "a draw of 1 or more counts as just below 1", reason: domain.ReasonTooFarBehind, u: 7, want: 1500*time.Millisecond - time.Nanosecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := domain.RetryAfter(tc.reason, base, tc.u)
			if got.Round(time.Millisecond) != tc.want.Round(time.Millisecond) {
				t.Fatalf("RetryAfter(%q, %v, %v) = %v, want %v", tc.reason, base, tc.u, got, tc.want)
			}
		})
	}
	if got := domain.RetryAfter(domain.ReasonRetention, 0, 0.5); got != 0 {
		t.Errorf("RetryAfter with base 0 = %v, want 0", got)
	}
}

// prefilterWorld places events in two spaces with two channels each, a direct message, and
// nowhere, so that every clause of the prefilter is exercised.
var (
	pfSpaceSupport   = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000005a1")
	pfSpaceMarketing = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000005a2")
	pfChanHelp       = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000005c1")
	pfChanBugs       = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000005c2")
	pfChanNews       = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000005c3")
	pfChanDM         = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000005c4")
	pfAlex           = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000a1")
	pfSam            = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000a2")
)

func TestPrefilterMatch(t *testing.T) {
	t.Parallel()
	channelEvent := func(space, channel uuid.UUID) domain.StoredEvent {
		return domain.StoredEvent{SpaceID: space, ChannelID: channel, ReceiveAction: kernel.ActionThreadRead}
	}
	events := map[string]domain.StoredEvent{
		"help":               channelEvent(pfSpaceSupport, pfChanHelp),
		"bugs":               channelEvent(pfSpaceSupport, pfChanBugs),
		"news":               channelEvent(pfSpaceMarketing, pfChanNews),
		"dm":                 channelEvent(uuid.Nil, pfChanDM),
		"support itself":     {SpaceID: pfSpaceSupport, ReceiveAction: kernel.ActionSpaceRead},
		"marketing itself":   {SpaceID: pfSpaceMarketing, ReceiveAction: kernel.ActionSpaceRead},
		"nowhere":            {ReceiveAction: kernel.ActionAgentRead},
		"alex personal":      {SpaceID: pfSpaceSupport, ChannelID: pfChanHelp, AudienceID: pfAlex},
		"sam personal":       {SpaceID: pfSpaceSupport, ChannelID: pfChanHelp, AudienceID: pfSam},
		"alex personal bare": {AudienceID: pfAlex},
	}
	tests := []struct {
		name   string
		filter domain.Prefilter
		want   []string
	}{
		{
			name:   "one channel: its events, its space's own events, unplaced and own personal events",
			filter: domain.Prefilter{PrincipalID: pfAlex, ChannelIDs: []uuid.UUID{pfChanHelp}, VisibleSpaceIDs: []uuid.UUID{pfSpaceSupport}},
			want:   []string{"help", "support itself", "nowhere", "alex personal", "alex personal bare"},
		},
		{
			name:   "a fully visible space: every channel in it",
			filter: domain.Prefilter{PrincipalID: pfSam, FullyVisibleSpaceIDs: []uuid.UUID{pfSpaceSupport}, VisibleSpaceIDs: []uuid.UUID{pfSpaceSupport}},
			want:   []string{"help", "bugs", "support itself", "nowhere", "sam personal"},
		},
		{
			name:   "a direct message through its channel grant",
			filter: domain.Prefilter{PrincipalID: pfAlex, ChannelIDs: []uuid.UUID{pfChanDM}},
			want:   []string{"dm", "nowhere", "alex personal", "alex personal bare"},
		},
		{
			name:   "instance-wide: every non-personal event, only its own personal ones",
			filter: domain.Prefilter{PrincipalID: pfSam, InstanceWide: true},
			want:   []string{"help", "bugs", "news", "dm", "support itself", "marketing itself", "nowhere", "sam personal"},
		},
		{
			name:   "nothing visible: unplaced and own personal events",
			filter: domain.Prefilter{PrincipalID: pfSam},
			want:   []string{"nowhere", "sam personal"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := map[string]bool{}
			for _, n := range tc.want {
				want[n] = true
			}
			for name, e := range events {
				if got := tc.filter.Match(e); got != want[name] {
					t.Errorf("Match(%s) = %v, want %v", name, got, want[name])
				}
			}
		})
	}
}
