package snapshot

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/e2e/e2etest"
)

// syncClient is what a client keeps of the snapshot and applies events to, reduced to the
// versions and counters the snapshot carries (spec 03): the versions of spaces and channels,
// the sidebar, the settings and the drafts, the permission version, and per thread its last
// message seq, the reader's read position and the reader's unread mentions (by message, which
// the envelopes name), from which the unread counts follow.
type syncClient struct {
	me                uuid.UUID
	cursor            int64
	permissionVersion int64
	spaces            map[uuid.UUID]int64
	channels          map[uuid.UUID]clientChannel
	sidebarVersion    int64
	sidebar           []apigen.SidebarSection
	threads           map[uuid.UUID]*clientThread
	settings          map[string]int64
	drafts            map[draftKey]int64
	agents            map[uuid.UUID]bool
	runs              map[uuid.UUID]apigen.RunSummary // the runs in progress, as run.* events carry them
}

type clientChannel struct {
	version int64
	space   uuid.UUID
}

type clientThread struct {
	channel, space uuid.UUID
	last, read     int64
	mentions       map[uuid.UUID]int64 // message id -> seq, for the live messages mentioning me
}

type draftKey struct{ channel, thread uuid.UUID }

// clientFrom starts a client from a snapshot. The snapshot's mention counts cannot be split
// into messages, so the test starts where the reader has no unread mention.
func clientFrom(t *testing.T, me uuid.UUID, s apigen.Snapshot) *syncClient {
	t.Helper()
	c := &syncClient{
		me: me, cursor: s.HeadSeq, permissionVersion: s.PermissionVersion,
		spaces: map[uuid.UUID]int64{}, channels: map[uuid.UUID]clientChannel{},
		sidebarVersion: s.Sidebar.Version, sidebar: s.Sidebar.Sections,
		threads: map[uuid.UUID]*clientThread{}, settings: map[string]int64{}, drafts: map[draftKey]int64{},
		agents: map[uuid.UUID]bool{}, runs: map[uuid.UUID]apigen.RunSummary{},
	}
	for _, r := range s.ActiveRuns {
		c.runs[r.Id] = normRun(r)
	}
	for _, sp := range s.Spaces {
		c.spaces[sp.Id] = sp.Version
	}
	for _, ch := range s.Channels {
		c.channels[ch.Id] = clientChannel{version: ch.Version, space: derefID(ch.SpaceId)}
	}
	for _, u := range s.UnreadThreads {
		if u.MentionCount != 0 {
			t.Fatalf("the starting snapshot has unread mentions: %+v", u)
		}
		c.threads[u.ThreadId] = &clientThread{channel: u.ChannelId, space: derefID(u.SpaceId), last: u.LastMessageSeq, read: u.LastReadSeq, mentions: map[uuid.UUID]int64{}}
	}
	for _, st := range s.Settings {
		c.settings[st.Key] = st.Version
	}
	for _, d := range s.Drafts {
		c.drafts[draftKey{d.ChannelId, derefID(d.ThreadId)}] = d.Version
	}
	for _, a := range s.Agents {
		c.agents[a.Agent.Id] = true
	}
	return c
}

