package snapshot

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/e2e/e2etest"
	syncdomain "bothy.example.com/server/internal/sync/domain"
)

// The integration tests of the snapshot (GET /api/v1/sync/snapshot, spec 03 "Snapshot").

var azp5Seed = flag.Uint64("wire.azp5.seed", 0, "seed of TestAZP5SnapshotNoForeignChannel (0: from the clock)")

// azp5Worlds is how many random worlds TestAZP5SnapshotNoForeignChannel builds: few enough
// for make test, each with its own database.
const azp5Worlds = 8

// TestSnapshotContents builds a world with spaces (one archived, one Sam cannot read),
// channels (one archived), threads, read states, mentions, a direct message, drafts,
// settings, a sidebar, an agent and feature flags, and checks every part of Sam's snapshot
// against what the other operations answer Sam and what the world holds.
func TestSnapshotContents(t *testing.T) {
	t.Parallel()
	w := e2etest.NewSyncWorld(t)
	ctx := t.Context()
	sam := w.Sam

	// Not in Sam's snapshot: an archived space (with a channel Sam reads and drafted in), an
	// archived channel of Marketing, and a space Sam cannot read.
	archive := w.Space(t, "Archive")
	old := w.Channel(t, w.Owner, archive, "old")
	w.Grant(t, sam, "channel", old, "member")
	w.Must(t, sam, http.MethodPut, "/api/v1/channels/"+old.String()+"/draft", `{"content_md":"Never sent"}`, http.StatusOK, nil)
	w.Must(t, w.Owner, http.MethodPost, "/api/v1/spaces/"+archive.String()+"/archive", "", http.StatusOK, nil)
	retired := w.Channel(t, w.Owner, w.Marketing, "retired")
	w.Must(t, sam, http.MethodPut, "/api/v1/channels/"+retired.String()+"/draft", `{"content_md":"Also never sent"}`, http.StatusOK, nil)
	w.Must(t, w.Owner, http.MethodPost, "/api/v1/channels/"+retired.String()+"/archive", "", http.StatusOK, nil)
	finance := w.Space(t, "Finance")
	ledger := w.Channel(t, w.Owner, finance, "ledger")
	w.Thread(t, w.Owner, ledger, "Quarterly numbers, @sam")

	// Unread: the campaign thread has a mention of Sam and one more message after Sam's read
	// position; the ticket thread mentions Sam too, but Sam read all of it; the direct message
	// from Alex mentions Sam and is unread.
	w.Post(t, w.Owner, w.CampaignThread, "@sam please review the copy")
	w.Post(t, w.Owner, w.CampaignThread, "And the banner")
	w.ReadTo(t, sam, w.CampaignThread, 1)
	w.Post(t, w.Owner, w.TicketThread, "Fixed, @sam")
	w.ReadTo(t, sam, w.TicketThread, 2)
	dm := w.DM(t, w.Alex, sam)
	dmThread := w.Thread(t, w.Alex, dm, "@sam lunch?").Id

	// Drafts, settings, the sidebar (naming channels Sam cannot read), an agent and flags.
	w.Must(t, sam, http.MethodPut, "/api/v1/channels/"+w.Campaigns.String()+"/draft", `{"content_md":"First try"}`, http.StatusOK, nil)
	w.Must(t, sam, http.MethodPut, "/api/v1/channels/"+w.Campaigns.String()+"/draft", `{"content_md":"Second try"}`, http.StatusOK, nil)
	w.Must(t, sam, http.MethodPut, "/api/v1/channels/"+w.Tickets.String()+"/draft", fmt.Sprintf(`{"content_md":"On it","thread_id":%q}`, w.TicketThread), http.StatusOK, nil)
	w.Must(t, sam, http.MethodPut, "/api/v1/me/settings/theme", `{"value":"dark"}`, http.StatusOK, nil)
	w.Must(t, sam, http.MethodPut, "/api/v1/me/settings/theme", `{"value":"light"}`, http.StatusOK, nil)
	w.Must(t, sam, http.MethodPut, "/api/v1/me/settings/locale", `{"value":{"language":"en"}}`, http.StatusOK, nil)
	random := uuid.New()
	w.Must(t, sam, http.MethodPut, "/api/v1/me/sidebar", fmt.Sprintf(
		`{"sections":[{"key":"work","title":"Work","collapsed":false,"channel_ids":[%q,%q,%q,%q,%q]},{"key":"gone","title":"Gone","collapsed":true,"channel_ids":[%q]}]}`,
		w.Campaigns, ledger, dm, random, old, ledger), http.StatusOK, nil)
	helper := w.Agent(t, "Helper", "helper")
	if _, err := w.Env.App.Ports().Flags.Define(ctx, "threads.v2", "Threaded replies", false); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Env.App.Ports().Flags.SetOverride(ctx, "threads.v2", e2etest.FlagTarget(t, "principal:"+sam.ID.String()), true); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Env.App.Ports().Flags.Define(ctx, "search.beta", "The new search", true); err != nil {
		t.Fatal(err)
	}

	s, _ := w.Snapshot(t, sam)
	version, err := w.Env.App.Versions().PermissionVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.HeadSeq != w.Head(t) || s.SyncEpoch != w.Epoch(t) || s.PermissionVersion != version || s.IsOwner {
		t.Fatalf("head %d, epoch %s, permission version %d, owner %v; want %d, %s, %d, false",
			s.HeadSeq, s.SyncEpoch, s.PermissionVersion, s.IsOwner, w.Head(t), w.Epoch(t), version)
	}
	if want := (apigen.PrincipalRef{Id: sam.ID, Kind: "person", DisplayName: "Sam", Handle: "sam"}); s.Principal != want {
		t.Fatalf("principal = %+v, want %+v", s.Principal, want)
	}
	var inst apigen.InstanceInfo
	w.Must(t, sam, http.MethodGet, "/api/v1/instance", "", http.StatusOK, &inst)
	if s.Instance != inst {
		t.Fatalf("instance = %+v, want getInstance's %+v", s.Instance, inst)
	}

	// Spaces and channels: exactly what listSpaces and listSpaceChannels show Sam, and the
	// direct message.
	var spaces apigen.SpaceViewList
	w.Must(t, sam, http.MethodGet, "/api/v1/spaces", "", http.StatusOK, &spaces)
	if !reflect.DeepEqual(s.Spaces, spaces.Items) {
		t.Fatalf("spaces = %+v, want listSpaces' %+v", s.Spaces, spaces.Items)
	}
	if names := spaceNames(s.Spaces); !slices.Equal(names, []string{"Marketing", "Support"}) {
		t.Fatalf("Sam's spaces are %v", names)
	}
	want := map[uuid.UUID]apigen.ChannelView{}
	for _, sp := range s.Spaces {
		var list apigen.ChannelViewList
		w.Must(t, sam, http.MethodGet, "/api/v1/spaces/"+sp.Id.String()+"/channels", "", http.StatusOK, &list)
		for _, c := range list.Items {
			want[c.Id] = c
		}
	}
	if len(s.Channels) != len(want)+1 {
		t.Fatalf("%d channels, want the %d of listSpaceChannels and the direct message: %+v", len(s.Channels), len(want), s.Channels)
	}
	for _, c := range s.Channels {
		if c.Id == dm {
			if c.Kind != "dm" || c.SpaceId != nil || c.Level != "member" || fmt.Sprint(c.ParticipantIds) != fmt.Sprint(sortedUUIDs(w.Alex.ID, sam.ID)) {
				t.Fatalf("the direct message = %+v", c)
			}
			continue
		}
		if !reflect.DeepEqual(c, want[c.Id]) {
			t.Fatalf("channel %s = %+v, want listSpaceChannels' %+v", c.Id, c, want[c.Id])
		}
	}
	if !slices.IsSortedFunc(s.Channels, func(a, b apigen.ChannelView) int {
		if c := strings.Compare(deref(a.Name), deref(b.Name)); c != 0 {
			return c
		}
		return bytes.Compare(a.Id[:], b.Id[:])
	}) {
		t.Fatalf("channels are not by name, then id: %+v", s.Channels)
	}

	// The sidebar without the ids Sam cannot read; sections stay.
	wantSidebar := apigen.SidebarState{Version: 1, Sections: []apigen.SidebarSection{
		{Key: "work", Title: "Work", ChannelIds: []uuid.UUID{w.Campaigns, dm}},
		{Key: "gone", Title: "Gone", Collapsed: true, ChannelIds: []uuid.UUID{}},
	}}
	if !reflect.DeepEqual(s.Sidebar, wantSidebar) {
		t.Fatalf("sidebar = %+v, want %+v", s.Sidebar, wantSidebar)
	}

	// Unread threads: the campaign thread (3 messages, read to 1, one mention above it) and
	// the direct message's thread; the ticket thread is read; the ledger thread is Finance's.
	marketing := w.Marketing
	wantUnread := []apigen.UnreadThread{
		{ThreadId: w.CampaignThread, ChannelId: w.Campaigns, SpaceId: &marketing, LastMessageSeq: 3, LastReadSeq: 1, UnreadCount: 2, MentionCount: 1},
		{ThreadId: dmThread, ChannelId: dm, LastMessageSeq: 1, LastReadSeq: 0, UnreadCount: 1, MentionCount: 1},
	}
	slices.SortFunc(wantUnread, func(a, b apigen.UnreadThread) int {
		if c := bytes.Compare(a.ChannelId[:], b.ChannelId[:]); c != 0 {
			return c
		}
		return bytes.Compare(a.ThreadId[:], b.ThreadId[:])
	})
	if !reflect.DeepEqual(s.UnreadThreads, wantUnread) {
		t.Fatalf("unread threads =\n %s\nwant\n %s", jsonOf(t, s.UnreadThreads), jsonOf(t, wantUnread))
	}

	if len(s.ActiveRuns) != 0 {
		t.Fatalf("active runs = %+v, want none: nobody started a run (runs_test.go checks active_runs)", s.ActiveRuns)
	}
	wantAgents := []apigen.AgentPresence{{Agent: apigen.PrincipalRef{Id: helper.ID, Kind: "agent", DisplayName: "Helper", Handle: "helper"}, State: "unknown"}}
	if !reflect.DeepEqual(s.Agents, wantAgents) {
		t.Fatalf("agents = %+v, want %+v", s.Agents, wantAgents)
	}
	if got := jsonOf(t, s.Settings); got != `[{"key":"locale","value":{"language":"en"},"version":1},{"key":"theme","value":"light","version":2}]` {
		t.Fatalf("settings = %s", got)
	}
	ticketThread := w.TicketThread
	wantDrafts := []apigen.DraftRef{{ChannelId: w.Campaigns, Version: 2}, {ChannelId: w.Tickets, ThreadId: &ticketThread, Version: 1}}
	if !sameElements(s.Drafts, wantDrafts) {
		t.Fatalf("drafts = %s, want %s in any order", jsonOf(t, s.Drafts), jsonOf(t, wantDrafts))
	}
	features := map[string]bool{}
	for _, f := range s.Features {
		features[f.Key] = f.Enabled
	}
	if !features["threads.v2"] || !features["search.beta"] || !slices.IsSortedFunc(s.Features, func(a, b apigen.EvaluatedFlag) int { return strings.Compare(a.Key, b.Key) }) {
		t.Fatalf("features = %+v, want threads.v2 (Sam's override) and search.beta on, by key", s.Features)
	}

	// The others: Alex has no override; Robin reads nothing; the owner reads every space
	// that is not archived.
	a, _ := w.Snapshot(t, w.Alex)
	for _, f := range a.Features {
		if f.Key == "threads.v2" && f.Enabled {
			t.Fatal("Alex got Sam's override of threads.v2")
		}
	}
	if names := spaceNames(a.Spaces); !slices.Equal(names, []string{"Support"}) {
		t.Fatalf("Alex's spaces are %v", names)
	}
	r, _ := w.Snapshot(t, w.Robin)
	if len(r.Spaces) != 0 || len(r.Channels) != 0 || len(r.UnreadThreads) != 0 || len(r.Drafts) != 0 || r.IsOwner {
		t.Fatalf("Robin's snapshot = %s", jsonOf(t, r))
	}
	o, _ := w.Snapshot(t, w.Owner)
	if names := spaceNames(o.Spaces); !o.IsOwner || !slices.Equal(names, []string{"Finance", "Marketing", "Support"}) {
		t.Fatalf("the owner's snapshot: owner %v, spaces %v", o.IsOwner, names)
	}
}

