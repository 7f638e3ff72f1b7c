package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/adapters/httpapi"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/authorize"
	"bothy.example.com/server/internal/kernel/authorize/authorizetest"
	"bothy.example.com/server/internal/kernel/conditional"
	"bothy.example.com/server/internal/kernel/problem"
)

var (
	alexID    = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000a1")
	samID     = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000a2")
	robinID   = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000a3")
	spaceID   = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000b1")
	channelID = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000c1")
	dmID      = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000c2")
	threadID  = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000d1")
	messageID = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000e1")
	created   = time.Date(2026, 12, 1, 9, 30, 15, 0, time.UTC)
	later     = created.Add(90 * time.Minute)
)

// pageSize is the configured chat.messages_page_size of the servers under test.
const pageSize = 50

func deps(a *authorizetest.Authorizer, f *fakeChat) httpapi.Deps {
	return httpapi.Deps{
		Authorizer: a, Spaces: spacesPort{f}, Channels: channelsPort{f}, Threads: threadsPort{f},
		Messages: messagesPort{f}, Reactions: reactionsPort{f}, Search: searchPort{f}, ThreadList: threadListPort{f}, MessagesPageSize: pageSize,
	}
}

func newServer(t *testing.T) (*httpapi.Server, *authorizetest.Authorizer, *fakeChat) {
	t.Helper()
	a, f := &authorizetest.Authorizer{RequireActor: true}, &fakeChat{}
	s, err := httpapi.New(deps(a, f))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s, a, f
}

func as(id uuid.UUID) context.Context {
	return actor.With(context.Background(), actor.Actor{PrincipalID: id, Kind: actor.KindPerson})
}

func ptr[T any](v T) *T { return &v }

func TestNewRefusesMissingDeps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(*httpapi.Deps)
		want   string
	}{
		{"authorizer", func(d *httpapi.Deps) { d.Authorizer = nil }, "authorizer is nil"},
		{"spaces", func(d *httpapi.Deps) { d.Spaces = nil }, "spaces port is nil"},
		{"channels", func(d *httpapi.Deps) { d.Channels = nil }, "channels port is nil"},
		{"threads", func(d *httpapi.Deps) { d.Threads = nil }, "threads port is nil"},
		{"messages", func(d *httpapi.Deps) { d.Messages = nil }, "messages port is nil"},
		{"reactions", func(d *httpapi.Deps) { d.Reactions = nil }, "reactions port is nil"},
		{"search", func(d *httpapi.Deps) { d.Search = nil }, "search port is nil"},
		{"thread list", func(d *httpapi.Deps) { d.ThreadList = nil }, "thread list port is nil"},
		{"page size zero", func(d *httpapi.Deps) { d.MessagesPageSize = 0 }, "messages page size"},
		{"page size negative", func(d *httpapi.Deps) { d.MessagesPageSize = -1 }, "messages page size"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := deps(&authorizetest.Authorizer{RequireActor: true}, &fakeChat{})
			tc.change(&d)
			if s, err := httpapi.New(d); err == nil || s != nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, %v; want an error saying %q", s, err, tc.want)
			}
		})
	}
	d := deps(&authorizetest.Authorizer{RequireActor: true}, &fakeChat{})
	d.Authorizer, d.Messages = nil, nil
	_, err := httpapi.New(d)
	if err == nil || !strings.Contains(err.Error(), "authorizer is nil") || !strings.Contains(err.Error(), "messages port is nil") {
		t.Errorf("New with two missing deps: err = %v, want both named", err)
	}
}

// operation is one chat handler called with a valid request, and, for operations with a
// body, without it.
type operation struct {
	name string
	// action is what the handler itself authorizes on the instance before anything; empty
	// for the operations whose use case authorizes alone (it must load the resource first).
	action kernel.Action
	// port is the port method the handler calls.
	port   string
	call   func(ctx context.Context, s *httpapi.Server) (any, error)
	noBody func(ctx context.Context, s *httpapi.Server) (any, error)
}

