package wire_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	authzdomain "bothy.example.com/server/internal/authz/domain"
	identityapp "bothy.example.com/server/internal/identity/app"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	syncapp "bothy.example.com/server/internal/sync/app"
	syncdomain "bothy.example.com/server/internal/sync/domain"
	"bothy.example.com/server/internal/wire/wiretest"
)

// The integration tests of catch-up (GET /api/v1/events, spec 03 "Catch-up") of issue 6.

// postPattern posts one message per character of pattern, S into the Support thread and M
// into the Marketing thread, as the owner.
func (w *syncWorld) postPattern(t *testing.T, pattern string) {
	t.Helper()
	for i, c := range pattern {
		switch c {
		case 'S':
			w.post(t, w.owner, w.ticketThread, fmt.Sprintf("Support note %d", i))
		case 'M':
			w.post(t, w.owner, w.campaignThread, fmt.Sprintf("Marketing note %d", i))
		default:
			t.Fatalf("pattern %q: unknown %q", pattern, c)
		}
	}
}

// inChannel accepts the stored events placed in the channel that are not personal: those
// every reader of the channel receives (a personal event, such as an author's own read state,
// reaches its owner only).
func inChannel(ch uuid.UUID) func(syncdomain.StoredEvent) bool {
	return func(e syncdomain.StoredEvent) bool { return e.ChannelID == ch && !e.Personal() }
}

// TestListEventsSkipsInvisible interleaves events of Support and Marketing: Alex (Support
// only) receives exactly the Support events, paging with a small limit up to head_seq, and
// his cursor passes over the Marketing ranges in between and at the end; Sam receives all of
// them; Robin, who reads nothing, reaches the head in one empty page.
func TestListEventsSkipsInvisible(t *testing.T) {
	t.Parallel()
	w := newSyncWorld(t)
	h0 := w.head(t)
	w.postPattern(t, "SMMSMSSMMM")
	all := w.sharedAfter(t, h0)
	support := storedWhere(all, inChannel(w.tickets))
	if len(support) != 4 || len(all) != 10 {
		t.Fatalf("the pattern appended %d events, %d in Support: %s", len(all), len(support), describe(all))
	}
	head := w.head(t)

	got, cursor := w.catchUp(t, w.alex, h0, 2)
	requireSameEvents(t, "Alex", got, support)
	if cursor != head {
		t.Fatalf("Alex's catch-up ended at %d, want head_seq %d", cursor, head)
	}

	// The two Marketing events after the first Support event are passed over: the page after
	// it starts with the second Support event.
	p := w.page(t, w.alex, support[0].Seq, 1)
	if len(p.Events) != 1 || p.Events[0].Seq != support[1].Seq || p.NextCursor != support[1].Seq {
		t.Fatalf("the page after the first Support event (seq %d) = %v next_cursor %d, want only seq %d",
			support[0].Seq, cuSeqs(p.Events), p.NextCursor, support[1].Seq)
	}
	// The Marketing run at the end: an empty page whose cursor is the head, a Marketing seq.
	p = w.page(t, w.alex, support[3].Seq, 2)
	if len(p.Events) != 0 || p.NextCursor != head || head == support[3].Seq {
		t.Fatalf("the page after the last Support event = %v next_cursor %d, want none and the head %d", cuSeqs(p.Events), p.NextCursor, head)
	}

	got, cursor = w.catchUp(t, w.sam, h0, 3)
	requireSameEvents(t, "Sam", got, all)
	if cursor != head {
		t.Fatalf("Sam's catch-up ended at %d, want %d", cursor, head)
	}

	p = w.page(t, w.robin, h0, 2)
	if len(p.Events) != 0 || p.NextCursor != head || p.HeadSeq != head {
		t.Fatalf("Robin's page = %v next_cursor %d head %d, want no event and the head %d", cuSeqs(p.Events), p.NextCursor, p.HeadSeq, head)
	}
}