// TestSnapshotETagAndCacheControl: a snapshot answers a strong ETag and Cache-Control
// private, no-store; the same state gives the same tag; If-None-Match naming it (alone, in a
// list, weak, or *) answers 304 with the tag and no body; a stale tag answers 200; any event
// of the instance changes the tag.
func TestSnapshotETagAndCacheControl(t *testing.T) {
	t.Parallel()
	w := e2etest.NewSyncWorld(t)
	_, r := w.Snapshot(t, w.Sam)
	tag := r.Header.Get("ETag")
	if _, again := w.Snapshot(t, w.Sam); again.Header.Get("ETag") != tag || !bytes.Equal(again.Body, r.Body) {
		t.Fatalf("the same state gave tags %s and %s", tag, again.Header.Get("ETag"))
	}
	for _, inm := range []string{tag, `"stale", ` + tag, "*", "W/" + tag} {
		got := w.Do(t, w.Sam, http.MethodGet, "/api/v1/sync/snapshot", "", "If-None-Match", inm)
		if got.Status != http.StatusNotModified || got.Header.Get("ETag") != tag || len(got.Body) != 0 ||
			got.Header.Get("Cache-Control") != e2etest.SyncCacheControl {
			t.Fatalf("If-None-Match %s = %d, ETag %q, Cache-Control %q, body %q; want 304 with the tag and no body",
				inm, got.Status, got.Header.Get("ETag"), got.Header.Get("Cache-Control"), got.Body)
		}
	}
	got := w.Must(t, w.Sam, http.MethodGet, "/api/v1/sync/snapshot", "", http.StatusOK, nil, "If-None-Match", `"stale"`)
	if got.Header.Get("ETag") != tag {
		t.Fatalf("a stale If-None-Match got tag %s, want %s", got.Header.Get("ETag"), tag)
	}
	// An event Sam cannot see still moves head_seq, so the tag.
	w.Must(t, w.Robin, http.MethodPut, "/api/v1/me/settings/theme", `{"value":"dark"}`, http.StatusOK, nil)
	got = w.Must(t, w.Sam, http.MethodGet, "/api/v1/sync/snapshot", "", http.StatusOK, nil, "If-None-Match", tag)
	if got.Header.Get("ETag") == tag || got.Header.Get("Cache-Control") != e2etest.SyncCacheControl {
		t.Fatalf("after an event: ETag %s (was %s), Cache-Control %q", got.Header.Get("ETag"), tag, got.Header.Get("Cache-Control"))
	}
	// Another reader's tag differs.
	if _, ra := w.Snapshot(t, w.Alex); ra.Header.Get("ETag") == got.Header.Get("ETag") {
		t.Fatal("Alex's snapshot has Sam's tag")
	}
}

