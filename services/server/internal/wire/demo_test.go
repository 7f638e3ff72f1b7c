package wire_test

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/wire"
	"bothy.example.com/server/internal/wiretest"
)

// demoGet sends GET path with token through the validating client and decodes a 200 into
// out; it returns the status.
func demoGet(t *testing.T, env *wiretest.Env, token, path string, out any) int {
	t.Helper()
	req := env.Client.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	r := env.Client.Do(req)
	if r.Status == http.StatusOK && out != nil {
		r.JSON(t, out)
	}
	return r.Status
}

// demoItems is the list shape of listSpaces, listSpaceChannels, listMessages, listGrants and
// listAgents, reduced to what these tests compare.
type demoItems struct {
	Items []struct {
		ID         uuid.UUID   `json:"id"`
		Name       string      `json:"name"`
		Handle     string      `json:"handle"`
		Seq        int64       `json:"seq"`
		ContentMD  string      `json:"content_md"`
		AuthorID   uuid.UUID   `json:"author_id"`
		MentionIDs []uuid.UUID `json:"mention_ids"`
	} `json:"items"`
}

// names returns the names (or handles) of the items, in order.
func (l demoItems) names() []string {
	out := make([]string, 0, len(l.Items))
	for _, it := range l.Items {
		if it.Name != "" {
			out = append(out, it.Name)
		} else {
			out = append(out, it.Handle)
		}
	}
	return out
}

// demoCensus is everything of the demo world that a rerun must leave as it is, counted
// through the API as the owner, plus the event log's head and the permission version.
type demoCensus struct {
	principals        map[string]uuid.UUID // handle -> principal id
	spaces, channels  []string
	messages          map[string]int // per thread key
	grants, agents    int
	head, permissions int64
}

func takeCensus(t *testing.T, env *wiretest.Env, w wire.DemoWorld) demoCensus {
	t.Helper()
	alex := w.Person("alex").Token.Reveal()
	c := demoCensus{messages: map[string]int{}}
	// The demo names its principals by fixed handles, which are unique: the same id for every
	// handle on both runs means no principal was created twice (wire may not count another
	// module's rows with SQL).
	c.principals = map[string]uuid.UUID{}
	for _, p := range w.People {
		c.principals[p.Handle] = p.PrincipalID
	}
	var spaces demoItems
	if s := demoGet(t, env, alex, "/api/v1/spaces", &spaces); s != http.StatusOK {
		t.Fatalf("listSpaces as Alex = %d", s)
	}
	c.spaces = spaces.names()
	for _, sp := range spaces.Items {
		var chans demoItems
		if s := demoGet(t, env, alex, "/api/v1/spaces/"+sp.ID.String()+"/channels", &chans); s != http.StatusOK {
			t.Fatalf("listSpaceChannels(%s) as Alex = %d", sp.Name, s)
		}
		for _, n := range chans.names() {
			c.channels = append(c.channels, sp.Name+"/"+n)
		}
	}
	for _, th := range w.Threads {
		var msgs demoItems
		if s := demoGet(t, env, alex, "/api/v1/threads/"+th.ID.String()+"/messages", &msgs); s != http.StatusOK {
			t.Fatalf("listMessages(%s) as Alex = %d", th.Key, s)
		}
		c.messages[th.Key] = len(msgs.Items)
	}
	var grants, agents demoItems
	if s := demoGet(t, env, alex, "/api/v1/grants", &grants); s != http.StatusOK {
		t.Fatalf("listGrants as Alex = %d", s)
	}
	if s := demoGet(t, env, alex, "/api/v1/agents", &agents); s != http.StatusOK {
		t.Fatalf("listAgents as Alex = %d", s)
	}
	c.grants, c.agents = len(grants.Items), len(agents.Items)
	var err error
	if c.head, err = env.App.Versions().EventSeq(t.Context()); err != nil {
		t.Fatalf("EventSeq: %v", err)
	}
	if c.permissions, err = env.App.Versions().PermissionVersion(t.Context()); err != nil {
		t.Fatalf("PermissionVersion: %v", err)
	}
	return c
}