// TestListEventsCursorIsLastChecked: a full page ends at the seq of its last row, a short page
// at the end of what it checked (the head, or the end of the scan window, which
// sync.catchup_scan_window bounds), never at the last event delivered; resuming from any
// next_cursor repeats nothing and misses nothing.
func TestListEventsCursorIsLastChecked(t *testing.T) {
	t.Parallel()
	t.Run("full and short pages", func(t *testing.T) {
		t.Parallel()
		w := newSyncWorld(t)
		h0 := w.head(t)
		w.postPattern(t, "MMMMMMMM")
		all := w.sharedAfter(t, h0)
		head := w.head(t)
		after := h0
		for i, want := range [][]int{{0, 1, 2}, {3, 4, 5}, {6, 7}} {
			p := w.page(t, w.sam, after, 3)
			var wantSeqs []int64
			for _, k := range want {
				wantSeqs = append(wantSeqs, all[k].Seq)
			}
			wantCursor := wantSeqs[len(wantSeqs)-1]
			if len(want) < 3 {
				wantCursor = head
			}
			if !slices.Equal(cuSeqs(p.Events), wantSeqs) || p.NextCursor != wantCursor {
				t.Fatalf("Sam's page %d after %d = %v next_cursor %d, want %v next_cursor %d", i, after, cuSeqs(p.Events), p.NextCursor, wantSeqs, wantCursor)
			}
			after = p.NextCursor
		}

		// Alex: a full page of one Support event ends at that event, although Marketing
		// events follow it; the last page delivers nothing and ends at the head.
		h1 := w.head(t)
		w.postPattern(t, "SMSMM")
		support := storedWhere(w.eventsAfter(t, h1), inChannel(w.tickets))
		head = w.head(t)
		after = h1
		for _, want := range []int64{support[0].Seq, support[1].Seq} {
			p := w.page(t, w.alex, after, 1)
			if len(p.Events) != 1 || p.Events[0].Seq != want || p.NextCursor != want {
				t.Fatalf("Alex's full page after %d = %v next_cursor %d, want seq %d as both", after, cuSeqs(p.Events), p.NextCursor, want)
			}
			after = p.NextCursor
		}
		if p := w.page(t, w.alex, after, 1); len(p.Events) != 0 || p.NextCursor != head {
			t.Fatalf("Alex's last page = %v next_cursor %d, want none ending at the head %d", cuSeqs(p.Events), p.NextCursor, head)
		}
	})

	t.Run("scan window", func(t *testing.T) {
		t.Parallel()
		const window = 4
		w := newSyncWorld(t, wiretest.WithSetting(syncapp.KeyCatchUpScanWindow, fmt.Sprint(window)))
		h0 := w.head(t)
		w.postPattern(t, "SMMMMMMMMMMS")
		support := storedWhere(w.eventsAfter(t, h0), inChannel(w.tickets))
		head := w.head(t)
		var got []cuEvent
		after := h0
		for after < head {
			p := w.page(t, w.alex, after, 0)
			if want := min(after+window, head); p.NextCursor != want {
				t.Fatalf("a page after %d ends at %d, want the end of its scan window %d", after, p.NextCursor, want)
			}
			got = append(got, p.Events...)
			after = p.NextCursor
		}
		requireSameEvents(t, "Alex", got, support)
		// Sam sees every seq but the owner's own read states: the first window of 4 seqs
		// gives him the shared events among them.
		inWindow := storedWhere(w.sharedAfter(t, h0), func(e syncdomain.StoredEvent) bool { return e.Seq <= h0+window })
		p := w.page(t, w.sam, h0, 0)
		if !slices.Equal(cuSeqs(p.Events), storedSeqs(inWindow)) || len(inWindow) == 0 || p.NextCursor != h0+window {
			t.Fatalf("Sam's first page = %v next_cursor %d, want %v ending at %d", cuSeqs(p.Events), p.NextCursor, storedSeqs(inWindow), h0+window)
		}
	})
}

