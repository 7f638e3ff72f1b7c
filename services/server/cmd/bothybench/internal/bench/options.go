package bench

import (
	"time"
)

// Options are the command's flags.
type Options struct {
	Out       string
	Duration  time.Duration
	Warmup    time.Duration
	Writers   []int
	Batches   []int
	Rate      int
	LatWriter int
	AuthzTime time.Duration
	// SyncEvents and syncChannels size the sync world of the catch-up and snapshot cases.
	SyncEvents   int
	SyncChannels int
	// PageCursors is how many cursors each reader's catch-up pages start at (pageCursors;
	// the smoke test takes fewer).
	PageCursors int
	// IngestCommits is the size of the ingest case's generated repository.
	IngestCommits int
	// SearchMessages is how many messages the search case's world has.
	SearchMessages int
	// Threads is the size of the thread list case's channel.
	Threads int
	// ClientRounds is how many measured rounds the client cases run (clientRounds; the smoke
	// test takes fewer).
	ClientRounds int
	// Cases are the case groups to run (caseGroups), in their fixed order.
	Cases map[string]bool
	// The gateway cases' sizes (gwLatencyConns and the others; the smoke test takes fewer).
	GwLatencyConns, GwRate, GwFanoutConns, GwIdleConns int
	// The invocation case's sizes (invAgents, invRate; the smoke test takes fewer).
	InvAgents, InvRate int
}
