package main

import "context"

// sdkBenchCase is the sdk case (sdkCase), in the sync world with Sam grown.
type sdkBenchCase struct{}

// Name is sdk.
func (sdkBenchCase) Name() string { return "sdk" }

// World is the sync world.
func (sdkBenchCase) World() string { return syncWorldKey }

// Run times the TypeScript SDK's cold start in Node against a bare fetch loop.
func (sdkBenchCase) Run(ctx context.Context, env *benchEnv) ([]section, error) {
	s, err := openSyncWorld(ctx, env)
	if err != nil {
		return nil, err
	}
	if err := s.grow(ctx, env.Progress); err != nil {
		return nil, err
	}
	r, err := sdkCase(ctx, s.world, s.grownHead, env.Options.clientRounds, env.Progress)
	if err != nil {
		return nil, err
	}
	return []section{r}, nil
}

// sidebarBenchCase is the sidebar case (sidebarCase), in the sync world with Sam grown; the
// world's App serves the web client's build.
type sidebarBenchCase struct{}

// Name is sidebar.
func (sidebarBenchCase) Name() string { return "sidebar" }

// World is the sync world.
func (sidebarBenchCase) World() string { return syncWorldKey }

// ServesWebClient is true: the sync world's App serves the web client's build.
func (sidebarBenchCase) ServesWebClient() bool { return true }

// Run times the web client's first render of the sidebar in Chromium against a static page.
func (sidebarBenchCase) Run(ctx context.Context, env *benchEnv) ([]section, error) {
	s, err := openSyncWorld(ctx, env)
	if err != nil {
		return nil, err
	}
	if err := s.grow(ctx, env.Progress); err != nil {
		return nil, err
	}
	r, err := sidebarCase(ctx, s.world, env.Options.clientRounds, env.Progress)
	if err != nil {
		return nil, err
	}
	return []section{r}, nil
}