// TestListEventsPersonalAudience: Sam's read state, draft, setting and sidebar events (the
// read state and the draft placed in Support, which Alex reads) reach Sam only; Alex's read
// state reaches Alex only; the owner, who reads everything, gets neither.
func TestListEventsPersonalAudience(t *testing.T) {
	t.Parallel()
	w := newSyncWorld(t)
	h0 := w.head(t)
	w.readTo(t, w.sam, w.ticketThread, 1)
	w.must(t, w.sam, http.MethodPut, "/api/v1/channels/"+w.tickets.String()+"/draft", `{"content_md":"Half a reply"}`, http.StatusOK, nil)
	w.must(t, w.sam, http.MethodPut, "/api/v1/me/settings/theme", `{"value":"dark"}`, http.StatusOK, nil)
	w.must(t, w.sam, http.MethodPut, "/api/v1/me/sidebar", `{"sections":[]}`, http.StatusOK, nil)
	w.readTo(t, w.alex, w.ticketThread, 1)
	all := w.eventsAfter(t, h0)
	if len(all) != 5 || all[0].Type != "read_state.updated" || all[0].ChannelID != w.tickets || all[0].SpaceID != w.support || all[0].AudienceID != w.sam.id {
		t.Fatalf("the writes appended %s, want Sam's read state in Support first", describe(all))
	}
	for _, a := range []worldActor{w.alex, w.sam, w.robin, w.owner} {
		got, _ := w.catchUp(t, a, h0, 0)
		requireSameEvents(t, a.name, got, storedWhere(all, func(e syncdomain.StoredEvent) bool { return e.AudienceID == a.id }))
	}
	// From the start of the log, too: no personal event of anyone else, ever.
	byID := map[uuid.UUID]syncdomain.StoredEvent{}
	for _, e := range w.eventsAfter(t, 0) {
		byID[e.ID] = e
	}
	for _, a := range []worldActor{w.alex, w.sam, w.robin, w.owner} {
		got, _ := w.catchUp(t, a, 0, 0)
		for _, e := range got {
			if s := byID[e.ID]; s.AudienceID != uuid.Nil && s.AudienceID != a.id {
				t.Fatalf("%s received %s (seq %d) of %s", a.name, e.Type, e.Seq, s.AudienceID)
			}
		}
	}
}

// goneBody is the body of a 410 resync_required.
type goneBody struct {
	Code         string    `json:"code"`
	Status       int       `json:"status"`
	Reason       string    `json:"reason"`
	Recovery     string    `json:"recovery"`
	RetryAfterMS int64     `json:"retry_after_ms"`
	HeadSeq      int64     `json:"head_seq"`
	SyncEpoch    uuid.UUID `json:"sync_epoch"`
	OldestSeq    int64     `json:"oldest_seq"`
}

// requireResync sends listEvents as a and fails unless it answers 410 resync_required with the
// reason, its recovery, a retry_after_ms within sync.resync_retry_base (its default, 1s) plus
// or minus half, the current head_seq and sync_epoch, the oldest_seq given, and Cache-Control
// private, no-store.
func (w *syncWorld) requireResync(t *testing.T, a worldActor, after int64, epoch, reason string, oldest int64) goneBody {
	t.Helper()
	r := w.listEvents(t, a, after, 0, epoch)
	r.RequireProblem(t, http.StatusGone, "resync_required")
	var members map[string]json.RawMessage
	r.JSON(t, &members)
	for _, m := range []string{"reason", "recovery", "retry_after_ms", "head_seq", "sync_epoch", "oldest_seq"} {
		if _, ok := members[m]; !ok {
			t.Fatalf("the 410 lacks %s: %s", m, r.Body)
		}
	}
	var g goneBody
	r.JSON(t, &g)
	recovery := "snapshot"
	if reason == "cursor_ahead" {
		recovery = "retry"
	}
	if g.Reason != reason || g.Recovery != recovery || g.HeadSeq != w.head(t) || g.SyncEpoch != w.epoch(t) || g.OldestSeq != oldest {
		t.Fatalf("after %d epoch %q: 410 %+v, want reason %s, recovery %s, head %d, epoch %s, oldest %d",
			after, epoch, g, reason, recovery, w.head(t), w.epoch(t), oldest)
	}
	if g.RetryAfterMS < 500 || g.RetryAfterMS > 1500 {
		t.Fatalf("retry_after_ms = %d, want sync.resync_retry_base (1000ms) plus or minus half", g.RetryAfterMS)
	}
	return g
}

