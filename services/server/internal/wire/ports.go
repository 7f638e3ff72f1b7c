package wire

import (
	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/instance"
	syncmod "bothy.example.com/server/internal/sync"
)

// Ports are the modules' ports as the programs beside the API use them: bothy admin (the
// owner's bootstrap, tokens, principals, feature flags), the benchmark (posts and catch-up
// pages in process) and the end-to-end tests. Each field is a port its module declares in its
// root package and this process's use cases implement; nothing here authorizes beyond what
// the port says, so only code that holds the database (an operator's command, a test) has it.
type Ports struct {
	// Owners creates the instance's first owner.
	Owners authz.Owners
	// Principals creates, reads, deactivates and reactivates principals.
	Principals identity.Principals
	// Directory names principals and finds them by handle.
	Directory identity.Directory
	// Tokens issues, lists and revokes tokens.
	Tokens identity.Tokens
	// Flags defines feature flags and their overrides.
	Flags instance.FlagAdmin
	// Versions reads the instance's counters and sync epoch without a lock.
	Versions instance.Versions
	// Messages posts, edits and lists messages as the actor in ctx (kernel/actor.With),
	// exactly as postMessage runs them after authentication: authorization, mentions, and the
	// agents' invocations in the message's transaction (ADR 0031).
	Messages chat.Messages
	// Mentions counts unread mentions.
	Mentions chat.Mentions
	// Personal keeps read states, drafts, settings and sidebars.
	Personal syncmod.Personal
	// CatchUp is the catch-up listEvents and the gateway's resume share.
	CatchUp syncmod.CatchUp
}

// Ports returns this process's modules' ports (see Ports).
func (a *App) Ports() Ports {
	return Ports{
		Owners:     a.bootstrap,
		Principals: a.identity,
		Directory:  a.identity,
		Tokens:     a.identity.Tokens(),
		Flags:      a.flags,
		Versions:   a.instance,
		Messages:   a.chat.Messages(),
		Mentions:   a.chat.Mentions(),
		Personal:   a.personal,
		CatchUp:    a.sync.catchUp,
	}
}