func operations() []operation {
	return []operation{
		{
			name: "createSpace", action: kernel.ActionSpaceCreate, port: "Spaces.Create",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.CreateSpace(ctx, apigen.CreateSpaceRequestObject{Body: &apigen.CreateSpaceRequest{Name: "Support"}})
			},
			noBody: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.CreateSpace(ctx, apigen.CreateSpaceRequestObject{})
			},
		},
		{
			name: "listSpaces", action: kernel.ActionSpaceRead, port: "Spaces.List",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.ListSpaces(ctx, apigen.ListSpacesRequestObject{})
			},
		},
		{
			name: "archiveSpace", port: "Spaces.Archive",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.ArchiveSpace(ctx, apigen.ArchiveSpaceRequestObject{SpaceId: spaceID})
			},
		},
		{
			name: "createChannel", port: "Channels.Create",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.CreateChannel(ctx, apigen.CreateChannelRequestObject{SpaceId: spaceID, Body: &apigen.CreateChannelRequest{Name: "tickets"}})
			},
			noBody: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.CreateChannel(ctx, apigen.CreateChannelRequestObject{SpaceId: spaceID})
			},
		},
		{
			name: "listSpaceChannels", port: "Channels.ListInSpace",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.ListSpaceChannels(ctx, apigen.ListSpaceChannelsRequestObject{SpaceId: spaceID})
			},
		},
		{
			name: "archiveChannel", port: "Channels.Archive",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.ArchiveChannel(ctx, apigen.ArchiveChannelRequestObject{ChannelId: channelID})
			},
		},
		{
			name: "createDirectMessage", action: kernel.ActionChannelCreate, port: "Channels.CreateDirect",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.CreateDirectMessage(ctx, apigen.CreateDirectMessageRequestObject{Body: &apigen.CreateDirectMessageRequest{ParticipantIds: []uuid.UUID{samID}}})
			},
			noBody: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.CreateDirectMessage(ctx, apigen.CreateDirectMessageRequestObject{})
			},
		},
		{
			name: "createThread", port: "Threads.Create",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.CreateThread(ctx, apigen.CreateThreadRequestObject{ChannelId: channelID, Body: &apigen.CreateThreadRequest{ContentMd: "Printer jammed"}})
			},
			noBody: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.CreateThread(ctx, apigen.CreateThreadRequestObject{ChannelId: channelID})
			},
		},
		{
			name: "postMessage", port: "Messages.Post",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.PostMessage(ctx, apigen.PostMessageRequestObject{ThreadId: threadID, Body: &apigen.PostMessageRequest{ContentMd: "On my way"}})
			},
			noBody: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.PostMessage(ctx, apigen.PostMessageRequestObject{ThreadId: threadID})
			},
		},
		{
			name: "listMessages", port: "Messages.List",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.ListMessages(ctx, apigen.ListMessagesRequestObject{ThreadId: threadID})
			},
		},
		{
			name: "editMessage", port: "Messages.Edit",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.EditMessage(ctx, apigen.EditMessageRequestObject{MessageId: messageID, Body: &apigen.EditMessageRequest{ContentMd: "On my way (five minutes)"}})
			},
			noBody: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.EditMessage(ctx, apigen.EditMessageRequestObject{MessageId: messageID})
			},
		},
		{
			name: "deleteMessage", port: "Messages.Delete",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.DeleteMessage(ctx, apigen.DeleteMessageRequestObject{MessageId: messageID})
			},
		},
		{
			name: "addReaction", port: "Reactions.Add",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.AddReaction(ctx, apigen.AddReactionRequestObject{MessageId: messageID, Reaction: ":+1:"})
			},
		},
		{
			name: "removeReaction", port: "Reactions.Remove",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.RemoveReaction(ctx, apigen.RemoveReactionRequestObject{MessageId: messageID, Reaction: ":+1:"})
			},
		},
		{
			name: "searchMessages", action: kernel.ActionThreadRead, port: "Search.Messages",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.SearchMessages(ctx, apigen.SearchMessagesRequestObject{Params: apigen.SearchMessagesParams{Q: "printer"}})
			},
		},
		{
			name: "getSpace", port: "Spaces.Read",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.GetSpace(ctx, apigen.GetSpaceRequestObject{SpaceId: spaceID})
			},
		},
		{
			name: "getChannel", port: "Channels.Read",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.GetChannel(ctx, apigen.GetChannelRequestObject{ChannelId: channelID})
			},
		},
		{
			name: "listChannelMembers", port: "Channels.Members",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.ListChannelMembers(ctx, apigen.ListChannelMembersRequestObject{ChannelId: channelID})
			},
		},
		{
			name: "getThread", port: "Threads.Read",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.GetThread(ctx, apigen.GetThreadRequestObject{ThreadId: threadID})
			},
		},
		{
			name: "getMessage", port: "Messages.Read",
			call: func(ctx context.Context, s *httpapi.Server) (any, error) {
				return s.GetMessage(ctx, apigen.GetMessageRequestObject{MessageId: messageID})
			},
		},
	}
}

// TestHandlersAuthorizeWhereTheResourceIsKnown checks the split of spec 04's "authorize
// first": createSpace, listSpaces and createDirectMessage act on the instance, known before
// any read, so their handler asks the authorizer before anything else and a refusal reaches
// no port; every other operation leaves the decision to its use case, which must load the
// row that names the resource's ancestors first.
func TestHandlersAuthorizeWhereTheResourceIsKnown(t *testing.T) {
	t.Parallel()
	denials := []error{problem.ErrNotFound, problem.ErrForbidden, problem.ErrDevicePending, problem.ErrUnauthenticated}
	for _, op := range operations() {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			if op.action == "" {
				s, authz, ports := newServer(t)
				authz.Err = problem.ErrForbidden
				if _, err := op.call(as(samID), s); err != nil {
					t.Fatalf("call: %v", err)
				}
				if got := authz.Decisions(); len(got) != 0 {
					t.Errorf("the handler decided %+v; its use case authorizes", got)
				}
				if calls := ports.called(); !slices.Equal(calls, []string{op.port}) {
					t.Errorf("port calls = %v, want [%s]", calls, op.port)
				}
				return
			}
			want := authorizetest.Decision{Action: op.action, Res: authorize.Instance()}
			for _, deny := range denials {
				s, authz, ports := newServer(t)
				authz.Err = deny
				resp, err := op.call(as(samID), s)
				if !errors.Is(err, deny) || resp != nil {
					t.Errorf("denied with %v: resp %v, err %v", deny, resp, err)
				}
				if calls := ports.called(); len(calls) != 0 {
					t.Errorf("denied with %v: the handler called %v", deny, calls)
				}
				if got := authz.Decisions(); !slices.Equal(got, []authorizetest.Decision{want}) {
					t.Errorf("decisions = %+v, want exactly %+v", got, want)
				}
			}

			s, _, ports := newServer(t)
			if _, err := op.call(context.Background(), s); !errors.Is(err, problem.ErrUnauthenticated) {
				t.Errorf("without an actor: err = %v, want unauthenticated", err)
			}
			if calls := ports.called(); len(calls) != 0 {
				t.Errorf("without an actor: the handler called %v", calls)
			}

			s, authz, ports := newServer(t)
			if _, err := op.call(as(samID), s); err != nil {
				t.Fatalf("allowed: %v", err)
			}
			if calls := ports.called(); !slices.Equal(calls, []string{op.port}) {
				t.Errorf("allowed: port calls = %v, want [%s]", calls, op.port)
			}
			if got := authz.Decisions(); !slices.Equal(got, []authorizetest.Decision{want}) {
				t.Errorf("allowed: decisions = %+v, want exactly %+v", got, want)
			}
		})
	}
}