// TestSnapshotHeadReadFirst takes Sam's snapshots while a writer posts into the campaign
// thread, changes Sam's settings and creates channels in Marketing: every change with a seq
// up to a snapshot's head_seq is in that snapshot (a later one may be too).
func TestSnapshotHeadReadFirst(t *testing.T) {
	t.Parallel()
	w := e2etest.NewSyncWorld(t)
	base := w.Env.Server.URL
	var writes atomic.Int64
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- w.WriteUntil(base, stop, &writes) }()

	var snaps []apigen.Snapshot
	deadline := time.Now().Add(e2etest.WaitTimeout)
	for len(snaps) < 20 || writes.Load() < 30 {
		if time.Now().After(deadline) {
			close(stop)
			t.Fatalf("%d snapshots and %d writes within %v", len(snaps), writes.Load(), e2etest.WaitTimeout)
		}
		s, _ := w.Snapshot(t, w.Sam)
		snaps = append(snaps, s)
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	log := w.EventsAfter(t, 0)
	heads := map[int64]bool{}
	for _, s := range snaps {
		heads[s.HeadSeq] = true
		var lastMessage, counter int64
		var channels []uuid.UUID
		for _, e := range log {
			if e.Seq > s.HeadSeq {
				break
			}
			p := storedPayload(t, e)
			switch {
			case e.Type == "message.created" && e.ThreadID == w.CampaignThread:
				lastMessage = max(lastMessage, p.Seq)
			case e.Type == "setting.updated" && e.AudienceID == w.Sam.ID && p.Key == "counter":
				counter = max(counter, p.Version)
			case e.Type == "channel.created" && e.SpaceID == w.Marketing:
				channels = append(channels, e.ChannelID)
			}
		}
		var got int64
		for _, u := range s.UnreadThreads {
			if u.ThreadId == w.CampaignThread {
				got = u.LastMessageSeq
			}
		}
		if got < lastMessage {
			t.Fatalf("snapshot at head %d: the campaign thread's last_message_seq is %d, but seq %d was posted by then", s.HeadSeq, got, lastMessage)
		}
		var version int64
		for _, st := range s.Settings {
			if st.Key == "counter" {
				version = st.Version
			}
		}
		if version < counter {
			t.Fatalf("snapshot at head %d: setting counter at version %d, but version %d was written by then", s.HeadSeq, version, counter)
		}
		listed := map[uuid.UUID]bool{}
		for _, c := range s.Channels {
			listed[c.Id] = true
		}
		for _, c := range channels {
			if !listed[c] {
				t.Fatalf("snapshot at head %d lacks channel %s created by then", s.HeadSeq, c)
			}
		}
	}
	t.Logf("%d snapshots at %d different heads during %d writes", len(snaps), len(heads), writes.Load())
}

