package catchup

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
	"bothy.example.com/server/internal/e2e/e2etest"
	identityapp "bothy.example.com/server/internal/identity/app"
	syncpg "bothy.example.com/server/internal/sync/adapters/postgres"
	syncapp "bothy.example.com/server/internal/sync/app"
	syncdomain "bothy.example.com/server/internal/sync/domain"
	"bothy.example.com/server/internal/wiretest"
)

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
	w := e2etest.NewSyncWorld(t)
	h0 := w.Head(t)
	w.PostPattern(t, "SMMSMSSMMM")
	all := w.SharedAfter(t, h0)
	support := e2etest.StoredWhere(all, inChannel(w.Tickets))
	if len(support) != 4 || len(all) != 10 {
		t.Fatalf("the pattern appended %d events, %d in Support: %s", len(all), len(support), e2etest.Describe(all))
	}
	head := w.Head(t)

	got, cursor := w.CatchUp(t, w.Alex, h0, 2)
	e2etest.RequireSameEvents(t, "Alex", got, support)
	if cursor != head {
		t.Fatalf("Alex's catch-up ended at %d, want head_seq %d", cursor, head)
	}

	// The two Marketing events after the first Support event are passed over: the page after
	// it starts with the second Support event.
	p := w.Page(t, w.Alex, support[0].Seq, 1)
	if len(p.Events) != 1 || p.Events[0].Seq != support[1].Seq || p.NextCursor != support[1].Seq {
		t.Fatalf("the page after the first Support event (seq %d) = %v next_cursor %d, want only seq %d",
			support[0].Seq, e2etest.CatchUpSeqs(p.Events), p.NextCursor, support[1].Seq)
	}
	// The Marketing run at the end: an empty page whose cursor is the head, a Marketing seq.
	p = w.Page(t, w.Alex, support[3].Seq, 2)
	if len(p.Events) != 0 || p.NextCursor != head || head == support[3].Seq {
		t.Fatalf("the page after the last Support event = %v next_cursor %d, want none and the head %d", e2etest.CatchUpSeqs(p.Events), p.NextCursor, head)
	}

	got, cursor = w.CatchUp(t, w.Sam, h0, 3)
	e2etest.RequireSameEvents(t, "Sam", got, all)
	if cursor != head {
		t.Fatalf("Sam's catch-up ended at %d, want %d", cursor, head)
	}

	p = w.Page(t, w.Robin, h0, 2)
	if len(p.Events) != 0 || p.NextCursor != head || p.HeadSeq != head {
		t.Fatalf("Robin's page = %v next_cursor %d head %d, want no event and the head %d", e2etest.CatchUpSeqs(p.Events), p.NextCursor, p.HeadSeq, head)
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
		w := e2etest.NewSyncWorld(t)
		h0 := w.Head(t)
		w.PostPattern(t, "MMMMMMMM")
		all := w.SharedAfter(t, h0)
		head := w.Head(t)
		after := h0
		for i, want := range [][]int{{0, 1, 2}, {3, 4, 5}, {6, 7}} {
			p := w.Page(t, w.Sam, after, 3)
			var wantSeqs []int64
			for _, k := range want {
				wantSeqs = append(wantSeqs, all[k].Seq)
			}
			wantCursor := wantSeqs[len(wantSeqs)-1]
			if len(want) < 3 {
				wantCursor = head
			}
			if !slices.Equal(e2etest.CatchUpSeqs(p.Events), wantSeqs) || p.NextCursor != wantCursor {
				t.Fatalf("Sam's page %d after %d = %v next_cursor %d, want %v next_cursor %d", i, after, e2etest.CatchUpSeqs(p.Events), p.NextCursor, wantSeqs, wantCursor)
			}
			after = p.NextCursor
		}

		// Alex: a full page of one Support event ends at that event, although Marketing
		// events follow it; the last page delivers nothing and ends at the head.
		h1 := w.Head(t)
		w.PostPattern(t, "SMSMM")
		support := e2etest.StoredWhere(w.EventsAfter(t, h1), inChannel(w.Tickets))
		head = w.Head(t)
		after = h1
		for _, want := range []int64{support[0].Seq, support[1].Seq} {
			p := w.Page(t, w.Alex, after, 1)
			if len(p.Events) != 1 || p.Events[0].Seq != want || p.NextCursor != want {
				t.Fatalf("Alex's full page after %d = %v next_cursor %d, want seq %d as both", after, e2etest.CatchUpSeqs(p.Events), p.NextCursor, want)
			}
			after = p.NextCursor
		}
		if p := w.Page(t, w.Alex, after, 1); len(p.Events) != 0 || p.NextCursor != head {
			t.Fatalf("Alex's last page = %v next_cursor %d, want none ending at the head %d", e2etest.CatchUpSeqs(p.Events), p.NextCursor, head)
		}
	})

	t.Run("scan window", func(t *testing.T) {
		t.Parallel()
		const window = 4
		w := e2etest.NewSyncWorld(t, wiretest.WithSetting(syncapp.KeyCatchUpScanWindow, fmt.Sprint(window)))
		h0 := w.Head(t)
		w.PostPattern(t, "SMMMMMMMMMMS")
		support := e2etest.StoredWhere(w.EventsAfter(t, h0), inChannel(w.Tickets))
		head := w.Head(t)
		var got []e2etest.CatchUpEvent
		after := h0
		for after < head {
			p := w.Page(t, w.Alex, after, 0)
			if want := min(after+window, head); p.NextCursor != want {
				t.Fatalf("a page after %d ends at %d, want the end of its scan window %d", after, p.NextCursor, want)
			}
			got = append(got, p.Events...)
			after = p.NextCursor
		}
		e2etest.RequireSameEvents(t, "Alex", got, support)
		// Sam sees every seq but the owner's own read states: the first window of 4 seqs
		// gives him the shared events among them.
		inWindow := e2etest.StoredWhere(w.SharedAfter(t, h0), func(e syncdomain.StoredEvent) bool { return e.Seq <= h0+window })
		p := w.Page(t, w.Sam, h0, 0)
		if !slices.Equal(e2etest.CatchUpSeqs(p.Events), e2etest.StoredSeqs(inWindow)) || len(inWindow) == 0 || p.NextCursor != h0+window {
			t.Fatalf("Sam's first page = %v next_cursor %d, want %v ending at %d", e2etest.CatchUpSeqs(p.Events), p.NextCursor, e2etest.StoredSeqs(inWindow), h0+window)
		}
	})
}

