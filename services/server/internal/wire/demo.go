package wire

import (
	"context"

	"bothy.example.com/server/internal/demo"
)

// The demo world's types, as bothy admin demo prints them (package demo builds the world).
type (
	// DemoWorld is what Demo built or found.
	DemoWorld = demo.World
	// DemoPerson is one principal of the demo world, with a token issued by the run.
	DemoPerson = demo.Person
	// DemoSpace is a space of the demo world with its channels.
	DemoSpace = demo.Space
	// DemoChannel is a channel of the demo world.
	DemoChannel = demo.Channel
	// DemoThread is a thread of the demo world.
	DemoThread = demo.Thread
	// DemoCounts counts what one run of Demo created.
	DemoCounts = demo.Counts
)

// Demo builds the demo world of make demo, or completes it, through this process's use cases
// (demo.Run binds nothing else), and issues a fresh token for each of its principals.
func (a *App) Demo(ctx context.Context) (DemoWorld, error) {
	return demo.Run(ctx, demo.Deps{
		Owners:     a.bootstrap,
		Principals: a.identity,
		Directory:  a.identity,
		Tokens:     a.identity.Tokens(),
		Grants:     a.grants,
		Agents:     a.agents,
		Spaces:     a.chat.Spaces(),
		Channels:   a.chat.Channels(),
		Threads:    a.chat.Threads(),
		Messages:   a.chat.Messages(),
		Personal:   a.personal,
		Addr:       a.addr,
	})
}
