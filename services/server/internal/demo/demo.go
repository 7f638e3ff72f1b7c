// Package demo builds the demo world of `make demo` (bothy admin demo) through the modules'
// use cases, each write made by the actor who would make it, so every write appends its
// events as a request would (see the comment on Run). It knows the modules only through the
// ports it declares in Deps, which the composition root binds.
package demo

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/agents"
	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/problem"
)

// The demo world of `make demo` (bothy admin demo): people, an agent, spaces, channels,
// grants, threads with mentions, read states and drafts, so that a fresh instance has
// something to look at and clients something to synchronise. It is built through the
// modules' use cases, each write by the actor who would make it (Alex creates the structure
// and grants, each author posts their own messages, Sam and Robin keep their own read states
// and drafts), so every write appends its events like a request would. Run is idempotent:
// it looks for what exists first (people by handle, spaces and channels by name, grants by
// principal and resource, threads and messages by their external keys "demo:...", read
// states and drafts by thread and channel) and creates only what is missing, so a second run
// creates and changes nothing; it only issues fresh tokens. What a user changed since (a
// read state moved on, a draft edited) is left as it is.

// Person is one principal of the demo world, with a token issued by the run.
type Person struct {
	// Name is the display name.
	Name string
	// Handle is the handle, as in @sam.
	Handle string
	// Kind is person or agent.
	Kind string
	// PrincipalID is the principal's id.
	PrincipalID uuid.UUID
	// Access says in words what the principal's grants let it do.
	Access string
	// Token is a token issued by this run (the owner's bootstrap token when the run created
	// the owner); it prints as [redacted] (identity.Secret.Reveal reads it).
	Token identity.Secret
}

// Space is a space of the demo world with its channels.
type Space struct {
	// Name is the space's name.
	Name string
	// ID is the space's id.
	ID uuid.UUID
	// Channels are the demo channels of the space, in the order the demo defines them.
	Channels []Channel
}

// Channel is a channel of the demo world.
type Channel struct {
	// Name is the channel's name.
	Name string
	// ID is the channel's id.
	ID uuid.UUID
}

// Thread is a thread of the demo world.
type Thread struct {
	// Key is the external key of the thread's first message, such as demo:support-tickets-1.
	Key string
	// Space and Channel name where the thread lies.
	Space, Channel string
	// Title is the thread's title.
	Title string
	// ID is the thread's id.
	ID uuid.UUID
	// Messages counts the thread's messages after the run (also those others posted).
	Messages int
}

// Counts counts what one run of Run created.
type Counts struct {
	// Principals counts the people and agents created (the owner too when bootstrapped).
	Principals int `json:"principals"`
	// Spaces counts the spaces created.
	Spaces int `json:"spaces"`
	// Channels counts the channels created.
	Channels int `json:"channels"`
	// Grants counts the grants made (the owner grant too when the owner was bootstrapped).
	Grants int `json:"grants"`
	// Threads counts the threads started.
	Threads int `json:"threads"`
	// Messages counts the messages posted, the first messages of new threads included.
	Messages int `json:"messages"`
	// ReadStates counts the read states recorded by the demo's readStates step; those its
	// posts moved (own posts are read, spec 05a) are not counted.
	ReadStates int `json:"read_states"`
	// Drafts counts the drafts saved.
	Drafts int `json:"drafts"`
}

// World is what Run built or found.
type World struct {
	// People are Alex (the owner), Sam, Robin and the agents Helper and Echo, in this order.
	People []Person
	// Spaces are Support and Marketing with their channels.
	Spaces []Space
	// Threads are the demo threads, in the order the demo defines them.
	Threads []Thread
	// Created counts what this run created; all zero when the world was complete.
	Created Counts
	// BaseURL is where http.addr serves (a listener on every interface is reached on
	// 127.0.0.1), for the curl commands the caller prints.
	BaseURL string
}

// Person returns the person or agent with the handle; the zero Person when there is none.
func (w World) Person(handle string) Person {
	for _, p := range w.People {
		if p.Handle == handle {
			return p
		}
	}
	return Person{}
}

// demoKeyPrefix starts the external key of every demo message.
const demoKeyPrefix = "demo:"

// demoPrincipal is a principal of the demo world; an empty email makes an agent.
type demoPrincipal struct {
	name, handle, email, description, access string
}

