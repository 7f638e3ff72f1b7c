package httpapi_test

import (
	"context"
	gosync "sync"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
)

// fakeChat holds the canned answers of the four chat ports and records what the handlers
// asked; err, when set, is every method's error. spaces, channels, threads and messages
// adapt it to the ports, whose method names clash.
type fakeChat struct {
	mu    gosync.Mutex
	err   error
	calls []string

	space        chat.Space
	spaceViews   []chat.SpaceView
	channel      chat.Channel
	created      bool
	channelViews []chat.ChannelView
	thread       chat.Thread
	message      chat.Message
	messages     []chat.Message
	threadView   chat.ThreadView
	memberPage   chat.MemberPage
	memberAfter  uuid.UUID
	threadPage   chat.ThreadPage

	spaceIn      chat.SpaceInput
	channelIn    chat.ChannelInput
	participants []uuid.UUID
	threadIn     chat.ThreadInput
	messageIn    chat.MessageInput
	id           uuid.UUID
	after        int64
	limit        int
	content      string
	reaction     string
	searchIn     chat.SearchQuery
	searchPage   chat.SearchPage
	position     chat.ThreadPosition
}

func (f *fakeChat) record(call string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
	return f.err
}

func (f *fakeChat) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

type spacesPort struct{ f *fakeChat }

func (p spacesPort) Create(_ context.Context, in chat.SpaceInput) (chat.Space, error) {
	p.f.spaceIn = in
	return p.f.space, p.f.record("Spaces.Create")
}

func (p spacesPort) List(context.Context) ([]chat.SpaceView, error) {
	return p.f.spaceViews, p.f.record("Spaces.List")
}

func (p spacesPort) Archive(_ context.Context, id uuid.UUID) (chat.Space, error) {
	p.f.id = id
	return p.f.space, p.f.record("Spaces.Archive")
}

func (p spacesPort) Read(_ context.Context, id uuid.UUID) (chat.SpaceView, error) {
	p.f.id = id
	var v chat.SpaceView
	if len(p.f.spaceViews) > 0 {
		v = p.f.spaceViews[0]
	}
	return v, p.f.record("Spaces.Read")
}

type channelsPort struct{ f *fakeChat }

func (p channelsPort) Create(_ context.Context, in chat.ChannelInput) (chat.Channel, error) {
	p.f.channelIn = in
	return p.f.channel, p.f.record("Channels.Create")
}

func (p channelsPort) CreateDirect(_ context.Context, ids []uuid.UUID) (chat.Channel, bool, error) {
	p.f.participants = ids
	return p.f.channel, p.f.created, p.f.record("Channels.CreateDirect")
}

func (p channelsPort) ListInSpace(_ context.Context, spaceID uuid.UUID) ([]chat.ChannelView, error) {
	p.f.id = spaceID
	return p.f.channelViews, p.f.record("Channels.ListInSpace")
}

func (p channelsPort) ListVisible(context.Context) ([]chat.ChannelView, error) {
	return p.f.channelViews, p.f.record("Channels.ListVisible")
}

func (p channelsPort) Archive(_ context.Context, id uuid.UUID) (chat.Channel, error) {
	p.f.id = id
	return p.f.channel, p.f.record("Channels.Archive")
}

func (p channelsPort) Get(_ context.Context, id uuid.UUID) (chat.Channel, error) {
	p.f.id = id
	return p.f.channel, p.f.record("Channels.Get")
}

func (p channelsPort) Read(_ context.Context, id uuid.UUID) (chat.ChannelView, error) {
	p.f.id = id
	var v chat.ChannelView
	if len(p.f.channelViews) > 0 {
		v = p.f.channelViews[0]
	}
	return v, p.f.record("Channels.Read")
}

func (p channelsPort) Members(_ context.Context, id, after uuid.UUID, limit int) (chat.MemberPage, error) {
	p.f.id, p.f.memberAfter, p.f.limit = id, after, limit
	return p.f.memberPage, p.f.record("Channels.Members")
}

type threadsPort struct{ f *fakeChat }

func (p threadsPort) Create(_ context.Context, in chat.ThreadInput) (chat.Thread, chat.Message, error) {
	p.f.threadIn = in
	return p.f.thread, p.f.message, p.f.record("Threads.Create")
}

func (p threadsPort) Get(_ context.Context, id uuid.UUID) (chat.Thread, error) {
	p.f.id = id
	return p.f.thread, p.f.record("Threads.Get")
}

func (p threadsPort) Counters(context.Context, []uuid.UUID) ([]chat.ThreadCounter, error) {
	return nil, p.f.record("Threads.Counters")
}

func (p threadsPort) Read(_ context.Context, id uuid.UUID) (chat.ThreadView, error) {
	p.f.id = id
	return p.f.threadView, p.f.record("Threads.Read")
}

type threadListPort struct{ f *fakeChat }

func (p threadListPort) InChannel(_ context.Context, channelID uuid.UUID, after chat.ThreadPosition, limit int) (chat.ThreadPage, error) {
	p.f.id, p.f.position, p.f.limit = channelID, after, limit
	return p.f.threadPage, p.f.record("ThreadList.InChannel")
}

type messagesPort struct{ f *fakeChat }

func (p messagesPort) Post(_ context.Context, in chat.MessageInput) (chat.Message, error) {
	p.f.messageIn = in
	return p.f.message, p.f.record("Messages.Post")
}

func (p messagesPort) List(_ context.Context, threadID uuid.UUID, after int64, limit int) ([]chat.Message, error) {
	p.f.id, p.f.after, p.f.limit = threadID, after, limit
	return p.f.messages, p.f.record("Messages.List")
}

func (p messagesPort) Edit(_ context.Context, id uuid.UUID, contentMD string) (chat.Message, error) {
	p.f.id, p.f.content = id, contentMD
	return p.f.message, p.f.record("Messages.Edit")
}

func (p messagesPort) Delete(_ context.Context, id uuid.UUID) error {
	p.f.id = id
	return p.f.record("Messages.Delete")
}

type reactionsPort struct{ f *fakeChat }

func (p reactionsPort) Add(_ context.Context, id uuid.UUID, reaction string) error {
	p.f.id, p.f.reaction = id, reaction
	return p.f.record("Reactions.Add")
}

func (p reactionsPort) Remove(_ context.Context, id uuid.UUID, reaction string) error {
	p.f.id, p.f.reaction = id, reaction
	return p.f.record("Reactions.Remove")
}

func (p messagesPort) Read(_ context.Context, id uuid.UUID) (chat.Message, error) {
	p.f.id = id
	return p.f.message, p.f.record("Messages.Read")
}

// Compile-time checks that the adapters implement the ports.
var (
	_ chat.Reactions = reactionsPort{}
	_ chat.Spaces    = spacesPort{}
	_ chat.Channels  = channelsPort{}
	_ chat.Threads   = threadsPort{}
	_ chat.Messages  = messagesPort{}
)

type searchPort struct{ f *fakeChat }

func (p searchPort) Messages(_ context.Context, q chat.SearchQuery) (chat.SearchPage, error) {
	p.f.searchIn = q
	return p.f.searchPage, p.f.record("Search.Messages")
}