// eventPayload holds every payload member apply reads.
type eventPayload struct {
	SpaceID           uuid.UUID               `json:"space_id"`
	ChannelID         uuid.UUID               `json:"channel_id"`
	ThreadID          uuid.UUID               `json:"thread_id"`
	MessageID         uuid.UUID               `json:"message_id"`
	AgentID           uuid.UUID               `json:"agent_id"`
	Seq               int64                   `json:"seq"`
	Version           int64                   `json:"version"`
	LastReadSeq       int64                   `json:"last_read_seq"`
	PermissionVersion int64                   `json:"permission_version"`
	MentionIDs        []uuid.UUID             `json:"mention_ids"`
	Key               string                  `json:"key"`
	Sections          []apigen.SidebarSection `json:"sections"`
	// The members of run.created and run.updated beyond the ids and version above.
	RunID        uuid.UUID  `json:"run_id"`
	RequestedBy  uuid.UUID  `json:"requested_by"`
	InvocationID *uuid.UUID `json:"invocation_id"`
	State        string     `json:"state"`
	Progress     string     `json:"progress"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
}

// apply applies one delivered event as a client would.
func (c *syncClient) apply(t *testing.T, e e2etest.CatchUpEvent) {
	t.Helper()
	var p eventPayload
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		t.Fatalf("payload of %d %s: %v", e.Seq, e.Type, err)
	}
	c.cursor = e.Seq
	thread := func() *clientThread {
		th := c.threads[p.ThreadID]
		if th == nil {
			th = &clientThread{channel: p.ChannelID, space: c.channels[p.ChannelID].space, mentions: map[uuid.UUID]int64{}}
			c.threads[p.ThreadID] = th
		}
		return th
	}
	switch e.Type {
	case "space.created", "space.updated":
		c.spaces[p.SpaceID] = p.Version
	case "space.archived":
		delete(c.spaces, p.SpaceID)
		for id, ch := range c.channels {
			if ch.space == p.SpaceID {
				delete(c.channels, id)
			}
		}
	case "channel.created", "channel.updated":
		c.channels[p.ChannelID] = clientChannel{version: p.Version, space: p.SpaceID}
	case "channel.archived":
		delete(c.channels, p.ChannelID)
	case "thread.created":
		thread()
	case "message.created", "message.edited":
		if e.Redacted {
			t.Fatalf("the client got %d %s redacted; the steps delete only messages it saw", e.Seq, e.Type)
		}
		th := thread()
		th.last = max(th.last, p.Seq)
		if slices.Contains(p.MentionIDs, c.me) {
			th.mentions[p.MessageID] = p.Seq
		} else {
			delete(th.mentions, p.MessageID)
		}
	case "message.deleted":
		th := thread()
		th.last = max(th.last, p.Seq)
		delete(th.mentions, p.MessageID)
	case "read_state.updated":
		thread().read = p.LastReadSeq
	case "draft.saved":
		c.drafts[draftKey{p.ChannelID, p.ThreadID}] = p.Version
	case "draft.deleted":
		delete(c.drafts, draftKey{p.ChannelID, p.ThreadID})
	case "setting.updated":
		c.settings[p.Key] = p.Version
	case "sidebar.updated":
		c.sidebar, c.sidebarVersion = p.Sections, p.Version
	case "permissions.changed":
		c.permissionVersion = p.PermissionVersion
	case "agent.created":
		c.agents[p.AgentID] = true
	case "run.created", "run.updated":
		// Each carries the whole run: a run in progress is listed as the event says, a
		// finished one leaves the list.
		if p.State == "queued" || p.State == "running" {
			c.runs[p.RunID] = normRun(apigen.RunSummary{
				Id: p.RunID, AgentId: p.AgentID, ThreadId: p.ThreadID, ChannelId: p.ChannelID, RequestedBy: p.RequestedBy,
				InvocationId: p.InvocationID, State: apigen.RunState(p.State), Progress: p.Progress, Version: p.Version,
				CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
			})
		} else {
			delete(c.runs, p.RunID)
		}
	case "grant.revoked":
		// In this test Sam holds one grant per space, so losing it loses the space and its
		// channels (a client that cannot tell reloads the snapshot on permissions.changed).
		var g struct {
			ResourceKind string    `json:"resource_kind"`
			ResourceID   uuid.UUID `json:"resource_id"`
		}
		if err := json.Unmarshal(e.Payload, &g); err != nil {
			t.Fatal(err)
		}
		if g.ResourceKind == "space" {
			delete(c.spaces, g.ResourceID)
			for id, ch := range c.channels {
				if ch.space == g.ResourceID {
					delete(c.channels, id)
				}
			}
		}
	case "grant.created", "flags.updated", "agent.updated", "reaction.added", "reaction.removed":
		// What a grant makes visible arrives as the events themselves (catch-up applies the
		// permissions at delivery time); flags are evaluated per reader; reactions are not in
		// the snapshot (message reads carry them, ADR 0025).
	default:
		t.Fatalf("the client does not know %s", e.Type)
	}
}

// clientView is what the client state and a snapshot are compared on.
type clientView struct {
	Head, PermissionVersion int64
	Spaces, Channels        map[uuid.UUID]int64
	SidebarVersion          int64
	Sidebar                 []apigen.SidebarSection
	Unread                  map[uuid.UUID]apigen.UnreadThread
	Settings                map[string]int64
	Drafts                  map[draftKey]int64
	Agents                  map[uuid.UUID]bool
	Runs                    map[uuid.UUID]apigen.RunSummary
}

// normRun puts a run's times in UTC, so that runs read from events and from a snapshot
// compare equal.
func normRun(r apigen.RunSummary) apigen.RunSummary {
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	return r
}

// view derives the snapshot's versions and counters from the client state: the channels'
// parts restricted to the channels it holds, unread = last - read (the floor is 0 here),
// mentions above the read position, a thread listed when either is above 0.
func (c *syncClient) view() clientView {
	v := clientView{
		Head: c.cursor, PermissionVersion: c.permissionVersion, Spaces: maps.Clone(c.spaces),
		Channels: map[uuid.UUID]int64{}, SidebarVersion: c.sidebarVersion, Sidebar: []apigen.SidebarSection{},
		Unread: map[uuid.UUID]apigen.UnreadThread{}, Settings: maps.Clone(c.settings), Drafts: map[draftKey]int64{},
		Agents: maps.Clone(c.agents), Runs: maps.Clone(c.runs),
	}
	for id, ch := range c.channels {
		v.Channels[id] = ch.version
	}
	for _, sec := range c.sidebar {
		ids := []uuid.UUID{}
		for _, id := range sec.ChannelIds {
			if _, ok := c.channels[id]; ok {
				ids = append(ids, id)
			}
		}
		sec.ChannelIds = ids
		v.Sidebar = append(v.Sidebar, sec)
	}
	for id, th := range c.threads {
		if _, ok := c.channels[th.channel]; !ok {
			continue
		}
		var mentions int64
		for _, seq := range th.mentions {
			if seq > th.read {
				mentions++
			}
		}
		unread := max(0, th.last-th.read)
		if unread == 0 && mentions == 0 {
			continue
		}
		u := apigen.UnreadThread{ThreadId: id, ChannelId: th.channel, LastMessageSeq: th.last, LastReadSeq: th.read, UnreadCount: unread, MentionCount: mentions}
		if th.space != uuid.Nil {
			sp := th.space
			u.SpaceId = &sp
		}
		v.Unread[id] = u
	}
	for k, ver := range c.drafts {
		if _, ok := c.channels[k.channel]; ok {
			v.Drafts[k] = ver
		}
	}
	return v
}

// snapshotView is clientView of a snapshot.
func snapshotView(s apigen.Snapshot) clientView {
	v := clientView{
		Head: s.HeadSeq, PermissionVersion: s.PermissionVersion, Spaces: map[uuid.UUID]int64{}, Channels: map[uuid.UUID]int64{},
		SidebarVersion: s.Sidebar.Version, Sidebar: s.Sidebar.Sections, Unread: map[uuid.UUID]apigen.UnreadThread{},
		Settings: map[string]int64{}, Drafts: map[draftKey]int64{}, Agents: map[uuid.UUID]bool{},
		Runs: map[uuid.UUID]apigen.RunSummary{},
	}
	for _, r := range s.ActiveRuns {
		v.Runs[r.Id] = normRun(r)
	}
	for _, sp := range s.Spaces {
		v.Spaces[sp.Id] = sp.Version
	}
	for _, ch := range s.Channels {
		v.Channels[ch.Id] = ch.Version
	}
	for _, u := range s.UnreadThreads {
		v.Unread[u.ThreadId] = u
	}
	for _, st := range s.Settings {
		v.Settings[st.Key] = st.Version
	}
	for _, d := range s.Drafts {
		v.Drafts[draftKey{d.ChannelId, derefID(d.ThreadId)}] = d.Version
	}
	for _, a := range s.Agents {
		v.Agents[a.Agent.Id] = true
	}
	return v
}

func derefID(id *uuid.UUID) uuid.UUID {
	if id == nil {
		return uuid.Nil
	}
	return *id
}

// TestSnapshotPlusEventsEqualsSnapshot is the snapshot-plus-events test of spec 03, in the
// spirit of Zulip's verify_action: for every event type a chat or personal-data write
// produces, Sam's snapshot taken before the write, with the events catch-up delivers after
// its head_seq applied as a client applies them, agrees with Sam's snapshot taken after the
// write on every version and counter (space and channel versions, the sidebar, settings,
// drafts, the permission version, last message, read position, unread and mention counts of
// every thread) and on head_seq. The client state carries over from step to step, so each
// step starts from a state already checked equal to the snapshot before it.
func TestSnapshotPlusEventsEqualsSnapshot(t *testing.T) {
	t.Parallel()
	w := e2etest.NewSyncWorld(t)
	sam := w.Sam
	// Runner, an agent that may post in Support and in a direct message with the owner, where
	// Sam reads nothing. Its grants come before the first snapshot: a grant advances the
	// permission version every snapshot reports, and Sam is told only of his own.
	runner := w.Agent(t, "Runner", "runner")
	w.Grant(t, runner, "space", w.Support, "member")
	hiddenThread := w.Thread(t, w.Owner, w.DM(t, w.Owner, runner), "@runner the numbers, please").Id
	start, _ := w.Snapshot(t, sam)
	client := clientFrom(t, sam.ID, start)
	finance := w.Space(t, "Finance")
	ledger := w.Channel(t, w.Owner, finance, "ledger")
	ledgerThread := w.Thread(t, w.Owner, ledger, "Quarterly numbers").Id

	var launch, mention, spare, press, dm, events, eventsGrant, samRun, alexRun uuid.UUID
	// startRun starts a run of Runner in the thread for the person, with the extra members.
	startRun := func(thread uuid.UUID, requester e2etest.Actor, extra string) uuid.UUID {
		var run apigen.Run
		w.Must(t, runner, http.MethodPost, "/api/v1/threads/"+thread.String()+"/runs",
			fmt.Sprintf(`{"requested_by":%q%s}`, requester.ID, extra), http.StatusCreated, &run)
		return run.Id
	}
	steps := []struct {
		name string
		want []string // event types Sam must receive in the step
		do   func()
	}{
		{"a thread mentioning Sam", []string{"thread.created", "message.created"}, func() {
			launch = w.Thread(t, w.Owner, w.Campaigns, "Launch plan, @sam").Id
		}},
		{"a message", []string{"message.created"}, func() { w.Post(t, w.Owner, w.TicketThread, "Any news?") }},
		{"a message mentioning Sam", []string{"message.created"}, func() {
			mention = w.Post(t, w.Owner, launch, "@sam the banner is ready").Id
			spare = w.Post(t, w.Alex, w.TicketThread, "Checking, @sam").Id
		}},
		{"an edit that drops the mention", []string{"message.edited"}, func() {
			w.Must(t, w.Owner, http.MethodPatch, "/api/v1/messages/"+mention.String(), `{"content_md":"The banner is ready"}`, http.StatusOK, nil)
		}},
		{"an edit that mentions again", []string{"message.edited"}, func() {
			w.Must(t, w.Owner, http.MethodPatch, "/api/v1/messages/"+mention.String(), `{"content_md":"The banner is ready, @sam"}`, http.StatusOK, nil)
		}},
		{"a deleted message with a mention", []string{"message.deleted"}, func() {
			w.Must(t, w.Alex, http.MethodDelete, "/api/v1/messages/"+spare.String(), "", http.StatusNoContent, nil)
		}},
		{"a reaction taken back", []string{"reaction.added", "reaction.removed"}, func() {
			path := "/api/v1/messages/" + mention.String() + "/reactions/:eyes:"
			w.Must(t, w.Owner, http.MethodPut, path, "", http.StatusNoContent, nil)
			w.Must(t, w.Owner, http.MethodDelete, path, "", http.StatusNoContent, nil)
		}},
		{"a read state in the middle", []string{"read_state.updated"}, func() { w.ReadTo(t, sam, launch, 1) }},
		{"a read state at the end", []string{"read_state.updated"}, func() { w.ReadTo(t, sam, launch, 2) }},
		{"Sam's own message", []string{"message.created", "read_state.updated"}, func() { w.Post(t, sam, w.CampaignThread, "Looks good") }},
		{"Sam's own message after he marked the thread unread", []string{"read_state.updated", "message.created", "read_state.updated"}, func() {
			w.ReadTo(t, sam, w.CampaignThread, 0)
			w.Post(t, sam, w.CampaignThread, "And one more thing, @sam")
		}},
		{"Sam's own thread", []string{"thread.created", "message.created", "read_state.updated"}, func() {
			w.Thread(t, sam, w.Campaigns, "Notes from the launch call")
		}},
		{"a channel draft", []string{"draft.saved"}, func() {
			w.Must(t, sam, http.MethodPut, "/api/v1/channels/"+w.Campaigns.String()+"/draft", `{"content_md":"Half a reply"}`, http.StatusOK, nil)
		}},
		{"a thread draft", []string{"draft.saved"}, func() {
			w.Must(t, sam, http.MethodPut, "/api/v1/channels/"+w.Tickets.String()+"/draft", fmt.Sprintf(`{"content_md":"Soon","thread_id":%q}`, w.TicketThread), http.StatusOK, nil)
		}},
		{"a deleted draft", []string{"draft.deleted"}, func() {
			w.Must(t, sam, http.MethodDelete, "/api/v1/channels/"+w.Campaigns.String()+"/draft", "", http.StatusNoContent, nil)
		}},
		{"a setting", []string{"setting.updated"}, func() {
			w.Must(t, sam, http.MethodPut, "/api/v1/me/settings/theme", `{"value":"dark"}`, http.StatusOK, nil)
		}},
		{"a sidebar naming a channel Sam cannot read", []string{"sidebar.updated"}, func() {
			w.Must(t, sam, http.MethodPut, "/api/v1/me/sidebar", fmt.Sprintf(`{"sections":[{"key":"work","title":"Work","collapsed":false,"channel_ids":[%q,%q,%q]}]}`,
				w.Campaigns, ledger, w.Tickets), http.StatusOK, nil)
		}},
		{"a channel in Marketing", []string{"channel.created"}, func() { press = w.Channel(t, w.Owner, w.Marketing, "press") }},
		{"a message in a thread of it", []string{"thread.created", "message.created"}, func() { w.Thread(t, w.Owner, press, "Press kit") }},
		{"writes Sam cannot see", nil, func() {
			w.Post(t, w.Owner, ledgerThread, "Numbers are in, @sam")
			w.Channel(t, w.Owner, finance, "audit")
			w.Must(t, w.Alex, http.MethodPut, "/api/v1/me/settings/theme", `{"value":"dark"}`, http.StatusOK, nil)
		}},
		{"an agent", []string{"agent.created"}, func() { w.Agent(t, "Helper", "helper") }},
		{"a run for Sam in the tickets thread", []string{"run.created"}, func() {
			samRun = startRun(w.TicketThread, sam, `,"state":"running","progress":"Reading"`)
		}},
		{"its progress", []string{"run.updated"}, func() {
			w.Must(t, runner, http.MethodPatch, "/api/v1/runs/"+samRun.String(), `{"state":"running","progress":"Writing"}`, http.StatusOK, nil)
		}},
		{"a queued run for Alex", []string{"run.created"}, func() { alexRun = startRun(w.TicketThread, w.Alex, "") }},
		{"a run Sam cannot see", nil, func() {
			startRun(hiddenThread, w.Owner, ``)
		}},
		{"Sam cancels his run", []string{"run.updated"}, func() {
			w.Must(t, sam, http.MethodPost, "/api/v1/runs/"+samRun.String()+"/cancel", "", http.StatusOK, nil)
		}},
		{"Alex's run runs and succeeds", []string{"run.updated"}, func() {
			w.Must(t, runner, http.MethodPatch, "/api/v1/runs/"+alexRun.String(), `{"state":"running"}`, http.StatusOK, nil)
			w.Must(t, runner, http.MethodPatch, "/api/v1/runs/"+alexRun.String(), `{"state":"succeeded"}`, http.StatusOK, nil)
		}},
		{"a direct message from Alex", []string{"grant.created", "permissions.changed", "channel.created"}, func() { dm = w.DM(t, w.Alex, sam) }},
		{"its thread mentioning Sam", []string{"thread.created", "message.created"}, func() { w.Thread(t, w.Alex, dm, "@sam lunch?") }},
		{"the sidebar with the direct message", []string{"sidebar.updated"}, func() {
			w.Must(t, sam, http.MethodPut, "/api/v1/me/sidebar", fmt.Sprintf(`{"sections":[{"key":"work","title":"Work","collapsed":false,"channel_ids":[%q,%q]}]}`, dm, press), http.StatusOK, nil)
		}},
		{"a space with a channel, then a grant on it to Sam", []string{"space.created", "channel.created", "grant.created", "permissions.changed"}, func() {
			events = w.Space(t, "Events")
			w.Thread(t, w.Owner, w.Channel(t, w.Owner, events, "meetups"), "First meetup, @sam")
			eventsGrant = w.Grant(t, sam, "space", events, "member")
		}},
		{"Sam's draft there", []string{"draft.saved"}, func() {
			w.Must(t, sam, http.MethodPut, "/api/v1/channels/"+channelOf(t, w, sam, events).String()+"/draft", `{"content_md":"See you"}`, http.StatusOK, nil)
		}},
		{"the grant revoked", []string{"grant.revoked", "permissions.changed"}, func() { w.Revoke(t, eventsGrant) }},
		{"an archived channel", []string{"channel.archived"}, func() {
			w.Must(t, w.Owner, http.MethodPost, "/api/v1/channels/"+press.String()+"/archive", "", http.StatusOK, nil)
		}},
		{"an archived space", []string{"space.archived"}, func() {
			w.Must(t, w.Owner, http.MethodPost, "/api/v1/spaces/"+w.Marketing.String()+"/archive", "", http.StatusOK, nil)
		}},
	}
	before := start
	for _, step := range steps {
		if got, want := client.view(), snapshotView(before); !reflect.DeepEqual(got, want) {
			t.Fatalf("before %q the client state differs from the snapshot:\n client   %+v\n snapshot %+v", step.name, got, want)
		}
		step.do()
		events, cursor := w.CatchUp(t, sam, client.cursor, 0)
		var types []string
		for _, e := range events {
			client.apply(t, e)
			types = append(types, e.Type)
		}
		client.cursor = cursor
		for _, typ := range step.want {
			if !slices.Contains(types, typ) {
				t.Fatalf("step %q delivered %v to Sam, without %s", step.name, types, typ)
			}
		}
		if step.want == nil && len(types) != 0 {
			t.Fatalf("step %q delivered %v to Sam, want nothing", step.name, types)
		}
		after, _ := w.Snapshot(t, sam)
		if got, want := client.view(), snapshotView(after); !reflect.DeepEqual(got, want) {
			t.Fatalf("after %q (events %v) the snapshot before plus the events differs from the snapshot after:\n client   %s\n snapshot %s",
				step.name, types, viewString(got), viewString(want))
		}
		before = after
	}
}

// viewString prints a view for failure messages, maps in a stable order.
func viewString(v clientView) string {
	unread := slices.Collect(maps.Values(v.Unread))
	slices.SortFunc(unread, func(a, b apigen.UnreadThread) int { return slices.Compare(a.ThreadId[:], b.ThreadId[:]) })
	b, _ := json.Marshal(unread)
	return fmt.Sprintf("head %d, permissions %d, spaces %v, channels %v, sidebar %d %+v, unread %s, settings %v, drafts %v, agents %v, runs %+v",
		v.Head, v.PermissionVersion, v.Spaces, v.Channels, v.SidebarVersion, v.Sidebar, b, v.Settings, v.Drafts, v.Agents, v.Runs)
}

// channelOf returns the one channel a lists in the space.
func channelOf(t *testing.T, w *e2etest.SyncWorld, a e2etest.Actor, space uuid.UUID) uuid.UUID {
	t.Helper()
	var list apigen.ChannelViewList
	w.Must(t, a, http.MethodGet, "/api/v1/spaces/"+space.String()+"/channels", "", http.StatusOK, &list)
	if len(list.Items) != 1 {
		t.Fatalf("%s lists %d channels in space %s, want 1", a.Name, len(list.Items), space)
	}
	return list.Items[0].Id
}
