package wire

import (
	"bothy.example.com/server/internal/chat"
	syncmod "bothy.example.com/server/internal/sync"
)

// CatchUp returns the process's catch-up (the sync.CatchUp port listEvents and the gateway's
// resume share), for the benchmark, which measures a page through it beside the same page
// over HTTP.
func (a *App) CatchUp() syncmod.CatchUp {
	return a.sync.catchUp
}

// Messages returns the chat module's message use cases, acting as the actor the caller's
// context carries (kernel/actor.With), exactly as postMessage runs them after authentication:
// authorization, mentions, and the agents' invocations in the message's transaction (ADR
// 0031). It is for the benchmark, which posts in process so that it can time a post from the
// return of its transaction's commit, as it times the appender's commits; the HTTP API is the
// way in for everything else.
func (a *App) Messages() chat.Messages {
	return a.chat.Messages()
}
