// Package httpapi is the chat module's HTTP edge: the strict-server handlers of createSpace,
// listSpaces, archiveSpace, createChannel, listSpaceChannels, archiveChannel,
// createDirectMessage, createThread, listChannelThreads, postMessage, listMessages, editMessage,
// deleteMessage, addReaction, removeReaction and searchMessages (one file each, named after the
// operation) and the mapping between the API's models and
// the module's (mapping.go).
//
// The handlers are thin, and these are their rules:
//
//   - Authorization. Spec 04 asks every operation to authorize before it does anything. Where
//     the resource is known before any read (createSpace and listSpaces: space.create and
//     space.read on the instance; createDirectMessage: channel.create on the instance;
//     searchMessages: thread.read on the instance) the
//     handler asks authorize.Authorizer first, so an actor without the action is refused
//     before its request is even looked at; the use case asks again, which costs a cached
//     lookup and changes nothing. Every other operation acts on a space, channel, thread or
//     message whose ancestors (authorize.Resource's SpaceID, ChannelID, ThreadID) are only
//     known once its row is loaded, so its use case authorizes right after that read and the
//     handler does not: a handler decision without the ancestors would be a wrong one.
//   - Problems are errors. Every refusal, bad input, unknown id or conflict is returned as
//     the error of its kind (kernel/problem), unchanged, so the server's one edge writer
//     (problem.Write through the strict server's error hook) renders it, and a 404 for a
//     resource the actor may not see is byte for byte the 404 for one that does not exist.
//     The handlers add only the errors of the request's shape: a missing body names body,
//     a negative after names after.
//   - Successes are typed responses with the status of api/openapi.yaml (createDirectMessage
//     answers 201 when it opened the direct message and 200 when it existed already).
//   - No JSON null: optional members are omitted when empty (a zero time, uuid.Nil for the
//     space of a direct message, an empty string, an empty level) and lists are [] even when
//     the module hands over nil.
//   - Pages: listMessages passes the configured page size (chat.messages_page_size) as the
//     limit when the request has none, below 1 or above it, and sets next_cursor to the seq
//     of the page's last message when the page is full.
package httpapi

import (
	"errors"
	"fmt"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/kernel/authorize"
)

// Deps are the collaborators of a Server, all required.
type Deps struct {
	// Authorizer decides the operations whose resource is the instance before they run.
	Authorizer authorize.Authorizer
	// Spaces creates, lists and archives spaces.
	Spaces chat.Spaces
	// Channels creates, lists and archives channels and opens direct messages.
	Channels chat.Channels
	// Threads starts threads.
	Threads chat.Threads
	// Messages posts, pages, edits and deletes messages.
	Messages chat.Messages
	// Reactions adds and takes back reactions to messages.
	Reactions chat.Reactions
	// Search finds messages by their text (searchMessages).
	Search chat.Search
	// ThreadList lists a channel's threads (listChannelThreads).
	ThreadList chat.ThreadList
	// MessagesPageSize is chat.messages_page_size, the default and the cap of listMessages'
	// limit. The handler needs it to tell a full page (more may follow: next_cursor) from the
	// last one; wire hands it the same value as the chat use cases.
	MessagesPageSize int
}

// Server implements the chat operations of apigen.StrictServerInterface; wire embeds it in
// the one strict server it mounts.
type Server struct {
	authz     authorize.Authorizer
	spaces    chat.Spaces
	channels  chat.Channels
	threads   chat.Threads
	messages  chat.Messages
	reactions chat.Reactions
	search    chat.Search
	pageSize  int
	list      chat.ThreadList
}

// New returns a Server over deps; it fails when a dependency is missing or the page size is
// below 1, so a wiring mistake stops the process at start instead of failing the first
// request.
func New(deps Deps) (*Server, error) {
	var errs []error
	if deps.Authorizer == nil {
		errs = append(errs, errors.New("authorizer is nil"))
	}
	if deps.Spaces == nil {
		errs = append(errs, errors.New("spaces port is nil"))
	}
	if deps.Channels == nil {
		errs = append(errs, errors.New("channels port is nil"))
	}
	if deps.Threads == nil {
		errs = append(errs, errors.New("threads port is nil"))
	}
	if deps.Messages == nil {
		errs = append(errs, errors.New("messages port is nil"))
	}
	if deps.Reactions == nil {
		errs = append(errs, errors.New("reactions port is nil"))
	}
	if deps.Search == nil {
		errs = append(errs, errors.New("search port is nil"))
	}
	if deps.ThreadList == nil {
		errs = append(errs, errors.New("thread list port is nil"))
	}
	if deps.MessagesPageSize < 1 {
		errs = append(errs, fmt.Errorf("messages page size %d is below 1", deps.MessagesPageSize))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("chat http: %w", err)
	}
	return &Server{
		authz: deps.Authorizer, spaces: deps.Spaces, channels: deps.Channels, threads: deps.Threads,
		messages: deps.Messages, reactions: deps.Reactions, search: deps.Search, pageSize: deps.MessagesPageSize,
		list: deps.ThreadList,
	}, nil
}