// TestDemoWorldIsIdempotent builds the demo world on a fresh instance, then again: the second
// run creates nothing and changes nothing (no principal, space, channel, grant, thread,
// message or event more, the permission version unchanged), and only issues fresh tokens.
// Every token of both runs authenticates as its principal.
func TestDemoWorldIsIdempotent(t *testing.T) {
	t.Parallel()
	env := wiretest.New(t)

	first, err := env.App.Demo(t.Context())
	if err != nil {
		t.Fatalf("Demo: %v", err)
	}
	want := wire.DemoCounts{Principals: 5, Spaces: 2, Channels: 3, Grants: 6, Threads: 4, Messages: 10, ReadStates: 1, Drafts: 2}
	if first.Created != want {
		t.Fatalf("first run created %+v, want %+v", first.Created, want)
	}
	var handles []string
	for _, p := range first.People {
		handles = append(handles, p.Handle)
	}
	if !slices.Equal(handles, []string{"alex", "sam", "robin", "helper", "echo"}) {
		t.Fatalf("people %v, want alex, sam, robin, helper, echo", handles)
	}
	before := takeCensus(t, env, first)
	if !slices.Equal(before.spaces, []string{"Marketing", "Support"}) ||
		!slices.Equal(before.channels, []string{"Marketing/campaigns", "Support/escalations", "Support/tickets"}) {
		t.Fatalf("spaces %v, channels %v", before.spaces, before.channels)
	}
	if len(before.principals) != 5 || before.agents != 2 || before.grants != 6 {
		t.Fatalf("census after the first run: %+v", before)
	}

	second, err := env.App.Demo(t.Context())
	if err != nil {
		t.Fatalf("second Demo: %v", err)
	}
	if second.Created != (wire.DemoCounts{}) {
		t.Fatalf("second run created %+v, want nothing", second.Created)
	}
	after := takeCensus(t, env, second)
	if !slices.Equal(after.spaces, before.spaces) || !slices.Equal(after.channels, before.channels) ||
		!maps.Equal(after.principals, before.principals) || after.grants != before.grants || after.agents != before.agents ||
		after.head != before.head || after.permissions != before.permissions {
		t.Fatalf("the second run changed the world:\nbefore %+v\nafter  %+v", before, after)
	}
	for key, n := range before.messages {
		if after.messages[key] != n {
			t.Fatalf("thread %s: %d messages after the second run, %d before", key, after.messages[key], n)
		}
	}
	for i, p := range second.People {
		if p.PrincipalID != first.People[i].PrincipalID {
			t.Fatalf("%s: principal %s on the second run, %s on the first", p.Handle, p.PrincipalID, first.People[i].PrincipalID)
		}
		if p.Token.Reveal() == first.People[i].Token.Reveal() {
			t.Fatalf("%s: the second run printed the first run's token", p.Handle)
		}
	}
	for i, th := range second.Threads {
		if th.ID != first.Threads[i].ID || th.Messages != first.Threads[i].Messages {
			t.Fatalf("thread %s: %+v on the second run, %+v on the first", th.Key, th, first.Threads[i])
		}
	}

	for _, w := range []wire.DemoWorld{first, second} {
		for _, p := range w.People {
			var me struct {
				ID     uuid.UUID `json:"id"`
				Handle string    `json:"handle"`
				Kind   string    `json:"kind"`
			}
			if s := demoGet(t, env, p.Token.Reveal(), "/api/v1/me", &me); s != http.StatusOK || me.ID != p.PrincipalID || me.Handle != p.Handle || me.Kind != p.Kind {
				t.Fatalf("GET /api/v1/me with %s's token = %d %+v", p.Handle, s, me)
			}
		}
	}
}

