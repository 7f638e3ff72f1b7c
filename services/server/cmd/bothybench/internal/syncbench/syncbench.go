package syncbench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
	"bothy.example.com/server/internal/kernel/config"
	syncapp "bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/webui"
	"bothy.example.com/server/internal/wire"
)

// SyncWorldKey names the sync world among the env's shared worlds: the sync, sdk, sidebar and
// consumer cases run in it, in that order.
const SyncWorldKey = "sync"

// SyncShared is the sync world as the cases share it: a second App on a database of its own
// (so the world is not mixed with the append cases' events and their owner), served on
// 127.0.0.1:0, with the world built in it (buildSyncWorld), and whether Sam has grown to the
// snapshot's person yet.
type SyncShared struct {
	app          *wire.App
	bare         *pgxpool.Pool
	World        *SyncWorld
	cuCfg        syncapp.CatchUpConfig
	worldSeconds float64
	grown        bool
	// GrownHead is the head of the log once Sam has grown.
	GrownHead int64
}

// OpenSyncWorld returns the env's sync world, wiring, serving and building it the first
// time; the runner closes it after the last case in it. It serves the web client's build when
// a selected case needs it (benchEnv.WebClient).
func OpenSyncWorld(ctx context.Context, env *bench.Env) (*SyncShared, error) {
	v, err := env.Shared(SyncWorldKey, func() (any, func() error, error) { return buildSyncShared(ctx, env) })
	if err != nil {
		return nil, err
	}
	s, ok := v.(*SyncShared)
	if !ok {
		return nil, errors.New("sync world: shared world of another type")
	}
	return s, nil
}

// buildSyncShared wires, serves and builds the sync world; the function it returns stops the
// server and closes the App.
func buildSyncShared(ctx context.Context, env *bench.Env) (_ *SyncShared, _ func() error, err error) {
	settings := []string{
		config.DatabaseURL.EnvName() + "=" + env.SyncURL,
		config.DatabaseMaxConns.EnvName() + "=" + strconv.Itoa(bench.MaxConns),
		syncapp.KeyCatchUpMaxEvents.EnvName() + "=" + strconv.Itoa(catchUpMaxEvents),
	}
	if env.WebClient {
		dir, err := bench.WebBuildDir()
		if err != nil {
			return nil, nil, err
		}
		settings = append(settings, webui.KeyDir.EnvName()+"="+dir)
	}
	cfg, err := config.Load("", settings)
	if err != nil {
		return nil, nil, fmt.Errorf("sync configuration: %w", err)
	}
	s := &SyncShared{cuCfg: syncapp.CatchUpConfigFrom(cfg)}
	s.app, err = wire.New(ctx, cfg, env.Logger, wire.Options{Migrate: true})
	if err != nil {
		return nil, nil, fmt.Errorf("sync wire: %w", err)
	}
	closers := []func() error{func() error { s.app.Close(); return nil }}
	closeAll := func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		return errors.Join(errs...)
	}
	defer func() {
		if err != nil {
			_ = closeAll()
		}
	}()
	if s.bare, err = wire.NewPool(ctx, env.SyncURL, bench.MaxConns); err != nil {
		return nil, nil, err
	}
	closers = append(closers, func() error { s.bare.Close(); return nil })
	base, stop, err := bench.ServeLocal(ctx, s.app, "sync")
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, stop)

	began := time.Now()
	o := env.Options
	if s.World, err = buildSyncWorld(ctx, s.app, s.bare, base, syncSize{events: o.SyncEvents, channels: o.SyncChannels}, s.cuCfg, env.Progress); err != nil {
		return nil, nil, err
	}
	s.worldSeconds = bench.Round1(time.Since(began).Seconds())
	return s, closeAll, nil
}

// Grow makes Sam the snapshot's person (syncWorld.growForSnapshot), once.
func (s *SyncShared) Grow(ctx context.Context, progress func(string, ...any)) error {
	if s.grown {
		return nil
	}
	if err := s.World.growForSnapshot(ctx, s.bare, progress); err != nil {
		return err
	}
	head, err := s.app.Versions().EventSeq(ctx)
	if err != nil {
		return fmt.Errorf("sync world: head: %w", err)
	}
	s.grown, s.GrownHead = true, head
	return nil
}

// Sync is the sync case: the catch-up pages and the full catch-up in the sync world,
// then, after growing Sam to the snapshot's person, the snapshot.
type Sync struct{}

// Name is sync.
func (Sync) Name() string { return "sync" }

// World is the sync world.
func (Sync) World() string { return SyncWorldKey }

// Run measures the catch-up and the snapshot against their bare reads.
func (Sync) Run(ctx context.Context, env *bench.Env) ([]bench.Section, error) {
	s, err := OpenSyncWorld(ctx, env)
	if err != nil {
		return nil, err
	}
	if s.grown {
		return nil, errors.New("sync: the catch-up runs before Sam grows; run the sync case first in its world")
	}
	w, o := s.World, env.Options
	cu := CatchUpResult{
		Events: w.generatedThrough - w.generatedFrom, Channels: len(w.Channels), Threads: len(w.Threads),
		HeadSeq: w.head, PageSize: s.cuCfg.PageSize, ScanWindow: s.cuCfg.ScanWindow, MaxEvents: s.cuCfg.MaxEvents,
		WorldSeconds: s.worldSeconds, Rounds: pageRounds, CursorsPerReader: o.PageCursors,
	}
	if cu.Pages, err = pageCases(ctx, w, s.app.Ports().CatchUp, s.bare, o.Duration, o.PageCursors, env.Progress); err != nil {
		return nil, err
	}
	if cu.Full, err = fullCatchUp(ctx, w, s.bare, env.Progress); err != nil {
		return nil, err
	}
	if err := s.Grow(ctx, env.Progress); err != nil {
		return nil, err
	}
	snap, err := snapshotCase(ctx, w, s.bare, o.Duration, env.Progress)
	if err != nil {
		return nil, err
	}
	return []bench.Section{cu, snap}, nil
}

// Consumer is the consumer case (consumerCase), in the sync world with Sam grown. It
// runs last in the world: its agent adds events and an agent to it.
type Consumer struct{}

// Name is consumer.
func (Consumer) Name() string { return "consumer" }

// World is the sync world.
func (Consumer) World() string { return SyncWorldKey }

// Run measures an agent's durable consumer against the same agent's REST catch-up.
func (Consumer) Run(ctx context.Context, env *bench.Env) ([]bench.Section, error) {
	s, err := OpenSyncWorld(ctx, env)
	if err != nil {
		return nil, err
	}
	if err := s.Grow(ctx, env.Progress); err != nil {
		return nil, err
	}
	r, err := consumerCase(ctx, s.app, s.World, s.bare, env.Progress)
	if err != nil {
		return nil, err
	}
	r.catchUpEvents = s.World.generatedThrough - s.World.generatedFrom
	return []bench.Section{r}, nil
}