// TestPortErrorsPassThrough checks that the errors of the ports reach the edge unchanged
// and without a response, so the one problem table renders them.
func TestPortErrorsPassThrough(t *testing.T) {
	t.Parallel()
	errs := []error{
		problem.Validation(problem.FieldError{Field: "name", Message: "is required"}),
		problem.ErrNotFound, problem.ErrForbidden, problem.ErrConflict, chat.ErrDuplicateKey,
		errors.New("database on fire"),
	}
	for _, op := range operations() {
		for _, want := range errs {
			s, _, ports := newServer(t)
			ports.err = want
			resp, err := op.call(as(samID), s)
			if err != want || resp != nil { //nolint:errorlint // the very error must pass, not a wrapper
				t.Errorf("%s with port error %v: resp %v, err %v", op.name, want, resp, err)
			}
		}
	}
}

// TestMissingBody checks that an operation whose required body is missing answers
// validation_failed naming body without reaching a port, and that a handler that authorizes
// itself still refuses an actor without the action first.
func TestMissingBody(t *testing.T) {
	t.Parallel()
	for _, op := range operations() {
		if op.noBody == nil {
			continue
		}
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			s, _, ports := newServer(t)
			_, err := op.noBody(as(samID), s)
			p := problem.From(context.Background(), err)
			if p.Code != "validation_failed" || len(p.Errors) != 1 || p.Errors[0].Field != "body" {
				t.Errorf("err = %v, want validation_failed naming body", err)
			}
			if calls := ports.called(); len(calls) != 0 {
				t.Errorf("the handler called %v", calls)
			}
			if op.action == "" {
				return
			}
			s, authz, _ := newServer(t)
			authz.Err = problem.ErrForbidden
			if _, err := op.noBody(as(samID), s); !errors.Is(err, problem.ErrForbidden) {
				t.Errorf("denied without a body: err = %v, want forbidden", err)
			}
		})
	}
}

// written encodes resp as the strict server would (through its Visit method) and returns
// the status, the content type and the body.
func written(t *testing.T, resp any) (int, string, string) {
	t.Helper()
	v := reflect.ValueOf(resp)
	for i := range v.NumMethod() {
		name := v.Type().Method(i).Name
		if !strings.HasPrefix(name, "Visit") {
			continue
		}
		rec := httptest.NewRecorder()
		out := v.Method(i).Call([]reflect.Value{reflect.ValueOf(rec)})
		if err, _ := out[0].Interface().(error); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		body := rec.Body.String()
		if strings.Contains(body, "null") {
			t.Errorf("the body has null: %s", body)
		}
		return rec.Code, rec.Header().Get("Content-Type"), body
	}
	t.Fatalf("%T has no Visit method", resp)
	return 0, "", ""
}

// sameJSON reports whether two JSON documents are equal as values.
func sameJSON(t *testing.T, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("decode %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("decode want %s: %v", want, err)
	}
	return reflect.DeepEqual(g, w)
}

// checkResponse checks the status and the JSON body resp is written with.
func checkResponse(t *testing.T, resp any, wantStatus int, wantBody string) {
	t.Helper()
	status, ctype, body := written(t, resp)
	if status != wantStatus {
		t.Errorf("status = %d, want %d", status, wantStatus)
	}
	if wantBody == "" {
		if body != "" {
			t.Errorf("body = %s, want none", body)
		}
		return
	}
	if ctype != "application/json" {
		t.Errorf("Content-Type = %q", ctype)
	}
	if !sameJSON(t, body, wantBody) {
		t.Errorf("body = %s\nwant   %s", body, wantBody)
	}
}

func TestCreateSpace(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		body   apigen.CreateSpaceRequest
		wantIn chat.SpaceInput
		space  chat.Space
		want   string
	}{
		{
			name:   "without description",
			body:   apigen.CreateSpaceRequest{Name: "Support"},
			wantIn: chat.SpaceInput{Name: "Support"},
			space:  chat.Space{ID: spaceID, Name: "Support", Version: 1, CreatedAt: created},
			want:   `{"id":"` + spaceID.String() + `","name":"Support","version":1,"created_at":"2026-12-01T09:30:15Z"}`,
		},
		{
			name:   "with description",
			body:   apigen.CreateSpaceRequest{Name: " Support ", Description: ptr("Questions from customers")},
			wantIn: chat.SpaceInput{Name: " Support ", Description: "Questions from customers"},
			space:  chat.Space{ID: spaceID, Name: "Support", Description: "Questions from customers", Version: 1, CreatedAt: created},
			want:   `{"id":"` + spaceID.String() + `","name":"Support","description":"Questions from customers","version":1,"created_at":"2026-12-01T09:30:15Z"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _, ports := newServer(t)
			ports.space = tc.space
			resp, err := s.CreateSpace(as(alexID), apigen.CreateSpaceRequestObject{Body: &tc.body})
			if err != nil {
				t.Fatalf("CreateSpace: %v", err)
			}
			if ports.spaceIn != tc.wantIn {
				t.Errorf("input = %+v, want %+v", ports.spaceIn, tc.wantIn)
			}
			checkResponse(t, resp, 201, tc.want)
		})
	}
}

func TestArchiveSpace(t *testing.T) {
	t.Parallel()
	s, _, ports := newServer(t)
	ports.space = chat.Space{ID: spaceID, Name: "Support", Version: 2, CreatedAt: created, ArchivedAt: later}
	resp, err := s.ArchiveSpace(as(alexID), apigen.ArchiveSpaceRequestObject{SpaceId: spaceID})
	if err != nil {
		t.Fatalf("ArchiveSpace: %v", err)
	}
	if ports.id != spaceID {
		t.Errorf("archived %s, want %s", ports.id, spaceID)
	}
	checkResponse(t, resp, 200, `{"id":"`+spaceID.String()+`","name":"Support","version":2,"created_at":"2026-12-01T09:30:15Z","archived_at":"2026-12-01T11:00:15Z"}`)
}

func TestListSpaces(t *testing.T) {
	t.Parallel()
	other := uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000b2")
	tests := []struct {
		name  string
		views []chat.SpaceView
		want  string
	}{
		{name: "none (nil)", views: nil, want: `{"items":[]}`},
		{name: "none (empty)", views: []chat.SpaceView{}, want: `{"items":[]}`},
		{
			name: "level and capabilities, and a space seen through a channel only",
			views: []chat.SpaceView{
				{
					Space: chat.Space{ID: spaceID, Name: "Support", Description: "Questions from customers", Version: 3, CreatedAt: created},
					Level: "admin", Capabilities: []kernel.Action{kernel.ActionChannelCreate, kernel.ActionGrantAdmin, kernel.ActionSpaceArchive, kernel.ActionSpaceUpdate},
				},
				{Space: chat.Space{ID: other, Name: "Team", Version: 1, CreatedAt: created}},
			},
			want: `{"items":[` +
				`{"id":"` + spaceID.String() + `","name":"Support","description":"Questions from customers","version":3,"created_at":"2026-12-01T09:30:15Z","level":"admin","capabilities":["channel.create","grant.admin","space.archive","space.update"]},` +
				`{"id":"` + other.String() + `","name":"Team","version":1,"created_at":"2026-12-01T09:30:15Z","capabilities":[]}]}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _, ports := newServer(t)
			ports.spaceViews = tc.views
			resp, err := s.ListSpaces(as(samID), apigen.ListSpacesRequestObject{})
			if err != nil {
				t.Fatalf("ListSpaces: %v", err)
			}
			checkResponse(t, resp, 200, tc.want)
		})
	}
}

