package clientbench

import (
	"context"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/cmd/bothybench/internal/syncbench"
)

// SDK is the sdk case (sdkCase), in the sync world with Sam grown.
type SDK struct{}

// Name is sdk.
func (SDK) Name() string { return "sdk" }

// World is the sync world.
func (SDK) World() string { return syncbench.SyncWorldKey }

// Run times the TypeScript SDK's cold start in Node against a bare fetch loop.
func (SDK) Run(ctx context.Context, env *bench.Env) ([]bench.Section, error) {
	s, err := syncbench.OpenSyncWorld(ctx, env)
	if err != nil {
		return nil, err
	}
	if err := s.Grow(ctx, env.Progress); err != nil {
		return nil, err
	}
	r, err := sdkCase(ctx, s.World, s.GrownHead, env.Options.ClientRounds, env.Progress)
	if err != nil {
		return nil, err
	}
	return []bench.Section{r}, nil
}

// Sidebar is the sidebar case (sidebarCase), in the sync world with Sam grown; the
// world's App serves the web client's build.
type Sidebar struct{}

// Name is sidebar.
func (Sidebar) Name() string { return "sidebar" }

// World is the sync world.
func (Sidebar) World() string { return syncbench.SyncWorldKey }

// ServesWebClient is true: the sync world's App serves the web client's build.
func (Sidebar) ServesWebClient() bool { return true }

// Run times the web client's first render of the sidebar in Chromium against a static page.
func (Sidebar) Run(ctx context.Context, env *bench.Env) ([]bench.Section, error) {
	s, err := syncbench.OpenSyncWorld(ctx, env)
	if err != nil {
		return nil, err
	}
	if err := s.Grow(ctx, env.Progress); err != nil {
		return nil, err
	}
	r, err := sidebarCase(ctx, s.World, env.Options.ClientRounds, env.Progress)
	if err != nil {
		return nil, err
	}
	return []bench.Section{r}, nil
}