// demoOwner is Alex, the instance's owner: bootstrapped when the instance has none.
var demoOwner = demoPrincipal{name: "Alex", handle: "alex", email: "alex@example.com", access: "owner of the instance"}

// demoMembers are created unless their handle exists; the agents come last. Echo is the
// example agent of examples/agents/echo, which make demo starts with Echo's token.
var demoMembers = []demoPrincipal{
	{name: "Sam", handle: "sam", email: "sam@example.com", access: "member of Support and Marketing"},
	{name: "Robin", handle: "robin", email: "robin@example.com", access: "member of Support"},
	{name: "Helper", handle: "helper", description: "Looks up similar tickets (demo agent).", access: "member of Support #tickets"},
	{name: "Echo", handle: "echo", description: "Answers an @mention with a run and an echo of the message (examples/agents/echo; make demo starts it).", access: "member of Support; make demo runs it"},
}

type demoSpaceSpec struct {
	name, description string
	channels          []demoChannelSpec
}

type demoChannelSpec struct{ name, topic string }

var demoSpaces = []demoSpaceSpec{
	{name: "Support", description: "Customer questions and incidents.", channels: []demoChannelSpec{
		{name: "tickets", topic: "New customer tickets, one thread each."},
		{name: "escalations", topic: "Tickets that need an engineer."},
	}},
	{name: "Marketing", description: "Campaigns and launches.", channels: []demoChannelSpec{
		{name: "campaigns", topic: "Planned and running campaigns."},
	}},
}

// demoGrant gives a member role on a space, or on a channel of it when channel is set.
type demoGrant struct{ handle, space, channel string }

var demoGrants = []demoGrant{
	{handle: "sam", space: "Support"},
	{handle: "sam", space: "Marketing"},
	{handle: "robin", space: "Support"},
	{handle: "helper", space: "Support", channel: "tickets"},
	{handle: "echo", space: "Support"},
}

// demoMessage is one message; the first of a thread carries the thread's key.
type demoMessage struct{ key, author, content string }

type demoThreadSpec struct {
	space, channel, title string
	messages              []demoMessage
}

// key is the thread's natural key: its first message's.
func (s demoThreadSpec) key() string { return s.messages[0].key }

var demoThreads = []demoThreadSpec{
	{space: "Support", channel: "tickets", title: "Login fails after a password reset", messages: []demoMessage{
		{"demo:support-tickets-1", "robin", "A customer cannot log in after resetting their password. @sam can you take a look?"},
		{"demo:support-tickets-1:2", "sam", "On it. @helper, please find similar tickets from this week."},
		{"demo:support-tickets-1:3", "helper", "Found 3 similar tickets since Monday, all from the mobile app. @sam the newest came in today."},
		{"demo:support-tickets-1:4", "robin", "Thanks both. @alex this may need an escalation."},
	}},
	{space: "Support", channel: "tickets", title: "Invoice in the wrong currency", messages: []demoMessage{
		{"demo:support-tickets-2", "sam", "An invoice shows euros instead of dollars. @robin did billing change anything?"},
		{"demo:support-tickets-2:2", "robin", "Not that I know of. @helper can you list the last invoices of that account?"},
	}},
	{space: "Support", channel: "escalations", title: "Mobile app login regression", messages: []demoMessage{
		{"demo:support-escalations-1", "sam", "Escalating the login failures after password resets. @alex can an engineer look this week?"},
		{"demo:support-escalations-1:2", "alex", "Yes, it is planned for this sprint. @robin please keep the customer posted."},
	}},
	{space: "Marketing", channel: "campaigns", title: "Spring launch", messages: []demoMessage{
		{"demo:marketing-campaigns-1", "alex", "The plan for the spring launch is ready. @sam please review the copy by Friday."},
		// Robin cannot read Marketing, so the mention of @robin is not recorded.
		{"demo:marketing-campaigns-1:2", "sam", "Reviewed, two small changes. @alex looks good otherwise. Once it is live, @robin can point customers to it from Support."},
	}},
}

// demoReadState is how far a person has read a thread (by its key).
type demoReadState struct {
	handle, thread string
	seq            int64
}

// demoReadStates are the read states no post of their owner implies: an author's own post
// moves the author's read state to it (spec 05a, own posts are read), so Sam has read
// tickets-1 up to his reply (2, leaving the agent's mention at 3 unread), tickets-2 and
// escalations-1 up to his first message and campaigns-1 up to his reply, and Robin tickets-1
// to his last message (4) and tickets-2 to his reply, without a step of their own here.
var demoReadStates = []demoReadState{
	{"robin", "demo:support-escalations-1", 1},
}