func TestCreateChannel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		body   apigen.CreateChannelRequest
		wantIn chat.ChannelInput
		ch     chat.Channel
		want   string
	}{
		{
			name:   "without topic",
			body:   apigen.CreateChannelRequest{Name: "tickets"},
			wantIn: chat.ChannelInput{SpaceID: spaceID, Name: "tickets"},
			ch:     chat.Channel{ID: channelID, SpaceID: spaceID, Kind: chat.ChannelStandard, Name: "tickets", Version: 1, CreatedAt: created},
			want:   `{"id":"` + channelID.String() + `","space_id":"` + spaceID.String() + `","kind":"standard","name":"tickets","participant_ids":[],"version":1,"created_at":"2026-12-01T09:30:15Z"}`,
		},
		{
			name:   "with topic",
			body:   apigen.CreateChannelRequest{Name: "tickets", Topic: ptr("One thread per ticket")},
			wantIn: chat.ChannelInput{SpaceID: spaceID, Name: "tickets", Topic: "One thread per ticket"},
			ch:     chat.Channel{ID: channelID, SpaceID: spaceID, Kind: chat.ChannelStandard, Name: "tickets", Topic: "One thread per ticket", ParticipantIDs: []uuid.UUID{}, Version: 1, CreatedAt: created},
			want:   `{"id":"` + channelID.String() + `","space_id":"` + spaceID.String() + `","kind":"standard","name":"tickets","topic":"One thread per ticket","participant_ids":[],"version":1,"created_at":"2026-12-01T09:30:15Z"}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _, ports := newServer(t)
			ports.channel = tc.ch
			resp, err := s.CreateChannel(as(alexID), apigen.CreateChannelRequestObject{SpaceId: spaceID, Body: &tc.body})
			if err != nil {
				t.Fatalf("CreateChannel: %v", err)
			}
			if ports.channelIn != tc.wantIn {
				t.Errorf("input = %+v, want %+v", ports.channelIn, tc.wantIn)
			}
			checkResponse(t, resp, 201, tc.want)
		})
	}
}

func TestArchiveChannel(t *testing.T) {
	t.Parallel()
	s, _, ports := newServer(t)
	ports.channel = chat.Channel{ID: channelID, SpaceID: spaceID, Kind: chat.ChannelStandard, Name: "tickets", Version: 4, CreatedAt: created, ArchivedAt: later}
	resp, err := s.ArchiveChannel(as(alexID), apigen.ArchiveChannelRequestObject{ChannelId: channelID})
	if err != nil {
		t.Fatalf("ArchiveChannel: %v", err)
	}
	if ports.id != channelID {
		t.Errorf("archived %s, want %s", ports.id, channelID)
	}
	checkResponse(t, resp, 200, `{"id":"`+channelID.String()+`","space_id":"`+spaceID.String()+`","kind":"standard","name":"tickets","participant_ids":[],"version":4,"created_at":"2026-12-01T09:30:15Z","archived_at":"2026-12-01T11:00:15Z"}`)
}

// dm is the direct message of Alex, Robin and Sam: no space, no name, its participants.
var dm = chat.Channel{ID: dmID, Kind: chat.ChannelDM, ParticipantIDs: []uuid.UUID{alexID, samID, robinID}, Version: 1, CreatedAt: created}

const dmJSON = `{"id":"01938d2a-7c00-7a01-8000-0000000000c2","kind":"dm","participant_ids":["01938d2a-7c00-7a01-8000-0000000000a1","01938d2a-7c00-7a01-8000-0000000000a2","01938d2a-7c00-7a01-8000-0000000000a3"],"version":1,"created_at":"2026-12-01T09:30:15Z"}`

func TestListSpaceChannels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		views []chat.ChannelView
		want  string
	}{
		{name: "none", views: nil, want: `{"items":[]}`},
		{
			name: "standard channel and direct message",
			views: []chat.ChannelView{
				{
					Channel: chat.Channel{ID: channelID, SpaceID: spaceID, Kind: chat.ChannelStandard, Name: "tickets", Topic: "One thread per ticket", Version: 2, CreatedAt: created},
					Level:   "member", Capabilities: []kernel.Action{kernel.ActionDraftWrite, kernel.ActionMessageCreate, kernel.ActionReadStateWrite, kernel.ActionThreadCreate},
				},
				{Channel: dm, Level: "viewer"},
			},
			want: `{"items":[` +
				`{"id":"` + channelID.String() + `","space_id":"` + spaceID.String() + `","kind":"standard","name":"tickets","topic":"One thread per ticket","participant_ids":[],"version":2,"created_at":"2026-12-01T09:30:15Z","level":"member","capabilities":["draft.write","message.create","readstate.write","thread.create"]},` +
				strings.TrimSuffix(dmJSON, "}") + `,"level":"viewer","capabilities":[]}]}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _, ports := newServer(t)
			ports.channelViews = tc.views
			resp, err := s.ListSpaceChannels(as(samID), apigen.ListSpaceChannelsRequestObject{SpaceId: spaceID})
			if err != nil {
				t.Fatalf("ListSpaceChannels: %v", err)
			}
			if ports.id != spaceID {
				t.Errorf("listed space %s, want %s", ports.id, spaceID)
			}
			checkResponse(t, resp, 200, tc.want)
		})
	}
}

func TestCreateDirectMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		ids        []uuid.UUID
		created    bool
		wantStatus int
	}{
		{name: "new", ids: []uuid.UUID{samID, robinID}, created: true, wantStatus: 201},
		{name: "existing", ids: []uuid.UUID{robinID, samID, samID}, created: false, wantStatus: 200},
		// The use case names participant_ids for an empty list; the handler passes it on.
		{name: "absent list", ids: nil, created: true, wantStatus: 201},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _, ports := newServer(t)
			ports.channel, ports.created = dm, tc.created
			resp, err := s.CreateDirectMessage(as(alexID), apigen.CreateDirectMessageRequestObject{Body: &apigen.CreateDirectMessageRequest{ParticipantIds: tc.ids}})
			if err != nil {
				t.Fatalf("CreateDirectMessage: %v", err)
			}
			if !slices.Equal(ports.participants, tc.ids) {
				t.Errorf("participants = %v, want %v as given", ports.participants, tc.ids)
			}
			checkResponse(t, resp, tc.wantStatus, dmJSON)
		})
	}
}

// first is the first message of the thread in the tests, with a mention.
var first = chat.Message{
	ID: messageID, ThreadID: threadID, ChannelID: channelID, SpaceID: spaceID, Seq: 1, AuthorID: alexID,
	ContentMD: "@sam the printer is jammed", MentionIDs: []uuid.UUID{samID}, CreatedAt: created,
}

const firstJSON = `{"id":"01938d2a-7c00-7a01-8000-0000000000e1","thread_id":"01938d2a-7c00-7a01-8000-0000000000d1","channel_id":"01938d2a-7c00-7a01-8000-0000000000c1","space_id":"01938d2a-7c00-7a01-8000-0000000000b1","seq":1,"author_id":"01938d2a-7c00-7a01-8000-0000000000a1","content_md":"@sam the printer is jammed","mention_ids":["01938d2a-7c00-7a01-8000-0000000000a2"],"redacted":false,"reactions":[],"created_at":"2026-12-01T09:30:15Z"}`