// TestAZP5SnapshotNoForeignChannel builds random worlds through the API (spaces, channels,
// threads with mentions, direct messages, grants, personal data naming every channel, then
// revokes and archives) and checks every person's snapshot against the test's own model of
// who reads what: its channels are exactly the readable ones that are not archived, its
// spaces readable, and no sidebar entry, unread thread, draft or counter names a channel
// outside them (spec 04 AZ-P5, the snapshot part). The seed is logged; -wire.azp5.seed
// replays it.
func TestAZP5SnapshotNoForeignChannel(t *testing.T) {
	t.Parallel()
	seed := e2etest.PropertySeed(t, "wire.azp5.seed", *azp5Seed)
	for i := range azp5Worlds {
		t.Run(fmt.Sprintf("world %d", i), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, uint64(i))) //nolint:gosec // G404: reproducible test worlds, not secrets
			w := e2etest.NewSyncPeople(t)
			m := e2etest.NewReadModel(w.Owner.ID)
			people := []e2etest.Actor{w.Alex, w.Sam, w.Robin}
			w.RandomStructure(t, r, m, people)
			for range 4 + r.IntN(4) {
				w.RandomGrant(t, r, m, people)
			}
			for range 1 + r.IntN(2) {
				a, b := e2etest.Pick(r, people), e2etest.Pick(r, append(slices.Clone(people), w.Owner))
				if a.ID == b.ID {
					continue
				}
				dm := w.DM(t, a, b)
				if _, ok := m.SpaceOf[dm]; !ok {
					m.AddChannel(dm, uuid.Nil)
					m.AddGrant(a.ID, dm, uuid.Nil)
					m.AddGrant(b.ID, dm, uuid.Nil)
					m.AddThread(dm, w.Thread(t, a, dm, "@"+strings.ToLower(b.Name)+" hello").Id)
				}
			}
			for range 10 + r.IntN(10) {
				w.RandomPost(t, r, m)
			}
			for range 12 {
				w.RandomWrite(t, r, m, e2etest.Pick(r, people))
			}
			for range 1 + r.IntN(3) {
				w.RandomRevoke(t, r, m, people)
			}
			if r.IntN(2) == 0 {
				ch := e2etest.Pick(r, m.Channels)
				if sp := m.SpaceOf[ch]; sp != uuid.Nil {
					w.Must(t, w.Owner, http.MethodPost, "/api/v1/channels/"+ch.String()+"/archive", "", http.StatusOK, nil)
					m.Archived[ch] = true
				}
			}
			for range 5 {
				w.RandomPost(t, r, m)
			}
			for _, a := range append(slices.Clone(people), w.Owner) {
				s, _ := w.Snapshot(t, a)
				requireNoForeignChannel(t, m, a, s)
			}
		})
	}
}