// demoDraft is a person's draft in a channel, replying to a thread (by its key) when thread
// is set.
type demoDraft struct{ handle, space, channel, thread, content string }

var demoDrafts = []demoDraft{
	{"sam", "Support", "tickets", "demo:support-tickets-1", "Checked the logs: the reset link opens the web app instead of the mobile app."},
	{"robin", "Support", "tickets", "", "Customer asks whether two-factor sign-in is on the roadmap."},
}

// demo is one run of Run.
type demo struct {
	deps     Deps
	people   map[string]identity.PrincipalRef // by handle
	access   map[string]string                // by handle
	tokens   map[string]identity.Secret       // by handle
	spaces   map[string]uuid.UUID             // by demo space name
	channels map[string]uuid.UUID             // by "space/channel"
	threads  map[string]uuid.UUID             // by key
	counts   map[uuid.UUID]int                // messages per thread
	created  Counts
}

// Run builds the demo world, or completes it, and issues a fresh token for each of its
// people and its agent (see the comment at the top of this file). Alex is the instance's owner:
// bootstrapped when the instance has none, otherwise the owner with the handle alex, or the
// first active owner when no owner has it. A handle of the demo taken by a principal of
// another kind is an error; so is every failure of a use case, after which a rerun completes
// the world.
func Run(ctx context.Context, deps Deps) (World, error) {
	d := &demo{
		deps:     deps,
		people:   map[string]identity.PrincipalRef{},
		access:   map[string]string{},
		tokens:   map[string]identity.Secret{},
		spaces:   map[string]uuid.UUID{},
		channels: map[string]uuid.UUID{},
		threads:  map[string]uuid.UUID{},
		counts:   map[uuid.UUID]int{},
	}
	for _, step := range []struct {
		name string
		run  func(context.Context) error
	}{
		{"owner", d.owner},
		{"people and agent", d.members},
		{"spaces and channels", d.structure},
		{"grants", d.grants},
		{"threads and messages", d.conversations},
		{"read states", d.readStates},
		{"drafts", d.drafts},
		{"tokens", d.issueTokens},
	} {
		if err := step.run(ctx); err != nil {
			return World{}, fmt.Errorf("demo: %s: %w", step.name, err)
		}
	}
	return d.world(), nil
}

// as returns ctx carrying the principal with the handle as its actor.
func (d *demo) as(ctx context.Context, handle string) context.Context {
	p := d.people[handle]
	return actor.With(ctx, actor.Actor{PrincipalID: p.ID, Kind: p.Kind})
}

// owner finds or bootstraps Alex.
func (d *demo) owner(ctx context.Context) error {
	o := demoOwner
	d.access[o.handle] = o.access
	id, token, err := d.deps.Owners.Bootstrap(ctx, o.name, o.handle, o.email)
	created := err == nil
	if errors.Is(err, authz.ErrOwnerExists) {
		err = nil
	}
	if err != nil {
		return err
	}
	if created {
		d.people[o.handle] = identity.PrincipalRef{ID: id, Kind: actor.KindPerson, DisplayName: o.name, Handle: o.handle}
		d.tokens[o.handle] = token
		d.created.Principals++
		d.created.Grants++
		return nil
	}
	ref, err := d.existingOwner(ctx, o.handle)
	if err != nil {
		return err
	}
	// The owner plays Alex under its own handle; the other steps look Alex up by demoOwner's.
	d.people[o.handle] = ref
	return nil
}

// existingOwner returns the active owner with the handle, else the first active owner.
func (d *demo) existingOwner(ctx context.Context, handle string) (identity.PrincipalRef, error) {
	byHandle, err := d.deps.Directory.ByHandles(ctx, []string{handle})
	if err != nil {
		return identity.PrincipalRef{}, err
	}
	if ref, ok := byHandle[handle]; ok {
		owns, err := d.isOwner(ctx, ref.ID)
		if err != nil {
			return identity.PrincipalRef{}, err
		}
		if owns {
			return ref, nil
		}
	}
	all, err := d.deps.Grants.List(ctx, uuid.Nil)
	if err != nil {
		return identity.PrincipalRef{}, err
	}
	for _, g := range all {
		if g.ResourceKind != kernel.ResourceInstance || g.Role != authz.RoleOwner {
			continue
		}
		p, err := d.deps.Principals.Get(ctx, g.PrincipalID)
		if err != nil {
			return identity.PrincipalRef{}, err
		}
		if p.DeactivatedAt.IsZero() {
			return p.Ref(), nil
		}
	}
	return identity.PrincipalRef{}, errors.New("the instance has owners, but none is active")
}