// TestDemoWorldAccess checks who sees what in the demo world, the mentions its messages
// record, and the read states and drafts of Sam and Robin.
func TestDemoWorldAccess(t *testing.T) {
	t.Parallel()
	env := wiretest.New(t)
	// An owner who exists before the demo runs (as make run creates one) is reused.
	owner, err := e2etest.Bootstrap(t.Context(), env.App, "Alex", "alex", "alex@example.com")
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	w, err := env.App.Demo(t.Context())
	if err != nil {
		t.Fatalf("Demo: %v", err)
	}
	if w.Person("alex").PrincipalID != owner.PrincipalID || w.Created.Principals != 4 || w.Created.Grants != 5 {
		t.Fatalf("the demo did not reuse the owner: alex %s (owner %s), created %+v", w.Person("alex").PrincipalID, owner.PrincipalID, w.Created)
	}
	ids := map[string]uuid.UUID{}
	tokens := map[string]string{}
	for _, p := range w.People {
		ids[p.Handle], tokens[p.Handle] = p.PrincipalID, p.Token.Reveal()
	}
	spaceID := map[string]uuid.UUID{}
	channelID := map[string]uuid.UUID{}
	for _, sp := range w.Spaces {
		spaceID[sp.Name] = sp.ID
		for _, ch := range sp.Channels {
			channelID[sp.Name+"/"+ch.Name] = ch.ID
		}
	}
	threadID := map[string]uuid.UUID{}
	for _, th := range w.Threads {
		threadID[th.Key] = th.ID
	}

	visible := map[string][]string{
		"alex":   {"Marketing", "Support"},
		"sam":    {"Marketing", "Support"},
		"robin":  {"Support"},
		"helper": {"Support"},
		"echo":   {"Support"},
	}
	for who, want := range visible {
		var spaces demoItems
		if s := demoGet(t, env, tokens[who], "/api/v1/spaces", &spaces); s != http.StatusOK || !slices.Equal(spaces.names(), want) {
			t.Fatalf("listSpaces as %s = %d %v, want %v", who, s, spaces.names(), want)
		}
	}
	var helperChannels demoItems
	if s := demoGet(t, env, tokens["helper"], "/api/v1/spaces/"+spaceID["Support"].String()+"/channels", &helperChannels); s != http.StatusOK || !slices.Equal(helperChannels.names(), []string{"tickets"}) {
		t.Fatalf("Support's channels as the agent = %d %v, want tickets only", s, helperChannels.names())
	}
	// Robin cannot see Marketing: not its channels, not its threads.
	if s := demoGet(t, env, tokens["robin"], "/api/v1/spaces/"+spaceID["Marketing"].String()+"/channels", nil); s != http.StatusNotFound {
		t.Fatalf("Marketing's channels as Robin = %d, want 404", s)
	}
	if s := demoGet(t, env, tokens["robin"], "/api/v1/threads/"+threadID["demo:marketing-campaigns-1"].String()+"/messages", nil); s != http.StatusNotFound {
		t.Fatalf("a Marketing thread as Robin = %d, want 404", s)
	}

	// Mentions are recorded for those who can read the channel, and only for them.
	mentions := func(key string) [][]uuid.UUID {
		t.Helper()
		var msgs demoItems
		if s := demoGet(t, env, tokens["alex"], "/api/v1/threads/"+threadID[key].String()+"/messages", &msgs); s != http.StatusOK {
			t.Fatalf("listMessages(%s) = %d", key, s)
		}
		out := make([][]uuid.UUID, 0, len(msgs.Items))
		for _, m := range msgs.Items {
			out = append(out, m.MentionIDs)
		}
		return out
	}
	tickets := mentions("demo:support-tickets-1")
	wantTickets := [][]uuid.UUID{{ids["sam"]}, {ids["helper"]}, {ids["sam"]}, {ids["alex"]}}
	if len(tickets) != len(wantTickets) {
		t.Fatalf("demo:support-tickets-1 has %d messages, want %d", len(tickets), len(wantTickets))
	}
	for i := range wantTickets {
		if !slices.Equal(tickets[i], wantTickets[i]) {
			t.Fatalf("demo:support-tickets-1 message %d mentions %v, want %v", i+1, tickets[i], wantTickets[i])
		}
	}
	campaigns := mentions("demo:marketing-campaigns-1")
	if len(campaigns) != 2 || !slices.Equal(campaigns[1], []uuid.UUID{ids["alex"]}) {
		t.Fatalf("demo:marketing-campaigns-1 mentions %v: the reply names @alex and @robin, and Robin cannot read Marketing", campaigns)
	}

	// Read states and drafts of Sam and Robin, and the unread mentions they leave.
	ctx := t.Context()
	samRead, err := env.App.Ports().Personal.ReadStates(ctx, ids["sam"])
	if err != nil {
		t.Fatalf("read states of Sam: %v", err)
	}
	// Own posts are read: Sam's four threads are read up to his last message in each.
	if len(samRead) != 4 || samRead[threadID["demo:support-tickets-1"]].LastReadSeq != 2 ||
		samRead[threadID["demo:support-tickets-2"]].LastReadSeq != 1 || samRead[threadID["demo:marketing-campaigns-1"]].LastReadSeq != 2 {
		t.Fatalf("Sam's read states %+v, want 4 with tickets-1 read up to 2", samRead)
	}
	robinRead, err := env.App.Ports().Personal.ReadStates(ctx, ids["robin"])
	if err != nil || len(robinRead) != 3 || robinRead[threadID["demo:support-escalations-1"]].LastReadSeq != 1 ||
		robinRead[threadID["demo:support-tickets-1"]].LastReadSeq != 4 {
		t.Fatalf("Robin's read states %+v (%v), want 3 with escalations-1 read up to 1", robinRead, err)
	}
	unread := func(who string, rs map[uuid.UUID]int64) map[uuid.UUID]int {
		t.Helper()
		n, err := env.App.Ports().Mentions.CountUnread(ctx, ids[who], []uuid.UUID{channelID["Support/tickets"], channelID["Support/escalations"], channelID["Marketing/campaigns"]}, rs)
		if err != nil {
			t.Fatalf("unread mentions of %s: %v", who, err)
		}
		return n
	}
	samSeqs := map[uuid.UUID]int64{}
	for id, rs := range samRead {
		samSeqs[id] = rs.LastReadSeq
	}
	if got := unread("sam", samSeqs); len(got) != 1 || got[threadID["demo:support-tickets-1"]] != 1 {
		t.Fatalf("Sam's unread mentions %v, want one, in tickets-1 (the agent's reply)", got)
	}
	robinSeqs := map[uuid.UUID]int64{}
	for id, rs := range robinRead {
		robinSeqs[id] = rs.LastReadSeq
	}
	if got := unread("robin", robinSeqs); got[threadID["demo:support-escalations-1"]] != 1 {
		t.Fatalf("Robin's unread mentions %v, want one in escalations-1 (Alex's reply)", got)
	}

	samDrafts, err := env.App.Ports().Personal.Drafts(ctx, ids["sam"])
	if err != nil || len(samDrafts) != 1 || samDrafts[0].ThreadID != threadID["demo:support-tickets-1"] || samDrafts[0].ContentMD == "" {
		t.Fatalf("Sam's drafts %+v (%v), want one reply draft in tickets-1", samDrafts, err)
	}
	robinDrafts, err := env.App.Ports().Personal.Drafts(ctx, ids["robin"])
	if err != nil || len(robinDrafts) != 1 || robinDrafts[0].ChannelID != channelID["Support/tickets"] || robinDrafts[0].ThreadID != uuid.Nil {
		t.Fatalf("Robin's drafts %+v (%v), want one new-thread draft in tickets", robinDrafts, err)
	}
}