// TestListEventsResync: each reason answers 410 resync_required with every member of the body:
// retention (the partitions dropped by partition maintenance under a controlled clock; the
// oldest cursor still served, oldest_seq, works), too_far_behind (a small
// sync.catchup_max_events), cursor_ahead (recovery retry) and epoch_changed (before any other
// reason).
func TestListEventsResync(t *testing.T) {
	t.Parallel()
	t.Run("retention", func(t *testing.T) {
		t.Parallel()
		// Tokens that never expire: the clock jumps days ahead.
		w := newSyncWorld(t, wiretest.WithSetting(syncpg.EventRetention, "24h"), wiretest.WithSetting(identityapp.KeyTokenTTL, "0s"))
		w.postPattern(t, "SMS")
		dropped := w.head(t)
		if p := w.page(t, w.sam, 0, 1); p.OldestSeq != 0 {
			t.Fatalf("oldest_seq before retention = %d, want 0", p.OldestSeq)
		}
		// Every event so far was written now (the database's clock); two days of
		// sync.partition_interval later, their partition is past the retention of a day.
		w.env.Clock.Set(time.Now().Add(72 * time.Hour))
		rep, err := w.env.App.Maintain(t.Context())
		if err != nil {
			t.Fatalf("Maintain: %v", err)
		}
		if len(rep.Dropped) == 0 || rep.HorizonSeq != dropped {
			t.Fatalf("Maintain = %+v, want partitions dropped up to seq %d", rep, dropped)
		}
		if got := w.eventsAfter(t, 0); len(got) != 0 {
			t.Fatalf("the log still holds %s", describe(got))
		}
		for _, after := range []int64{0, 1, dropped - 1} {
			w.requireResync(t, w.sam, after, "", "retention", dropped)
		}
		w.requireResync(t, w.sam, 0, w.epoch(t).String(), "retention", dropped)

		// The oldest cursor still served is served: empty now, then the new events.
		p := w.page(t, w.sam, dropped, 0)
		if len(p.Events) != 0 || p.NextCursor != dropped || p.OldestSeq != dropped {
			t.Fatalf("the page after oldest_seq = %v next %d oldest %d", cuSeqs(p.Events), p.NextCursor, p.OldestSeq)
		}
		w.postPattern(t, "MS")
		got, cursor := w.catchUp(t, w.sam, dropped, 1)
		requireSameEvents(t, "Sam", got, w.sharedAfter(t, dropped))
		if len(got) != 2 || cursor != w.head(t) {
			t.Fatalf("Sam after retention got %s up to %d", describeEnvelopes(got), cursor)
		}
		if p := w.page(t, w.alex, dropped, 0); p.OldestSeq != dropped {
			t.Fatalf("oldest_seq after retention = %d, want %d", p.OldestSeq, dropped)
		}
		w.requireResync(t, w.alex, dropped-1, "", "retention", dropped)
	})

	t.Run("too_far_behind", func(t *testing.T) {
		t.Parallel()
		const maxEvents = 3
		w := newSyncWorld(t, wiretest.WithSetting(syncapp.KeyCatchUpMaxEvents, fmt.Sprint(maxEvents)))
		head := w.head(t)
		for _, after := range []int64{0, head - maxEvents - 1} {
			w.requireResync(t, w.sam, after, "", "too_far_behind", 0)
		}
		got, cursor := w.catchUp(t, w.sam, head-maxEvents, 0)
		if cursor != head || len(got) == 0 {
			t.Fatalf("a cursor exactly sync.catchup_max_events behind got %s up to %d", describeEnvelopes(got), cursor)
		}
	})

	t.Run("cursor_ahead", func(t *testing.T) {
		t.Parallel()
		w := newSyncWorld(t)
		head := w.head(t)
		for _, after := range []int64{head + 1, head + 1000} {
			w.requireResync(t, w.alex, after, "", "cursor_ahead", 0)
		}
		w.requireResync(t, w.alex, head+1, w.epoch(t).String(), "cursor_ahead", 0)
		if p := w.page(t, w.alex, head, 0); len(p.Events) != 0 || p.NextCursor != head {
			t.Fatalf("the page at the head = %v next %d", cuSeqs(p.Events), p.NextCursor)
		}
	})

	t.Run("epoch_changed", func(t *testing.T) {
		t.Parallel()
		w := newSyncWorld(t)
		head := w.head(t)
		other := uuid.NewString()
		// The epoch is checked first: it wins over a cursor ahead of the head.
		for _, after := range []int64{0, head, head + 1} {
			w.requireResync(t, w.robin, after, other, "epoch_changed", 0)
		}
		// The nil UUID is a well-formed epoch that is not the instance's: epoch_changed too,
		// never "no epoch given" (the gateway's resume answers the same).
		for _, after := range []int64{0, head} {
			w.requireResync(t, w.robin, after, uuid.Nil.String(), "epoch_changed", 0)
		}
		if p := w.page(t, w.robin, 0, 0); p.SyncEpoch != w.epoch(t) {
			t.Fatalf("a page's sync_epoch = %s, want %s", p.SyncEpoch, w.epoch(t))
		}
		r := w.listEvents(t, w.robin, 0, 0, w.epoch(t).String())
		if r.Status != http.StatusOK {
			t.Fatalf("listEvents with the current epoch = %d; body %s", r.Status, r.Body)
		}
	})
}