// requireNoForeignChannel checks a's snapshot against the model.
func requireNoForeignChannel(t *testing.T, m *e2etest.ReadModel, a e2etest.Actor, s apigen.Snapshot) {
	t.Helper()
	listed := map[uuid.UUID]bool{}
	for _, c := range s.Channels {
		if !m.Listed(a.ID, c.Id) {
			t.Fatalf("%s's snapshot lists channel %s, which %s cannot read or which is archived", a.Name, c.Id, a.Name)
		}
		listed[c.Id] = true
	}
	for _, ch := range m.Channels {
		if m.Listed(a.ID, ch) && !listed[ch] {
			t.Fatalf("%s's snapshot lacks channel %s, which %s reads", a.Name, ch, a.Name)
		}
	}
	for _, sp := range s.Spaces {
		if !m.ReadsSpace(a.ID, sp.Id) || m.Archived[sp.Id] {
			t.Fatalf("%s's snapshot lists space %s, which %s cannot read", a.Name, sp.Id, a.Name)
		}
	}
	for _, sec := range s.Sidebar.Sections {
		for _, id := range sec.ChannelIds {
			if !listed[id] {
				t.Fatalf("%s's sidebar names channel %s outside the snapshot's channels", a.Name, id)
			}
		}
	}
	for _, u := range s.UnreadThreads {
		if !listed[u.ChannelId] || !slices.Contains(m.ThreadsOf[u.ChannelId], u.ThreadId) {
			t.Fatalf("%s's unread threads name %s of channel %s outside the snapshot's channels", a.Name, u.ThreadId, u.ChannelId)
		}
		if u.UnreadCount < 0 || u.MentionCount < 0 || (u.UnreadCount == 0 && u.MentionCount == 0) {
			t.Fatalf("%s's unread thread %s has counts %d and %d", a.Name, u.ThreadId, u.UnreadCount, u.MentionCount)
		}
	}
	for _, d := range s.Drafts {
		if !listed[d.ChannelId] {
			t.Fatalf("%s's drafts name channel %s outside the snapshot's channels", a.Name, d.ChannelId)
		}
	}
}