// TestDemoWorldAfterArchivedChannel archives a demo channel, then reruns the demo: it makes a
// new channel of the name, finds the thread keys taken (chat.ErrDuplicateKey) by threads it
// can no longer reach, and says so instead of starting them twice.
func TestDemoWorldAfterArchivedChannel(t *testing.T) {
	t.Parallel()
	env := wiretest.New(t)
	w, err := env.App.Demo(t.Context())
	if err != nil {
		t.Fatalf("Demo: %v", err)
	}
	tickets := w.Spaces[0].Channels[0]
	if w.Spaces[0].Name != "Support" || tickets.Name != "tickets" {
		t.Fatalf("spaces %+v: want Support with tickets first", w.Spaces)
	}
	req := env.Client.NewRequest(http.MethodPost, "/api/v1/channels/"+tickets.ID.String()+"/archive", nil)
	req.Header.Set("Authorization", "Bearer "+w.Person("alex").Token.Reveal())
	if r := env.Client.Do(req); r.Status != http.StatusOK {
		t.Fatalf("archiveChannel = %d; body %s", r.Status, r.Body)
	}
	_, err = env.App.Demo(t.Context())
	if !errors.Is(err, chat.ErrDuplicateKey) || !strings.Contains(err.Error(), "demo:support-tickets-1") {
		t.Fatalf("Demo after archiving tickets = %v, want chat.ErrDuplicateKey naming demo:support-tickets-1", err)
	}
}

// TestDemoWorldWithAnotherOwner runs the demo on an instance whose owner is not @alex: that
// owner plays Alex's part. A demo handle taken by a principal of another kind stops the demo
// with an error that names it.
func TestDemoWorldWithAnotherOwner(t *testing.T) {
	t.Parallel()
	env := wiretest.New(t)
	owner, err := e2etest.Bootstrap(t.Context(), env.App, "Sam", "sam", "sam@example.com")
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	w, err := env.App.Demo(t.Context())
	if err != nil {
		t.Fatalf("Demo: %v", err)
	}
	if w.People[0].PrincipalID != owner.PrincipalID || w.People[0].Handle != "sam" || w.Person("sam").PrincipalID != owner.PrincipalID {
		t.Fatalf("people %+v: the owner @sam should play Alex's part and Sam's", w.People)
	}
	if w.Created.Principals != 3 || w.Created.Threads != 4 {
		t.Fatalf("created %+v, want Robin, Helper and Echo, and every thread", w.Created)
	}

	other := wiretest.New(t)
	boss, err := e2etest.Bootstrap(t.Context(), other.App, "Alex", "alex", "alex@example.com")
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	req := other.Client.NewRequest(http.MethodPost, "/api/v1/agents", strings.NewReader(`{"display_name":"Robin","handle":"robin"}`))
	req.Header.Set("Authorization", "Bearer "+boss.Token.Reveal())
	req.Header.Set("Content-Type", "application/json")
	if r := other.Client.Do(req); r.Status != http.StatusCreated {
		t.Fatalf("createAgent = %d; body %s", r.Status, r.Body)
	}
	if _, err := other.App.Demo(t.Context()); err == nil || !strings.Contains(err.Error(), "@robin") || !strings.Contains(err.Error(), "agent") {
		t.Fatalf("Demo with an agent @robin = %v, want an error naming @robin and its kind", err)
	}
}
