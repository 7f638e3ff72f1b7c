package wire

import syncmod "bothy.example.com/server/internal/sync"

// CatchUp returns the process's catch-up (the sync.CatchUp port listEvents and the gateway's
// resume share), for the benchmark, which measures a page through it beside the same page
// over HTTP.
func (a *App) CatchUp() syncmod.CatchUp {
	return a.sync.catchUp
}
