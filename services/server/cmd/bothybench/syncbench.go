package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"bothy.example.com/server/internal/kernel/config"
	syncapp "bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/wire"
)

// syncCases wires a second App on the database at url (its own, so the world is not mixed
// with the append cases' events and their owner), serves it on 127.0.0.1:0, builds the sync
// world (buildSyncWorld), and measures (the sync group) the catch-up pages, the full catch-up
// and, after growing Sam to the snapshot's person, the snapshot; then (the consumer group) the
// consumer catch-up, last, since its agent adds events and an agent to the world.
func syncCases(ctx context.Context, o options, url string, logger *slog.Logger, progress func(string, ...any)) (cu catchUpResult, snap snapshotResult, cons consumerResult, err error) {
	cfg, err := config.Load("", []string{
		config.DatabaseURL.EnvName() + "=" + url,
		config.DatabaseMaxConns.EnvName() + "=" + strconv.Itoa(maxConns),
		syncapp.KeyCatchUpMaxEvents.EnvName() + "=" + strconv.Itoa(catchUpMaxEvents),
	})
	if err != nil {
		return cu, snap, cons, fmt.Errorf("sync configuration: %w", err)
	}
	cuCfg := syncapp.CatchUpConfigFrom(cfg)
	app, err := wire.New(ctx, cfg, logger, wire.Options{Migrate: true})
	if err != nil {
		return cu, snap, cons, fmt.Errorf("sync wire: %w", err)
	}
	defer app.Close()
	bare, err := wire.NewPool(ctx, url, maxConns)
	if err != nil {
		return cu, snap, cons, err
	}
	defer bare.Close()

	base, stop, err := serveLocal(ctx, app, "sync")
	if err != nil {
		return cu, snap, cons, err
	}
	defer func() {
		if serr := stop(); serr != nil && err == nil {
			err = serr
		}
	}()

	began := time.Now()
	w, err := buildSyncWorld(ctx, app, bare, base, syncSize{events: o.syncEvents, channels: o.syncChannels}, cuCfg, progress)
	if err != nil {
		return cu, snap, cons, err
	}
	cu = catchUpResult{
		Events: w.generatedThrough - w.generatedFrom, Channels: len(w.channels), Threads: len(w.threads),
		HeadSeq: w.head, PageSize: cuCfg.PageSize, ScanWindow: cuCfg.ScanWindow, MaxEvents: cuCfg.MaxEvents,
		WorldSeconds: round1(time.Since(began).Seconds()), Rounds: pageRounds, CursorsPerReader: o.pageCursors,
	}
	if o.cases[caseSync] {
		if cu.Pages, err = pageCases(ctx, w, app.CatchUp(), bare, o.duration, o.pageCursors, progress); err != nil {
			return cu, snap, cons, err
		}
		if cu.Full, err = fullCatchUp(ctx, w, bare, progress); err != nil {
			return cu, snap, cons, err
		}
		if err := w.growForSnapshot(ctx, bare, progress); err != nil {
			return cu, snap, cons, err
		}
		if snap, err = snapshotCase(ctx, w, bare, o.duration, progress); err != nil {
			return cu, snap, cons, err
		}
	}
	if o.cases[caseConsumer] {
		cons, err = consumerCase(ctx, app, w, bare, progress)
	}
	return cu, snap, cons, err
}