// TestListEventsNewChannelInVisibleSpace: a channel created in Support after Alex's permission
// Scope was cached (Alex caught up, and creating a channel advances no permission_version) is
// delivered to Alex with its threads and messages; one in Marketing is not.
func TestListEventsNewChannelInVisibleSpace(t *testing.T) {
	t.Parallel()
	w := newSyncWorld(t)
	_, cursor := w.catchUp(t, w.alex, 0, 0)
	version, err := w.env.App.Versions().PermissionVersion(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	escalations := w.channel(t, w.owner, w.support, "escalations")
	th := w.thread(t, w.owner, escalations, "The printer is on fire")
	w.post(t, w.owner, th.Id, "Not literally")
	press := w.channel(t, w.owner, w.marketing, "press")
	w.thread(t, w.owner, press, "Launch day")
	if again, err := w.env.App.Versions().PermissionVersion(t.Context()); err != nil || again != version {
		t.Fatalf("permission_version moved from %d to %d (%v) by creating channels", version, again, err)
	}
	log := w.sharedAfter(t, cursor)
	got, _ := w.catchUp(t, w.alex, cursor, 0)
	want := storedWhere(log, inChannel(escalations))
	if len(want) != 4 {
		t.Fatalf("the new channel's events: %s", describe(want))
	}
	requireSameEvents(t, "Alex", got, want)
	got, _ = w.catchUp(t, w.sam, cursor, 0)
	requireSameEvents(t, "Sam", got, log)
}

// TestListEventsAfterRevoke: after Alex's grant on Support is revoked, no Support event is
// delivered to Alex, not even those written before the revoke that Alex had not fetched yet
// (permissions apply at delivery time); Alex still gets the grant's personal events, and Sam
// gets every Support event.
func TestListEventsAfterRevoke(t *testing.T) {
	t.Parallel()
	w := newSyncWorld(t)
	_, cursor := w.catchUp(t, w.alex, 0, 0)
	w.postPattern(t, "SSS")
	// Alex fetches one of the three before the revoke.
	p := w.page(t, w.alex, cursor, 1)
	if len(p.Events) != 1 || p.Events[0].Type != "message.created" {
		t.Fatalf("Alex's page before the revoke = %s", describeEnvelopes(p.Events))
	}
	cursor = p.NextCursor
	w.revoke(t, w.alexSupport)
	w.postPattern(t, "S")
	log := w.eventsAfter(t, cursor)
	got, _ := w.catchUp(t, w.alex, cursor, 1)
	want := storedWhere(log, func(e syncdomain.StoredEvent) bool { return e.AudienceID == w.alex.id })
	if len(want) != 2 || want[0].Type != "grant.revoked" || want[1].Type != "permissions.changed" {
		t.Fatalf("the revoke appended %s for Alex", describe(want))
	}
	requireSameEvents(t, "Alex", got, want)
	got, _ = w.catchUp(t, w.sam, cursor, 0)
	requireSameEvents(t, "Sam", got, storedWhere(log, inChannel(w.tickets)))
}

// TestListEventsRedacted: a deleted message's earlier events come redacted: true with the
// redacted payload (its ids only, exactly as the log stores it), message.deleted itself is
// not redacted, and no page holds the deleted text.
func TestListEventsRedacted(t *testing.T) {
	t.Parallel()
	w := newSyncWorld(t)
	h0 := w.head(t)
	m := w.post(t, w.owner, w.ticketThread, "The door code is 4711, @alex")
	w.must(t, w.owner, http.MethodPatch, "/api/v1/messages/"+m.Id.String(), `{"content_md":"The door code is 4712, @alex"}`, http.StatusOK, nil)
	w.must(t, w.owner, http.MethodDelete, "/api/v1/messages/"+m.Id.String(), "", http.StatusNoContent, nil)
	log := w.sharedAfter(t, h0)
	got, _ := w.catchUp(t, w.alex, h0, 0)
	requireSameEvents(t, "Alex", got, log)
	if len(got) != 3 {
		t.Fatalf("Alex got %s, want created, edited, deleted", describeEnvelopes(got))
	}
	for i, typ := range []string{"message.created", "message.edited", "message.deleted"} {
		e := got[i]
		if e.Type != typ || e.Resource.ID != m.Id || e.Redacted != (typ != "message.deleted") {
			t.Fatalf("event %d = %s redacted %v, want %s redacted %v", i, e.Type, e.Redacted, typ, typ != "message.deleted")
		}
		if !e.Redacted {
			continue
		}
		var payload map[string]any
		if err := json.Unmarshal(e.Payload, &payload); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"message_id": m.Id.String(), "thread_id": w.ticketThread.String(), "channel_id": w.tickets.String(), "author_id": w.owner.id.String()}
		if fmt.Sprint(payload) != fmt.Sprint(want) {
			t.Fatalf("the redacted %s carries %s, want only its ids %v", typ, e.Payload, want)
		}
	}
	r := w.listEvents(t, w.alex, h0, 0, "")
	if body := string(r.Body); strings.Contains(body, "4711") || strings.Contains(body, "4712") || strings.Contains(body, "content_md") {
		t.Fatalf("a page holds the deleted text: %s", body)
	}
}