// TestListEventsPersonalAudience: Sam's read state, draft, setting and sidebar events (the
// read state and the draft placed in Support, which Alex reads) reach Sam only; Alex's read
// state reaches Alex only; the owner, who reads everything, gets neither.
func TestListEventsPersonalAudience(t *testing.T) {
	t.Parallel()
	w := e2etest.NewSyncWorld(t)
	h0 := w.Head(t)
	w.ReadTo(t, w.Sam, w.TicketThread, 1)
	w.Must(t, w.Sam, http.MethodPut, "/api/v1/channels/"+w.Tickets.String()+"/draft", `{"content_md":"Half a reply"}`, http.StatusOK, nil)
	w.Must(t, w.Sam, http.MethodPut, "/api/v1/me/settings/theme", `{"value":"dark"}`, http.StatusOK, nil)
	w.Must(t, w.Sam, http.MethodPut, "/api/v1/me/sidebar", `{"sections":[]}`, http.StatusOK, nil)
	w.ReadTo(t, w.Alex, w.TicketThread, 1)
	all := w.EventsAfter(t, h0)
	if len(all) != 5 || all[0].Type != "read_state.updated" || all[0].ChannelID != w.Tickets || all[0].SpaceID != w.Support || all[0].AudienceID != w.Sam.ID {
		t.Fatalf("the writes appended %s, want Sam's read state in Support first", e2etest.Describe(all))
	}
	for _, a := range []e2etest.Actor{w.Alex, w.Sam, w.Robin, w.Owner} {
		got, _ := w.CatchUp(t, a, h0, 0)
		e2etest.RequireSameEvents(t, a.Name, got, e2etest.StoredWhere(all, func(e syncdomain.StoredEvent) bool { return e.AudienceID == a.ID }))
	}
	// From the start of the log, too: no personal event of anyone else, ever.
	byID := map[uuid.UUID]syncdomain.StoredEvent{}
	for _, e := range w.EventsAfter(t, 0) {
		byID[e.ID] = e
	}
	for _, a := range []e2etest.Actor{w.Alex, w.Sam, w.Robin, w.Owner} {
		got, _ := w.CatchUp(t, a, 0, 0)
		for _, e := range got {
			if s := byID[e.ID]; s.AudienceID != uuid.Nil && s.AudienceID != a.ID {
				t.Fatalf("%s received %s (seq %d) of %s", a.Name, e.Type, e.Seq, s.AudienceID)
			}
		}
	}
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
		w := e2etest.NewSyncWorld(t, wiretest.WithSetting(syncpg.EventRetention, "24h"), wiretest.WithSetting(identityapp.KeyTokenTTL, "0s"))
		w.PostPattern(t, "SMS")
		dropped := w.Head(t)
		if p := w.Page(t, w.Sam, 0, 1); p.OldestSeq != 0 {
			t.Fatalf("oldest_seq before retention = %d, want 0", p.OldestSeq)
		}
		// Every event so far was written now (the database's clock); two days of
		// sync.partition_interval later, their partition is past the retention of a day.
		w.Env.Clock.Set(time.Now().Add(72 * time.Hour))
		rep, err := w.Env.App.Maintain(t.Context())
		if err != nil {
			t.Fatalf("Maintain: %v", err)
		}
		if len(rep.Dropped) == 0 || rep.HorizonSeq != dropped {
			t.Fatalf("Maintain = %+v, want partitions dropped up to seq %d", rep, dropped)
		}
		if got := w.EventsAfter(t, 0); len(got) != 0 {
			t.Fatalf("the log still holds %s", e2etest.Describe(got))
		}
		for _, after := range []int64{0, 1, dropped - 1} {
			w.RequireResync(t, w.Sam, after, "", "retention", dropped)
		}
		w.RequireResync(t, w.Sam, 0, w.Epoch(t).String(), "retention", dropped)

		// The oldest cursor still served is served: empty now, then the new events.
		p := w.Page(t, w.Sam, dropped, 0)
		if len(p.Events) != 0 || p.NextCursor != dropped || p.OldestSeq != dropped {
			t.Fatalf("the page after oldest_seq = %v next %d oldest %d", e2etest.CatchUpSeqs(p.Events), p.NextCursor, p.OldestSeq)
		}
		w.PostPattern(t, "MS")
		got, cursor := w.CatchUp(t, w.Sam, dropped, 1)
		e2etest.RequireSameEvents(t, "Sam", got, w.SharedAfter(t, dropped))
		if len(got) != 2 || cursor != w.Head(t) {
			t.Fatalf("Sam after retention got %s up to %d", e2etest.DescribeEnvelopes(got), cursor)
		}
		if p := w.Page(t, w.Alex, dropped, 0); p.OldestSeq != dropped {
			t.Fatalf("oldest_seq after retention = %d, want %d", p.OldestSeq, dropped)
		}
		w.RequireResync(t, w.Alex, dropped-1, "", "retention", dropped)
	})

	t.Run("too_far_behind", func(t *testing.T) {
		t.Parallel()
		const maxEvents = 3
		w := e2etest.NewSyncWorld(t, wiretest.WithSetting(syncapp.KeyCatchUpMaxEvents, fmt.Sprint(maxEvents)))
		head := w.Head(t)
		for _, after := range []int64{0, head - maxEvents - 1} {
			w.RequireResync(t, w.Sam, after, "", "too_far_behind", 0)
		}
		got, cursor := w.CatchUp(t, w.Sam, head-maxEvents, 0)
		if cursor != head || len(got) == 0 {
			t.Fatalf("a cursor exactly sync.catchup_max_events behind got %s up to %d", e2etest.DescribeEnvelopes(got), cursor)
		}
	})

	t.Run("cursor_ahead", func(t *testing.T) {
		t.Parallel()
		w := e2etest.NewSyncWorld(t)
		head := w.Head(t)
		for _, after := range []int64{head + 1, head + 1000} {
			w.RequireResync(t, w.Alex, after, "", "cursor_ahead", 0)
		}
		w.RequireResync(t, w.Alex, head+1, w.Epoch(t).String(), "cursor_ahead", 0)
		if p := w.Page(t, w.Alex, head, 0); len(p.Events) != 0 || p.NextCursor != head {
			t.Fatalf("the page at the head = %v next %d", e2etest.CatchUpSeqs(p.Events), p.NextCursor)
		}
	})

	t.Run("epoch_changed", func(t *testing.T) {
		t.Parallel()
		w := e2etest.NewSyncWorld(t)
		head := w.Head(t)
		other := uuid.NewString()
		// The epoch is checked first: it wins over a cursor ahead of the head.
		for _, after := range []int64{0, head, head + 1} {
			w.RequireResync(t, w.Robin, after, other, "epoch_changed", 0)
		}
		// The nil UUID is a well-formed epoch that is not the instance's: epoch_changed too,
		// never "no epoch given" (the gateway's resume answers the same).
		for _, after := range []int64{0, head} {
			w.RequireResync(t, w.Robin, after, uuid.Nil.String(), "epoch_changed", 0)
		}
		if p := w.Page(t, w.Robin, 0, 0); p.SyncEpoch != w.Epoch(t) {
			t.Fatalf("a page's sync_epoch = %s, want %s", p.SyncEpoch, w.Epoch(t))
		}
		r := w.ListEvents(t, w.Robin, 0, 0, w.Epoch(t).String())
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
	w := e2etest.NewSyncWorld(t)
	_, cursor := w.CatchUp(t, w.Alex, 0, 0)
	version, err := w.Env.App.Versions().PermissionVersion(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	escalations := w.Channel(t, w.Owner, w.Support, "escalations")
	th := w.Thread(t, w.Owner, escalations, "The printer is on fire")
	w.Post(t, w.Owner, th.Id, "Not literally")
	press := w.Channel(t, w.Owner, w.Marketing, "press")
	w.Thread(t, w.Owner, press, "Launch day")
	if again, err := w.Env.App.Versions().PermissionVersion(t.Context()); err != nil || again != version {
		t.Fatalf("permission_version moved from %d to %d (%v) by creating channels", version, again, err)
	}
	log := w.SharedAfter(t, cursor)
	got, _ := w.CatchUp(t, w.Alex, cursor, 0)
	want := e2etest.StoredWhere(log, inChannel(escalations))
	if len(want) != 4 {
		t.Fatalf("the new channel's events: %s", e2etest.Describe(want))
	}
	e2etest.RequireSameEvents(t, "Alex", got, want)
	got, _ = w.CatchUp(t, w.Sam, cursor, 0)
	e2etest.RequireSameEvents(t, "Sam", got, log)
}

// TestListEventsAfterRevoke: after Alex's grant on Support is revoked, no Support event is
// delivered to Alex, not even those written before the revoke that Alex had not fetched yet
// (permissions apply at delivery time); Alex still gets the grant's personal events, and Sam
// gets every Support event.
func TestListEventsAfterRevoke(t *testing.T) {
	t.Parallel()
	w := e2etest.NewSyncWorld(t)
	_, cursor := w.CatchUp(t, w.Alex, 0, 0)
	w.PostPattern(t, "SSS")
	// Alex fetches one of the three before the revoke.
	p := w.Page(t, w.Alex, cursor, 1)
	if len(p.Events) != 1 || p.Events[0].Type != "message.created" {
		t.Fatalf("Alex's page before the revoke = %s", e2etest.DescribeEnvelopes(p.Events))
	}
	cursor = p.NextCursor
	w.Revoke(t, w.AlexSupport)
	w.PostPattern(t, "S")
	log := w.EventsAfter(t, cursor)
	got, _ := w.CatchUp(t, w.Alex, cursor, 1)
	want := e2etest.StoredWhere(log, func(e syncdomain.StoredEvent) bool { return e.AudienceID == w.Alex.ID })
	if len(want) != 2 || want[0].Type != "grant.revoked" || want[1].Type != "permissions.changed" {
		t.Fatalf("the revoke appended %s for Alex", e2etest.Describe(want))
	}
	e2etest.RequireSameEvents(t, "Alex", got, want)
	got, _ = w.CatchUp(t, w.Sam, cursor, 0)
	e2etest.RequireSameEvents(t, "Sam", got, e2etest.StoredWhere(log, inChannel(w.Tickets)))
}

// TestListEventsRedacted: a deleted message's earlier events come redacted: true with the
// redacted payload (its ids only, exactly as the log stores it), message.deleted itself is
// not redacted, and no page holds the deleted text.
func TestListEventsRedacted(t *testing.T) {
	t.Parallel()
	w := e2etest.NewSyncWorld(t)
	h0 := w.Head(t)
	m := w.Post(t, w.Owner, w.TicketThread, "The door code is 4711, @alex")
	w.Must(t, w.Owner, http.MethodPatch, "/api/v1/messages/"+m.Id.String(), `{"content_md":"The door code is 4712, @alex"}`, http.StatusOK, nil)
	w.Must(t, w.Owner, http.MethodDelete, "/api/v1/messages/"+m.Id.String(), "", http.StatusNoContent, nil)
	log := w.SharedAfter(t, h0)
	got, _ := w.CatchUp(t, w.Alex, h0, 0)
	e2etest.RequireSameEvents(t, "Alex", got, log)
	if len(got) != 3 {
		t.Fatalf("Alex got %s, want created, edited, deleted", e2etest.DescribeEnvelopes(got))
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
		want := map[string]any{"message_id": m.Id.String(), "thread_id": w.TicketThread.String(), "channel_id": w.Tickets.String(), "author_id": w.Owner.ID.String()}
		if fmt.Sprint(payload) != fmt.Sprint(want) {
			t.Fatalf("the redacted %s carries %s, want only its ids %v", typ, e.Payload, want)
		}
	}
	r := w.ListEvents(t, w.Alex, h0, 0, "")
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
	w := e2etest.NewSyncWorld(t, wiretest.WithSetting(syncapp.KeyCatchUpPageSize, fmt.Sprint(pageSize)))
	h0 := w.Head(t)
	w.PostPattern(t, "MMMMMMMM")
	all := w.SharedAfter(t, h0)
	for _, limit := range []int{1000, pageSize + 1, 0, -5} {
		p := w.Page(t, w.Sam, h0, limit)
		if len(p.Events) != pageSize || p.NextCursor != all[pageSize-1].Seq {
			t.Fatalf("limit %d gave %v next %d, want the first %d events", limit, e2etest.CatchUpSeqs(p.Events), p.NextCursor, pageSize)
		}
	}
	if p := w.Page(t, w.Sam, h0, 2); len(p.Events) != 2 || p.NextCursor != all[1].Seq {
		t.Fatalf("limit 2 gave %v next %d", e2etest.CatchUpSeqs(p.Events), p.NextCursor)
	}
	got, _ := w.CatchUp(t, w.Sam, h0, 1000)
	e2etest.RequireSameEvents(t, "Sam", got, all)

	for _, query := range []string{"", "after=-1", "after=x", "after=1.5", "after=0&limit=x", "after=0&epoch=not-a-uuid"} {
		r := w.Do(t, w.Sam, http.MethodGet, "/api/v1/events?"+query, "")
		r.RequireProblem(t, http.StatusBadRequest, "validation_failed")
	}
}

// TestListEventsAppNeedsScope: an app without events:subscribe gets the answer authorize gives
// for an action the instance does not allow it (403 forbidden, the same body as for another
// such action), for ListEvents and getSnapshot alike. With events:subscribe it catches up,
// and receives the messages of Support only when messages:read covers reading them too.
func TestListEventsAppNeedsScope(t *testing.T) {
	t.Parallel()
	w := e2etest.NewSyncWorld(t)
	reader := w.App(t, "Reader", "reader", "messages:read")
	listener := w.App(t, "Listener", "listener", "events:subscribe")
	subscriber := w.App(t, "Subscriber", "subscriber", "events:subscribe", "messages:read")
	for _, a := range []e2etest.Actor{reader, listener, subscriber} {
		w.Grant(t, a, "space", w.Support, "viewer")
	}
	h0 := w.Head(t)
	w.PostPattern(t, "SM")

	// The reference: an action on the instance the app's scopes do not cover and its role does
	// not allow.
	want := w.Do(t, reader, http.MethodPost, "/api/v1/spaces", `{"name":"Reader's space"}`).RequireProblem(t, http.StatusForbidden, "forbidden")
	for _, path := range []string{e2etest.EventsPath(0, 0, ""), "/api/v1/sync/snapshot"} {
		got := w.Do(t, reader, http.MethodGet, path, "").RequireProblem(t, http.StatusForbidden, "forbidden")
		if got.Type != want.Type || got.Title != want.Title || got.Detail != want.Detail || len(got.Errors) != 0 {
			t.Fatalf("GET %s without events:subscribe = %+v, want the answer of an action not allowed %+v", path, got, want)
		}
	}

	log := w.EventsAfter(t, h0)
	got, _ := w.CatchUp(t, subscriber, h0, 0)
	e2etest.RequireSameEvents(t, subscriber.Name, got, e2etest.StoredWhere(log, inChannel(w.Tickets)))
	got, _ = w.CatchUp(t, listener, h0, 0)
	e2etest.RequireSameEvents(t, listener.Name, got, nil)
	// Their own grant events reach both.
	for _, a := range []e2etest.Actor{listener, subscriber} {
		got, _ = w.CatchUp(t, a, 0, 0)
		var mine int
		for _, e := range got {
			if e.Type == "grant.created" || e.Type == "permissions.changed" {
				mine++
			}
		}
		if mine != 2 {
			t.Fatalf("%s got %s, want its grant.created and permissions.changed", a.Name, e2etest.DescribeEnvelopes(got))
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
// ListEvents and getSnapshot (personal events skip authorize, so catch-up must not hand them
// out either); once the device is approved, the same token catches up and loads snapshots.
func TestSyncPendingDevice(t *testing.T) {
	t.Parallel()
	w := e2etest.NewSyncWorld(t)
	w.ReadTo(t, w.Sam, w.CampaignThread, 1)
	var tok apigen.CreateTokenResponse
	w.Must(t, w.Owner, http.MethodPost, "/api/v1/principals/"+w.Sam.ID.String()+"/tokens", `{"device_name":"Sam's phone"}`, http.StatusCreated, &tok)
	if tok.DeviceId == nil {
		t.Fatal("a token with a device name has no device")
	}
	phone := e2etest.Actor{Name: "Sam (pending phone)", ID: w.Sam.ID, Token: tok.Token}
	for _, path := range []string{e2etest.EventsPath(0, 0, ""), "/api/v1/sync/snapshot"} {
		w.Do(t, phone, http.MethodGet, path, "").RequireProblem(t, http.StatusForbidden, "device_pending")
	}
	w.Must(t, w.Owner, http.MethodPost, "/api/v1/devices/"+tok.DeviceId.String()+"/approve", "", http.StatusOK, nil)
	got, _ := w.CatchUp(t, phone, 0, 0)
	if !slices.ContainsFunc(got, func(e e2etest.CatchUpEvent) bool { return e.Type == "read_state.updated" }) {
		t.Fatalf("the approved phone did not get Sam's read state: %s", e2etest.DescribeEnvelopes(got))
	}
	w.Snapshot(t, phone)
}