// isOwner reports whether the principal holds the owner grant on the instance.
func (d *demo) isOwner(ctx context.Context, id uuid.UUID) (bool, error) {
	grants, err := d.deps.Grants.List(ctx, id)
	if err != nil {
		return false, err
	}
	for _, g := range grants {
		if g.ResourceKind == kernel.ResourceInstance && g.Role == authz.RoleOwner {
			return true, nil
		}
	}
	return false, nil
}

// members finds or creates Sam, Robin (people), Helper and Echo (agents Alex creates).
func (d *demo) members(ctx context.Context) error {
	handles := make([]string, 0, len(demoMembers))
	for _, m := range demoMembers {
		handles = append(handles, m.handle)
	}
	existing, err := d.deps.Directory.ByHandles(ctx, handles)
	if err != nil {
		return err
	}
	for _, m := range demoMembers {
		d.access[m.handle] = m.access
		kind := actor.KindPerson
		if m.email == "" {
			kind = actor.KindAgent
		}
		if ref, ok := existing[m.handle]; ok {
			if ref.Kind != kind {
				return fmt.Errorf("the handle @%s belongs to a principal of kind %s, the demo needs a %s; rename it or use a fresh instance", m.handle, ref.Kind, kind)
			}
			d.people[m.handle] = ref
			continue
		}
		if kind == actor.KindAgent {
			ag, err := d.deps.Agents.Create(d.as(ctx, demoOwner.handle), agents.CreateInput{DisplayName: m.name, Handle: m.handle, Description: m.description})
			if err != nil {
				return err
			}
			d.people[m.handle] = identity.PrincipalRef{ID: ag.ID, Kind: actor.KindAgent, DisplayName: ag.DisplayName, Handle: ag.Handle}
		} else {
			p, err := d.deps.Principals.CreatePerson(ctx, identity.PersonInput{DisplayName: m.name, Handle: m.handle, Email: m.email})
			if err != nil {
				return err
			}
			d.people[m.handle] = p.Ref()
		}
		d.created.Principals++
	}
	return nil
}

// structure finds or creates the spaces and their channels, as Alex.
func (d *demo) structure(ctx context.Context) error {
	alex := d.as(ctx, demoOwner.handle)
	listed, err := d.deps.Spaces.List(alex)
	if err != nil {
		return err
	}
	for _, spec := range demoSpaces {
		id := uuid.Nil
		for _, v := range listed {
			if strings.EqualFold(v.Space.Name, spec.name) {
				id = v.Space.ID
				break
			}
		}
		if id == uuid.Nil {
			sp, err := d.deps.Spaces.Create(alex, chat.SpaceInput{Name: spec.name, Description: spec.description})
			if err != nil {
				return err
			}
			id = sp.ID
			d.created.Spaces++
		}
		d.spaces[spec.name] = id
		channels, err := d.deps.Channels.ListInSpace(alex, id)
		if err != nil {
			return err
		}
		for _, cs := range spec.channels {
			chID := uuid.Nil
			for _, v := range channels {
				if strings.EqualFold(v.Channel.Name, cs.name) {
					chID = v.Channel.ID
					break
				}
			}
			if chID == uuid.Nil {
				ch, err := d.deps.Channels.Create(alex, chat.ChannelInput{SpaceID: id, Name: cs.name, Topic: cs.topic})
				if err != nil {
					return err
				}
				chID = ch.ID
				d.created.Channels++
			}
			d.channels[spec.name+"/"+cs.name] = chID
		}
	}
	return nil
}