// TestListEventsLimitCapped: limit above sync.catchup_page_size returns that many events at
// most, and so do a missing limit and one below 1; a smaller limit is honoured. Malformed
// parameters answer 400 validation_failed.
func TestListEventsLimitCapped(t *testing.T) {
	t.Parallel()
	const pageSize = 3
	w := newSyncWorld(t, wiretest.WithSetting(syncapp.KeyCatchUpPageSize, fmt.Sprint(pageSize)))
	h0 := w.head(t)
	w.postPattern(t, "MMMMMMMM")
	all := w.sharedAfter(t, h0)
	for _, limit := range []int{1000, pageSize + 1, 0, -5} {
		p := w.page(t, w.sam, h0, limit)
		if len(p.Events) != pageSize || p.NextCursor != all[pageSize-1].Seq {
			t.Fatalf("limit %d gave %v next %d, want the first %d events", limit, cuSeqs(p.Events), p.NextCursor, pageSize)
		}
	}
	if p := w.page(t, w.sam, h0, 2); len(p.Events) != 2 || p.NextCursor != all[1].Seq {
		t.Fatalf("limit 2 gave %v next %d", cuSeqs(p.Events), p.NextCursor)
	}
	got, _ := w.catchUp(t, w.sam, h0, 1000)
	requireSameEvents(t, "Sam", got, all)

	for _, query := range []string{"", "after=-1", "after=x", "after=1.5", "after=0&limit=x", "after=0&epoch=not-a-uuid"} {
		r := w.do(t, w.sam, http.MethodGet, "/api/v1/events?"+query, "")
		r.RequireProblem(t, http.StatusBadRequest, "validation_failed")
	}
}