// TestSnapshotAgentHasEmptyPersonalParts: an agent and an app read Support, which has unread
// messages and a mention of the agent, and write what the API lets them; their snapshots
// carry the channels they read but an empty sidebar (version 0) and no unread threads,
// settings or drafts: they keep no personal data.
func TestSnapshotAgentHasEmptyPersonalParts(t *testing.T) {
	t.Parallel()
	w := e2etest.NewSyncWorld(t)
	bot := w.Agent(t, "Helper", "helper")
	app := w.App(t, "Subscriber", "subscriber", "events:subscribe", "messages:read")
	w.Grant(t, bot, "space", w.Support, "member")
	w.Grant(t, app, "space", w.Support, "member")
	w.Post(t, w.Owner, w.TicketThread, "@helper summarise please")
	for _, a := range []e2etest.Actor{bot, app} {
		for _, write := range []struct{ method, path, body string }{
			{http.MethodPut, "/api/v1/me/settings/theme", `{"value":"dark"}`},
			{http.MethodPut, "/api/v1/me/sidebar", fmt.Sprintf(`{"sections":[{"key":"all","title":"All","collapsed":false,"channel_ids":[%q]}]}`, w.Tickets)},
			{http.MethodPut, "/api/v1/threads/" + w.TicketThread.String() + "/read-state", `{"last_read_seq":1}`},
			{http.MethodPut, "/api/v1/channels/" + w.Tickets.String() + "/draft", `{"content_md":"Working on it"}`},
		} {
			switch got := w.Do(t, a, write.method, write.path, write.body).Status; got {
			case http.StatusOK, http.StatusForbidden, http.StatusNotFound:
			default:
				t.Fatalf("%s %s as %s = %d", write.method, write.path, a.Name, got)
			}
		}
		s, r := w.Snapshot(t, a)
		if !bytes.Contains(r.Body, []byte(`"sidebar":{"sections":[],"version":0}`)) ||
			len(s.UnreadThreads) != 0 || len(s.Settings) != 0 || len(s.Drafts) != 0 {
			t.Fatalf("%s's snapshot has personal parts: %s", a.Name, r.Body)
		}
		for _, part := range []string{`"unread_threads":[]`, `"settings":[]`, `"drafts":[]`, `"active_runs":[]`} {
			if !bytes.Contains(r.Body, []byte(part)) {
				t.Fatalf("%s's snapshot lacks %s: %s", a.Name, part, r.Body)
			}
		}
		if !slices.ContainsFunc(s.Channels, func(c apigen.ChannelView) bool { return c.Id == w.Tickets }) || s.Principal.Id != a.ID {
			t.Fatalf("%s's snapshot lacks the channels it reads or names another principal: %s", a.Name, r.Body)
		}
	}
	// A person in the same place has them.
	if s, _ := w.Snapshot(t, w.Alex); len(s.UnreadThreads) == 0 {
		t.Fatal("Alex has no unread thread in Support")
	}
}