// grants makes the member grants that are missing, as Alex (createGrant's use case, which
// authorizes grant.admin). A principal that holds any grant on the resource keeps it.
func (d *demo) grants(ctx context.Context) error {
	alex := d.as(ctx, demoOwner.handle)
	held := map[uuid.UUID][]authz.Grant{}
	for _, g := range demoGrants {
		who := d.people[g.handle].ID
		if _, ok := held[who]; !ok {
			list, err := d.deps.Grants.List(ctx, who)
			if err != nil {
				return err
			}
			held[who] = list
		}
		in := authz.GrantInput{PrincipalID: who, ResourceKind: kernel.ResourceSpace, ResourceID: d.spaces[g.space], Role: authz.RoleMember}
		if g.channel != "" {
			in.ResourceKind, in.ResourceID = kernel.ResourceChannel, d.channels[g.space+"/"+g.channel]
		}
		if holds(held[who], in) {
			continue
		}
		made, err := d.deps.Grants.CreateGrant(alex, in)
		if errors.Is(err, problem.ErrConflict) {
			continue // made meanwhile by a concurrent run
		}
		if err != nil {
			return err
		}
		held[who] = append(held[who], made)
		d.created.Grants++
	}
	return nil
}

// holds reports whether one of the grants is on the resource of in.
func holds(grants []authz.Grant, in authz.GrantInput) bool {
	for _, g := range grants {
		if g.ResourceKind == in.ResourceKind && g.ResourceID == in.ResourceID {
			return true
		}
	}
	return false
}

// conversations starts the threads and posts the replies that are missing, each as its
// author, with the external keys that find them on the next run.
func (d *demo) conversations(ctx context.Context) error {
	alex := d.as(ctx, demoOwner.handle)
	if err := d.findThreads(alex); err != nil {
		return err
	}
	for _, spec := range demoThreads {
		first := spec.messages[0]
		id, ok := d.threads[first.key]
		if !ok {
			th, _, err := d.deps.Threads.Create(d.as(ctx, first.author), chat.ThreadInput{
				ChannelID: d.channels[spec.space+"/"+spec.channel], Title: spec.title,
				ContentMD: first.content, ExternalKey: first.key,
			})
			switch {
			case errors.Is(err, chat.ErrDuplicateKey):
				// Started meanwhile by a concurrent run: find it.
				if err := d.findThreads(alex); err != nil {
					return err
				}
				if id, ok = d.threads[first.key]; !ok {
					return fmt.Errorf("thread %s lies outside the demo channels (was its channel archived?); start from a fresh instance: %w", first.key, err)
				}
			case err != nil:
				return fmt.Errorf("thread %s: %w", first.key, err)
			default:
				id = th.ID
				d.threads[first.key] = id
				d.created.Threads++
				d.created.Messages++
			}
		}
		keys, err := d.messageKeys(alex, id)
		if err != nil {
			return err
		}
		for _, m := range spec.messages[1:] {
			if keys[m.key] {
				continue
			}
			_, err := d.deps.Messages.Post(d.as(ctx, m.author), chat.MessageInput{ThreadID: id, ContentMD: m.content, ExternalKey: m.key})
			if errors.Is(err, chat.ErrDuplicateKey) {
				continue
			}
			if err != nil {
				return fmt.Errorf("message %s: %w", m.key, err)
			}
			d.counts[id]++
			d.created.Messages++
		}
	}
	return nil
}

// findThreads records the demo threads that exist: the threads of the demo channels
// (chat.Threads.Counters lists every thread with a message) whose first message carries a
// demo key.
func (d *demo) findThreads(alex context.Context) error {
	var channelIDs []uuid.UUID
	seen := map[uuid.UUID]bool{}
	for _, spec := range demoThreads {
		id := d.channels[spec.space+"/"+spec.channel]
		if !seen[id] {
			seen[id] = true
			channelIDs = append(channelIDs, id)
		}
	}
	counters, err := d.deps.Threads.Counters(alex, channelIDs)
	if err != nil {
		return err
	}
	for _, c := range counters {
		first, err := d.deps.Messages.List(alex, c.ThreadID, 0, 1)
		if err != nil {
			return err
		}
		if len(first) == 1 && first[0].Seq == 1 && strings.HasPrefix(first[0].ExternalKey, demoKeyPrefix) {
			d.threads[first[0].ExternalKey] = c.ThreadID
		}
	}
	return nil
}

// messageKeys pages through the thread's messages, returns their external keys and records
// how many there are.
func (d *demo) messageKeys(alex context.Context, threadID uuid.UUID) (map[string]bool, error) {
	keys := map[string]bool{}
	var after int64
	n := 0
	for {
		page, err := d.deps.Messages.List(alex, threadID, after, 0)
		if err != nil {
			return nil, err
		}
		if len(page) == 0 {
			break
		}
		for _, m := range page {
			keys[m.ExternalKey] = true
			n++
		}
		after = page[len(page)-1].Seq
	}
	d.counts[threadID] = n
	return keys, nil
}