func TestCreateThread(t *testing.T) {
	t.Parallel()
	inDM := first
	inDM.SpaceID, inDM.ChannelID, inDM.MentionIDs = uuid.Nil, dmID, nil
	tests := []struct {
		name   string
		body   apigen.CreateThreadRequest
		wantIn chat.ThreadInput
		thread chat.Thread
		msg    chat.Message
		want   string
	}{
		{
			name:   "with title in a space",
			body:   apigen.CreateThreadRequest{Title: ptr("Printer on floor 2"), ContentMd: "@sam the printer is jammed"},
			wantIn: chat.ThreadInput{ChannelID: channelID, Title: "Printer on floor 2", ContentMD: "@sam the printer is jammed"},
			thread: chat.Thread{ID: threadID, ChannelID: channelID, SpaceID: spaceID, Title: "Printer on floor 2", CreatedBy: alexID, CreatedAt: created, Version: 1, LastMessageSeq: 1},
			msg:    first,
			want: `{"id":"01938d2a-7c00-7a01-8000-0000000000d1","channel_id":"01938d2a-7c00-7a01-8000-0000000000c1","space_id":"01938d2a-7c00-7a01-8000-0000000000b1","title":"Printer on floor 2",` +
				`"created_by":"01938d2a-7c00-7a01-8000-0000000000a1","created_at":"2026-12-01T09:30:15Z","version":1,"last_message_seq":1,"first_message":` + firstJSON + `}`,
		},
		{
			name:   "without title in a direct message",
			body:   apigen.CreateThreadRequest{ContentMd: "@sam the printer is jammed"},
			wantIn: chat.ThreadInput{ChannelID: dmID, ContentMD: "@sam the printer is jammed"},
			thread: chat.Thread{ID: threadID, ChannelID: dmID, CreatedBy: alexID, CreatedAt: created, Version: 1, LastMessageSeq: 1},
			msg:    inDM,
			want: `{"id":"01938d2a-7c00-7a01-8000-0000000000d1","channel_id":"01938d2a-7c00-7a01-8000-0000000000c2",` +
				`"created_by":"01938d2a-7c00-7a01-8000-0000000000a1","created_at":"2026-12-01T09:30:15Z","version":1,"last_message_seq":1,"first_message":` +
				`{"id":"01938d2a-7c00-7a01-8000-0000000000e1","thread_id":"01938d2a-7c00-7a01-8000-0000000000d1","channel_id":"01938d2a-7c00-7a01-8000-0000000000c2","seq":1,"author_id":"01938d2a-7c00-7a01-8000-0000000000a1","content_md":"@sam the printer is jammed","mention_ids":[],"redacted":false,"reactions":[],"created_at":"2026-12-01T09:30:15Z"}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _, ports := newServer(t)
			ports.thread, ports.message = tc.thread, tc.msg
			resp, err := s.CreateThread(as(alexID), apigen.CreateThreadRequestObject{ChannelId: tc.wantIn.ChannelID, Body: &tc.body})
			if err != nil {
				t.Fatalf("CreateThread: %v", err)
			}
			if ports.threadIn != tc.wantIn {
				t.Errorf("input = %+v, want %+v", ports.threadIn, tc.wantIn)
			}
			checkResponse(t, resp, 201, tc.want)
		})
	}
}

func TestPostMessage(t *testing.T) {
	t.Parallel()
	s, _, ports := newServer(t)
	ports.message = first
	resp, err := s.PostMessage(as(alexID), apigen.PostMessageRequestObject{ThreadId: threadID, Body: &apigen.PostMessageRequest{ContentMd: "@sam the printer is jammed"}})
	if err != nil {
		t.Fatalf("PostMessage: %v", err)
	}
	if want := (chat.MessageInput{ThreadID: threadID, ContentMD: "@sam the printer is jammed"}); ports.messageIn != want {
		t.Errorf("input = %+v, want %+v", ports.messageIn, want)
	}
	checkResponse(t, resp, 201, firstJSON)
}

func TestEditMessage(t *testing.T) {
	t.Parallel()
	edited := first
	edited.ContentMD, edited.MentionIDs, edited.EditedAt = "the printer works again", nil, later
	s, _, ports := newServer(t)
	ports.message = edited
	resp, err := s.EditMessage(as(alexID), apigen.EditMessageRequestObject{MessageId: messageID, Body: &apigen.EditMessageRequest{ContentMd: "the printer works again"}})
	if err != nil {
		t.Fatalf("EditMessage: %v", err)
	}
	if ports.id != messageID || ports.content != "the printer works again" {
		t.Errorf("edited %s with %q", ports.id, ports.content)
	}
	checkResponse(t, resp, 200, `{"id":"01938d2a-7c00-7a01-8000-0000000000e1","thread_id":"01938d2a-7c00-7a01-8000-0000000000d1","channel_id":"01938d2a-7c00-7a01-8000-0000000000c1","space_id":"01938d2a-7c00-7a01-8000-0000000000b1","seq":1,"author_id":"01938d2a-7c00-7a01-8000-0000000000a1","content_md":"the printer works again","mention_ids":[],"redacted":false,"reactions":[],"created_at":"2026-12-01T09:30:15Z","edited_at":"2026-12-01T11:00:15Z"}`)
}

func TestDeleteMessage(t *testing.T) {
	t.Parallel()
	s, _, ports := newServer(t)
	resp, err := s.DeleteMessage(as(alexID), apigen.DeleteMessageRequestObject{MessageId: messageID})
	if err != nil {
		t.Fatalf("DeleteMessage: %v", err)
	}
	if ports.id != messageID {
		t.Errorf("deleted %s, want %s", ports.id, messageID)
	}
	checkResponse(t, resp, 204, "")
}

func TestReactionHandlers(t *testing.T) {
	t.Parallel()
	s, _, ports := newServer(t)
	resp, err := s.AddReaction(as(alexID), apigen.AddReactionRequestObject{MessageId: messageID, Reaction: "\U0001F44D"})
	if err != nil {
		t.Fatalf("AddReaction: %v", err)
	}
	if ports.id != messageID || ports.reaction != "\U0001F44D" {
		t.Errorf("added %q to %s, want the thumbs up to %s", ports.reaction, ports.id, messageID)
	}
	checkResponse(t, resp, 204, "")
	removed, err := s.RemoveReaction(as(alexID), apigen.RemoveReactionRequestObject{MessageId: messageID, Reaction: ":tada:"})
	if err != nil {
		t.Fatalf("RemoveReaction: %v", err)
	}
	if ports.id != messageID || ports.reaction != ":tada:" {
		t.Errorf("removed %q from %s, want :tada: from %s", ports.reaction, ports.id, messageID)
	}
	checkResponse(t, removed, 204, "")
	if got := ports.called(); len(got) != 2 || got[0] != "Reactions.Add" || got[1] != "Reactions.Remove" {
		t.Errorf("ports called %v", got)
	}
}

// page returns n messages of the thread from seq from on; the one with seq 3 is redacted.
func page(from int64, n int) []chat.Message {
	out := make([]chat.Message, n)
	for i := range out {
		m := first
		m.Seq = from + int64(i)
		m.ID = uuid.NewSHA1(threadID, []byte(strconv.FormatInt(m.Seq, 10)))
		if m.Seq == 3 {
			m.ContentMD, m.MentionIDs, m.RedactedAt = "", nil, later
		}
		out[i] = m
	}
	return out
}

func TestListMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		params    apigen.ListMessagesParams
		answer    []chat.Message
		wantAfter int64
		wantLimit int
		wantNext  *int64
	}{
		{name: "defaults", answer: page(1, 3), wantAfter: 0, wantLimit: pageSize},
		{name: "after", params: apigen.ListMessagesParams{After: ptr[int64](7)}, answer: nil, wantAfter: 7, wantLimit: pageSize},
		{name: "after zero", params: apigen.ListMessagesParams{After: ptr[int64](0)}, answer: page(1, 2), wantAfter: 0, wantLimit: pageSize},
		{name: "small limit, full page", params: apigen.ListMessagesParams{Limit: ptr(2), After: ptr[int64](2)}, answer: page(3, 2), wantAfter: 2, wantLimit: 2, wantNext: ptr[int64](4)},
		{name: "small limit, short page", params: apigen.ListMessagesParams{Limit: ptr(5)}, answer: page(1, 4), wantLimit: 5},
		{name: "limit zero is the default", params: apigen.ListMessagesParams{Limit: ptr(0)}, answer: page(1, 1), wantLimit: pageSize},
		{name: "negative limit is the default", params: apigen.ListMessagesParams{Limit: ptr(-3)}, answer: page(1, 1), wantLimit: pageSize},
		{name: "limit at the page size", params: apigen.ListMessagesParams{Limit: ptr(pageSize)}, answer: page(1, pageSize), wantLimit: pageSize, wantNext: ptr[int64](pageSize)},
		{name: "limit above the page size is capped", params: apigen.ListMessagesParams{Limit: ptr(pageSize + 1)}, answer: page(11, pageSize), wantLimit: pageSize, wantNext: ptr[int64](10 + pageSize)},
		{name: "default limit, full page", answer: page(1, pageSize), wantLimit: pageSize, wantNext: ptr[int64](pageSize)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _, ports := newServer(t)
			ports.messages = tc.answer
			resp, err := s.ListMessages(as(samID), apigen.ListMessagesRequestObject{ThreadId: threadID, Params: tc.params})
			if err != nil {
				t.Fatalf("ListMessages: %v", err)
			}
			if ports.id != threadID || ports.after != tc.wantAfter || ports.limit != tc.wantLimit {
				t.Errorf("List(%s, %d, %d), want (%s, %d, %d)", ports.id, ports.after, ports.limit, threadID, tc.wantAfter, tc.wantLimit)
			}
			status, _, body := written(t, resp)
			if status != 200 {
				t.Errorf("status = %d", status)
			}
			var got struct {
				Items []struct {
					Seq        int64       `json:"seq"`
					Redacted   bool        `json:"redacted"`
					RedactedAt *time.Time  `json:"redacted_at"`
					ContentMD  *string     `json:"content_md"`
					MentionIDs []uuid.UUID `json:"mention_ids"`
				} `json:"items"`
				NextCursor *int64 `json:"next_cursor"`
			}
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatalf("decode %s: %v", body, err)
			}
			if got.Items == nil || len(got.Items) != len(tc.answer) {
				t.Fatalf("items = %v, want %d (never null)", got.Items, len(tc.answer))
			}
			for i, m := range got.Items {
				if m.Seq != tc.answer[i].Seq || m.ContentMD == nil || m.MentionIDs == nil {
					t.Errorf("item %d = %+v", i, m)
				}
				if redacted := m.Seq == 3; m.Redacted != redacted || (m.RedactedAt != nil) != redacted || (redacted && *m.ContentMD != "") {
					t.Errorf("item %d: redacted %v at %v content %q", i, m.Redacted, m.RedactedAt, *m.ContentMD)
				}
			}
			if (got.NextCursor == nil) != (tc.wantNext == nil) || (tc.wantNext != nil && *got.NextCursor != *tc.wantNext) {
				t.Errorf("next_cursor = %v, want %v (body %s)", got.NextCursor, tc.wantNext, body)
			}
			if tc.wantNext == nil && strings.Contains(body, "next_cursor") {
				t.Errorf("body %s has next_cursor on the last page", body)
			}
		})
	}
}

func TestListMessagesRefusesNegativeAfter(t *testing.T) {
	t.Parallel()
	for _, after := range []int64{-1, -1 << 62} {
		s, _, ports := newServer(t)
		resp, err := s.ListMessages(as(samID), apigen.ListMessagesRequestObject{ThreadId: threadID, Params: apigen.ListMessagesParams{After: &after}})
		p := problem.From(context.Background(), err)
		if resp != nil || p.Code != "validation_failed" || len(p.Errors) != 1 || p.Errors[0].Field != "after" {
			t.Errorf("after %d: resp %v, err %v; want validation_failed naming after", after, resp, err)
		}
		if calls := ports.called(); len(calls) != 0 {
			t.Errorf("after %d: the handler called %v", after, calls)
		}
	}
}

// TestSearchMessagesPassesTheRequestAndMapsThePage checks the handler's two mappings: every
// parameter reaches the use case (absent ones as uuid.Nil, the zero time, "" and 0), and a
// page maps to items with their excerpt segments and next_cursor only when there is one.
func TestSearchMessagesPassesTheRequestAndMapsThePage(t *testing.T) {
	t.Parallel()
	s, _, f := newServer(t)
	before := later
	f.searchPage = chat.SearchPage{
		Hits: []chat.SearchHit{{
			Message: chat.Message{ID: messageID, ThreadID: threadID, ChannelID: channelID, SpaceID: spaceID, Seq: 1, AuthorID: samID, ContentMD: "printer jammed", CreatedAt: created},
			Rank:    0.5,
			Excerpt: []chat.ExcerptSegment{{Text: "printer", Match: true}, {Text: " jammed"}},
		}},
		NextCursor: "abc",
	}
	res, err := s.SearchMessages(as(samID), apigen.SearchMessagesRequestObject{Params: apigen.SearchMessagesParams{
		Q: "printer", SpaceId: ptr(spaceID), ChannelId: ptr(channelID), ThreadId: ptr(threadID), AuthorId: ptr(samID),
		Before: &before, After: ptr(created), Cursor: ptr("xyz"), Limit: ptr(7),
	}})
	if err != nil {
		t.Fatalf("SearchMessages: %v", err)
	}
	want := chat.SearchQuery{Text: "printer", SpaceID: spaceID, ChannelID: channelID, ThreadID: threadID, AuthorID: samID, Before: later, After: created, Cursor: "xyz", Limit: 7}
	if f.searchIn != want {
		t.Errorf("query = %+v, want %+v", f.searchIn, want)
	}
	page := res.(apigen.SearchMessages200JSONResponse)
	if len(page.Items) != 1 || page.Items[0].Rank != 0.5 || len(page.Items[0].Excerpt) != 2 ||
		page.Items[0].Excerpt[0] != (apigen.ExcerptSegment{Text: "printer", Match: true}) || page.Items[0].Message.Id != messageID {
		t.Errorf("items = %+v", page.Items)
	}
	if page.NextCursor == nil || *page.NextCursor != "abc" {
		t.Errorf("next_cursor = %v, want abc", page.NextCursor)
	}

	f.searchPage = chat.SearchPage{}
	res, err = s.SearchMessages(as(samID), apigen.SearchMessagesRequestObject{Params: apigen.SearchMessagesParams{Q: "printer"}})
	if err != nil {
		t.Fatalf("SearchMessages: %v", err)
	}
	if want := (chat.SearchQuery{Text: "printer"}); f.searchIn != want {
		t.Errorf("query without filters = %+v, want %+v", f.searchIn, want)
	}
	page = res.(apigen.SearchMessages200JSONResponse)
	if page.Items == nil || len(page.Items) != 0 || page.NextCursor != nil {
		t.Errorf("empty page = %+v, want items [] and no next_cursor", page)
	}
}

// TestConditionalReads checks the ETag of the single-object reads: the 200 carries the tag of
// its body and Cache-Control private, no-cache; the same tag in If-None-Match (also among
// others, weak or as *) answers 304 with the headers and no body; another tag answers 200;
// and a change of the object changes the tag.
func TestConditionalReads(t *testing.T) {
	t.Parallel()
	get := func(t *testing.T, s *httpapi.Server, inm *string) (int, http.Header, string) {
		t.Helper()
		resp, err := s.GetMessage(as(samID), apigen.GetMessageRequestObject{MessageId: messageID, Params: apigen.GetMessageParams{IfNoneMatch: inm}})
		if err != nil {
			t.Fatalf("GetMessage: %v", err)
		}
		rec := httptest.NewRecorder()
		if err := resp.VisitGetMessageResponse(rec); err != nil {
			t.Fatal(err)
		}
		return rec.Code, rec.Header(), rec.Body.String()
	}
	s, _, f := newServer(t)
	f.message = chat.Message{ID: messageID, ThreadID: threadID, ChannelID: channelID, SpaceID: spaceID, Seq: 2, AuthorID: samID, ContentMD: "On my way", CreatedAt: created}
	status, h, body := get(t, s, nil)
	tag := h.Get("ETag")
	if status != http.StatusOK || tag == "" || h.Get("Cache-Control") != "private, no-cache" || !strings.Contains(body, "On my way") {
		t.Fatalf("first read: %d %v %s", status, h, body)
	}
	if want := conditional.Tag([]byte(strings.TrimSuffix(body, "\n"))); tag != want {
		t.Errorf("ETag %s is not the tag of the body sent (%s)", tag, want)
	}
	for _, inm := range []string{tag, "W/" + tag, `"other", ` + tag, "*"} {
		status, h, body := get(t, s, &inm)
		if status != http.StatusNotModified || body != "" || h.Get("ETag") != tag || h.Get("Cache-Control") != "private, no-cache" {
			t.Errorf("If-None-Match %s: %d %v %q, want 304 with the tag and no body", inm, status, h, body)
		}
	}
	other := `"other"`
	if status, _, _ := get(t, s, &other); status != http.StatusOK {
		t.Errorf("another tag: %d, want 200", status)
	}
	f.message.ContentMD, f.message.EditedAt = "On my way (five minutes)", later
	status, h, _ = get(t, s, &tag)
	if status != http.StatusOK || h.Get("ETag") == tag {
		t.Errorf("after an edit: %d with ETag %s, want 200 with a new tag", status, h.Get("ETag"))
	}
}

// TestListChannelMembers checks the parameters the handler passes (cursor and limit as
// given; the use case caps) and the page it answers: members with their principal and level,
// next_cursor when the module gives one.
func TestListChannelMembers(t *testing.T) {
	t.Parallel()
	s, _, f := newServer(t)
	f.memberPage = chat.MemberPage{
		Items: []chat.Member{{Principal: identity.PrincipalRef{ID: samID, Kind: actor.KindPerson, DisplayName: "Sam", Handle: "sam"}, Level: "member"}},
		Next:  samID,
	}
	resp, err := s.ListChannelMembers(as(samID), apigen.ListChannelMembersRequestObject{ChannelId: channelID, Params: apigen.ListChannelMembersParams{Cursor: &alexID, Limit: ptr(7)}})
	if err != nil {
		t.Fatal(err)
	}
	if f.id != channelID || f.memberAfter != alexID || f.limit != 7 {
		t.Errorf("Members(%s, %s, %d)", f.id, f.memberAfter, f.limit)
	}
	status, _, body := written(t, resp)
	want := `{"items":[{"level":"member","principal":{"display_name":"Sam","handle":"sam","id":"` + samID.String() + `","kind":"person"}}],"next_cursor":"` + samID.String() + `"}` + "\n"
	if status != http.StatusOK || body != want {
		t.Errorf("answer %d %s, want %s", status, body, want)
	}
	f.memberPage = chat.MemberPage{}
	resp, err = s.ListChannelMembers(as(samID), apigen.ListChannelMembersRequestObject{ChannelId: channelID})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, body := written(t, resp); body != `{"items":[]}`+"\n" || f.memberAfter != uuid.Nil || f.limit != 0 {
		t.Errorf("last page: %s (after %s, limit %d)", body, f.memberAfter, f.limit)
	}
}