// TestSnapshotHasNoContent: no snapshot of anyone holds a content_md member, a message's text
// (first, posted, edited), a draft's text or a thread's title.
func TestSnapshotHasNoContent(t *testing.T) {
	t.Parallel()
	w := e2etest.NewSyncWorld(t)
	bot := w.Agent(t, "Helper", "helper")
	w.Grant(t, bot, "space", w.Support, "viewer")
	secrets := []string{"Secret-title-0417", "Secret-first-1931", "Secret-post-2718", "Secret-edit-3141", "Secret-draft-1618", "Secret-dm-1414"}
	var th apigen.Thread
	w.Must(t, w.Owner, http.MethodPost, "/api/v1/channels/"+w.Tickets.String()+"/threads",
		fmt.Sprintf(`{"title":%q,"content_md":"%s @alex @sam"}`, secrets[0], secrets[1]), http.StatusCreated, &th)
	m := w.Post(t, w.Owner, th.Id, secrets[2]+" @sam")
	w.Must(t, w.Owner, http.MethodPatch, "/api/v1/messages/"+m.Id.String(), fmt.Sprintf(`{"content_md":"%s @alex"}`, secrets[3]), http.StatusOK, nil)
	w.Must(t, w.Sam, http.MethodPut, "/api/v1/channels/"+w.Tickets.String()+"/draft", fmt.Sprintf(`{"content_md":%q,"thread_id":%q}`, secrets[4], th.Id), http.StatusOK, nil)
	dm := w.DM(t, w.Alex, w.Sam)
	w.Thread(t, w.Alex, dm, secrets[5])
	for _, a := range []e2etest.Actor{w.Owner, w.Alex, w.Sam, w.Robin, bot} {
		_, r := w.Snapshot(t, a)
		var v any
		if err := json.Unmarshal(r.Body, &v); err != nil {
			t.Fatal(err)
		}
		if path, found := findMember(v, "content_md", "$"); found {
			t.Fatalf("%s's snapshot has content_md at %s: %s", a.Name, path, r.Body)
		}
		for _, s := range secrets {
			if bytes.Contains(r.Body, []byte(s)) {
				t.Fatalf("%s's snapshot holds %q: %s", a.Name, s, r.Body)
			}
		}
	}
}

// findMember returns the JSON path of the first member named name in v.
func findMember(v any, name, path string) (string, bool) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if k == name {
				return path + "." + k, true
			}
			if p, found := findMember(e, name, path+"."+k); found {
				return p, true
			}
		}
	case []any:
		for i, e := range t {
			if p, found := findMember(e, name, fmt.Sprintf("%s[%d]", path, i)); found {
				return p, true
			}
		}
	}
	return "", false
}

// storedFields are the payload members the snapshot tests read.
type storedFields struct {
	Seq       int64     `json:"seq"`
	Version   int64     `json:"version"`
	Key       string    `json:"key"`
	ChannelID uuid.UUID `json:"channel_id"`
}

// storedPayload decodes the members of a stored event's payload the tests read.
func storedPayload(t *testing.T, e syncdomain.StoredEvent) storedFields {
	t.Helper()
	var p storedFields
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		t.Fatalf("payload of %d %s: %v", e.Seq, e.Type, err)
	}
	return p
}

// spaceNames lists the spaces' names in order.
func spaceNames(list []apigen.SpaceView) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.Name
	}
	return out
}

// sortedUUIDs returns the ids in byte order.
func sortedUUIDs(ids ...uuid.UUID) []uuid.UUID {
	out := slices.Clone(ids)
	slices.SortFunc(out, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// jsonOf encodes v for failure messages.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sameElements reports whether a and b hold the same elements in any order.
func sameElements[T any](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	used := make([]bool, len(b))
outer:
	for _, x := range a {
		for j, y := range b {
			if !used[j] && reflect.DeepEqual(x, y) {
				used[j] = true
				continue outer
			}
		}
		return false
	}
	return true
}