// readStates records the read states of Sam and Robin that are missing, each as its owner
// (sync.Personal). A thread its owner has a read state of keeps it.
func (d *demo) readStates(ctx context.Context) error {
	have := map[string]map[uuid.UUID]bool{}
	for _, rs := range demoReadStates {
		if _, ok := have[rs.handle]; !ok {
			states, err := d.deps.Personal.ReadStates(ctx, d.people[rs.handle].ID)
			if err != nil {
				return err
			}
			have[rs.handle] = map[uuid.UUID]bool{}
			for id := range states {
				have[rs.handle][id] = true
			}
		}
		thread := d.threads[rs.thread]
		if have[rs.handle][thread] {
			continue
		}
		if _, err := d.deps.Personal.UpdateReadState(d.as(ctx, rs.handle), thread, rs.seq); err != nil {
			return fmt.Errorf("%s in %s: %w", rs.handle, rs.thread, err)
		}
		have[rs.handle][thread] = true
		d.created.ReadStates++
	}
	return nil
}

// drafts saves the drafts of Sam and Robin that are missing, each as its owner
// (sync.Personal). A draft its owner has in the same place keeps its text.
func (d *demo) drafts(ctx context.Context) error {
	type place struct{ channel, thread uuid.UUID }
	have := map[string]map[place]bool{}
	for _, dr := range demoDrafts {
		if _, ok := have[dr.handle]; !ok {
			list, err := d.deps.Personal.Drafts(ctx, d.people[dr.handle].ID)
			if err != nil {
				return err
			}
			have[dr.handle] = map[place]bool{}
			for _, x := range list {
				have[dr.handle][place{x.ChannelID, x.ThreadID}] = true
			}
		}
		at := place{channel: d.channels[dr.space+"/"+dr.channel]}
		if dr.thread != "" {
			at.thread = d.threads[dr.thread]
		}
		if have[dr.handle][at] {
			continue
		}
		if _, err := d.deps.Personal.SaveDraft(d.as(ctx, dr.handle), at.channel, at.thread, dr.content); err != nil {
			return fmt.Errorf("%s in %s/%s: %w", dr.handle, dr.space, dr.channel, err)
		}
		have[dr.handle][at] = true
		d.created.Drafts++
	}
	return nil
}

// issueTokens issues a token, bound to no device, for everyone of the demo but an owner the
// run bootstrapped, whose bootstrap token it keeps.
func (d *demo) issueTokens(ctx context.Context) error {
	for _, p := range append([]demoPrincipal{demoOwner}, demoMembers...) {
		if _, ok := d.tokens[p.handle]; ok {
			continue
		}
		issued, err := d.deps.Tokens.Issue(ctx, d.people[p.handle].ID, nil)
		if err != nil {
			return fmt.Errorf("@%s: %w", p.handle, err)
		}
		d.tokens[p.handle] = issued.Token
	}
	return nil
}

// world is the result of the run.
func (d *demo) world() World {
	w := World{Created: d.created, BaseURL: baseURL(d.deps.Addr)}
	for _, p := range append([]demoPrincipal{demoOwner}, demoMembers...) {
		ref := d.people[p.handle]
		w.People = append(w.People, Person{
			Name: ref.DisplayName, Handle: ref.Handle, Kind: string(ref.Kind), PrincipalID: ref.ID,
			Access: d.access[p.handle], Token: d.tokens[p.handle],
		})
	}
	for _, spec := range demoSpaces {
		sp := Space{Name: spec.name, ID: d.spaces[spec.name]}
		for _, cs := range spec.channels {
			sp.Channels = append(sp.Channels, Channel{Name: cs.name, ID: d.channels[spec.name+"/"+cs.name]})
		}
		w.Spaces = append(w.Spaces, sp)
	}
	for _, spec := range demoThreads {
		id := d.threads[spec.key()]
		w.Threads = append(w.Threads, Thread{
			Key: spec.key(), Space: spec.space, Channel: spec.channel, Title: spec.title, ID: id, Messages: d.counts[id],
		})
	}
	return w
}

// baseURL is the URL a curl on this machine reaches http.addr at: a listener on every
// interface (":8080", "0.0.0.0:8080", "[::]:8080") is reached on 127.0.0.1.
func baseURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}