// TestListEventsAppNeedsScope: an app without events:subscribe gets the answer authorize gives
// for an action the instance does not allow it (403 forbidden, the same body as for another
// such action), for listEvents and getSnapshot alike. With events:subscribe it catches up,
// and receives the messages of Support only when messages:read covers reading them too.
func TestListEventsAppNeedsScope(t *testing.T) {
	t.Parallel()
	w := newSyncWorld(t)
	reader := w.app(t, "Reader", "reader", "messages:read")
	listener := w.app(t, "Listener", "listener", "events:subscribe")
	subscriber := w.app(t, "Subscriber", "subscriber", "events:subscribe", "messages:read")
	for _, a := range []worldActor{reader, listener, subscriber} {
		w.grant(t, a, "space", w.support, "viewer")
	}
	h0 := w.head(t)
	w.postPattern(t, "SM")

	// The reference: an action on the instance the app's scopes do not cover and its role does
	// not allow.
	want := w.do(t, reader, http.MethodPost, "/api/v1/spaces", `{"name":"Reader's space"}`).RequireProblem(t, http.StatusForbidden, "forbidden")
	for _, path := range []string{eventsPath(0, 0, ""), "/api/v1/sync/snapshot"} {
		got := w.do(t, reader, http.MethodGet, path, "").RequireProblem(t, http.StatusForbidden, "forbidden")
		if got.Type != want.Type || got.Title != want.Title || got.Detail != want.Detail || len(got.Errors) != 0 {
			t.Fatalf("GET %s without events:subscribe = %+v, want the answer of an action not allowed %+v", path, got, want)
		}
	}

	log := w.eventsAfter(t, h0)
	got, _ := w.catchUp(t, subscriber, h0, 0)
	requireSameEvents(t, subscriber.name, got, storedWhere(log, inChannel(w.tickets)))
	got, _ = w.catchUp(t, listener, h0, 0)
	requireSameEvents(t, listener.name, got, nil)
	// Their own grant events reach both.
	for _, a := range []worldActor{listener, subscriber} {
		got, _ = w.catchUp(t, a, 0, 0)
		var mine int
		for _, e := range got {
			if e.Type == "grant.created" || e.Type == "permissions.changed" {
				mine++
			}
		}
		if mine != 2 {
			t.Fatalf("%s got %s, want its grant.created and permissions.changed", a.name, describeEnvelopes(got))
		}
	}
}

// TestEveryReceiveActionHasARule: for every broadcast event type of the register, the policy
// has a rule for its receive action on its resource kind, which catch-up and the gateway
// authorize (spec 02, spec 04). A type without one would reach no reader at all, as message
// events did before the rule thread.read on a message existed.
func TestEveryReceiveActionHasARule(t *testing.T) {
	t.Parallel()
	for _, typ := range syncdomain.Types() {
		if typ.Personal {
			continue
		}
		if _, ok := authzdomain.RuleFor(typ.ReceiveAction, typ.Resource); !ok {
			t.Errorf("%s: no policy rule for %s on %s, so no reader receives it", typ.Name, typ.ReceiveAction, typ.Resource)
		}
	}
}

// TestSyncPendingDevice: a token of a device that awaits approval gets 403 device_pending from
// listEvents and getSnapshot (personal events skip authorize, so catch-up must not hand them
// out either); once the device is approved, the same token catches up and loads snapshots.
func TestSyncPendingDevice(t *testing.T) {
	t.Parallel()
	w := newSyncWorld(t)
	w.readTo(t, w.sam, w.campaignThread, 1)
	var tok apigen.CreateTokenResponse
	w.must(t, w.owner, http.MethodPost, "/api/v1/principals/"+w.sam.id.String()+"/tokens", `{"device_name":"Sam's phone"}`, http.StatusCreated, &tok)
	if tok.DeviceId == nil {
		t.Fatal("a token with a device name has no device")
	}
	phone := worldActor{name: "Sam (pending phone)", id: w.sam.id, token: tok.Token}
	for _, path := range []string{eventsPath(0, 0, ""), "/api/v1/sync/snapshot"} {
		w.do(t, phone, http.MethodGet, path, "").RequireProblem(t, http.StatusForbidden, "device_pending")
	}
	w.must(t, w.owner, http.MethodPost, "/api/v1/devices/"+tok.DeviceId.String()+"/approve", "", http.StatusOK, nil)
	got, _ := w.catchUp(t, phone, 0, 0)
	if !slices.ContainsFunc(got, func(e cuEvent) bool { return e.Type == "read_state.updated" }) {
		t.Fatalf("the approved phone did not get Sam's read state: %s", describeEnvelopes(got))
	}
	w.snapshot(t, phone)
}
