package wire

import (
	"fmt"

	authzapp "bothy.example.com/server/internal/authz/app"
	chathttp "bothy.example.com/server/internal/chat/adapters/httpapi"
	chatapp "bothy.example.com/server/internal/chat/app"
	syncapp "bothy.example.com/server/internal/sync/app"
)

// buildChat builds the chat module: its use cases over its store, the Authorizer and authz's
// grants and readers (direct messages, member lists), identity's principals (mentions),
// sync's own-read marker (an author's post is read by them, in the post's transaction) and
// the agents' invocations (a post invokes and answers them, ADR 0031); its thread list over
// sync's read states with sync's unread rule (syncUnreads); and its handlers.
func (m *modules) buildChat(b base, c chatapp.Config, tl chatapp.ThreadListConfig, st stores, authorizer *authzapp.Authorizer) error {
	marker, err := syncapp.NewOwnReads(st.personal, b.log.appender, b.clock)
	if err != nil {
		return fmt.Errorf("own reads: %w", err)
	}
	service, err := chatapp.New(chatapp.Deps{
		Store:       st.chat,
		Tx:          b.runner,
		Appender:    b.log.appender,
		Redactor:    b.log.appender,
		Authorizer:  authorizer,
		Grants:      m.grants,
		Principals:  m.identity,
		OwnReads:    ownReads{reads: marker},
		Readers:     st.grants,
		Invocations: chatInvocations{invocations: m.invocations},
		Clock:       b.clock,
		Config:      c,
	})
	if err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	threadList, err := chatapp.NewThreadList(chatapp.ThreadListDeps{
		Store:      st.chat,
		Authorizer: authorizer,
		Unreads:    syncUnreads{store: st.personal},
		Config:     tl,
	})
	if err != nil {
		return fmt.Errorf("thread list: %w", err)
	}
	m.chat = service
	m.handlers.chat, err = chathttp.New(chathttp.Deps{
		Authorizer:       authorizer,
		Spaces:           service.Spaces(),
		Channels:         service.Channels(),
		Threads:          service.Threads(),
		Messages:         service.Messages(),
		Reactions:        service.Reactions(),
		Search:           service.Search(),
		ThreadList:       threadList,
		MessagesPageSize: c.MessagesPageSize,
	})
	if err != nil {
		return fmt.Errorf("chat http: %w", err)
	}
	return nil
}
