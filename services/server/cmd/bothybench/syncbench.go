package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"bothy.example.com/server/internal/kernel/config"
	syncapp "bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/webui"
	"bothy.example.com/server/internal/wire"
)

// syncCases wires a second App on the database at url (its own, so the world is not mixed
// with the append cases' events and their owner), serves it on 127.0.0.1:0, builds the sync
// world (buildSyncWorld), and measures the catch-up pages and the full catch-up (the sync
// case), then, after growing Sam to the snapshot's person, the snapshot (the sync case), the
// SDK's cold start (the sdk case) and the web client's sidebar (the sidebar case), and last the
// consumer catch-up (the consumer case), into rep.
func syncCases(ctx context.Context, o options, url string, logger *slog.Logger, progress func(string, ...any), rep *report) (err error) {
	env := []string{
		config.DatabaseURL.EnvName() + "=" + url,
		config.DatabaseMaxConns.EnvName() + "=" + strconv.Itoa(maxConns),
		syncapp.KeyCatchUpMaxEvents.EnvName() + "=" + strconv.Itoa(catchUpMaxEvents),
	}
	if o.cases[caseSidebar] {
		dir, err := webBuildDir()
		if err != nil {
			return err
		}
		env = append(env, webui.KeyDir.EnvName()+"="+dir)
	}
	cfg, err := config.Load("", env)
	if err != nil {
		return fmt.Errorf("sync configuration: %w", err)
	}
	cuCfg := syncapp.CatchUpConfigFrom(cfg)
	app, err := wire.New(ctx, cfg, logger, wire.Options{Migrate: true})
	if err != nil {
		return fmt.Errorf("sync wire: %w", err)
	}
	defer app.Close()
	bare, err := wire.NewPool(ctx, url, maxConns)
	if err != nil {
		return err
	}
	defer bare.Close()

	base, stop, err := serveLocal(ctx, app, "sync")
	if err != nil {
		return err
	}
	defer func() {
		if serr := stop(); serr != nil && err == nil {
			err = serr
		}
	}()

	began := time.Now()
	w, err := buildSyncWorld(ctx, app, bare, base, syncSize{events: o.syncEvents, channels: o.syncChannels}, cuCfg, progress)
	if err != nil {
		return err
	}
	if o.cases[caseSync] {
		cu := catchUpResult{
			Events: w.generatedThrough - w.generatedFrom, Channels: len(w.channels), Threads: len(w.threads),
			HeadSeq: w.head, PageSize: cuCfg.PageSize, ScanWindow: cuCfg.ScanWindow, MaxEvents: cuCfg.MaxEvents,
			WorldSeconds: round1(time.Since(began).Seconds()), Rounds: pageRounds, CursorsPerReader: o.pageCursors,
		}
		if cu.Pages, err = pageCases(ctx, w, app.CatchUp(), bare, o.duration, o.pageCursors, progress); err != nil {
			return err
		}
		if cu.Full, err = fullCatchUp(ctx, w, bare, progress); err != nil {
			return err
		}
		rep.CatchUp = cu
	}
	if err := w.growForSnapshot(ctx, bare, progress); err != nil {
		return err
	}
	grownHead, err := app.Versions().EventSeq(ctx)
	if err != nil {
		return fmt.Errorf("sync world: head: %w", err)
	}
	if o.cases[caseSync] {
		if rep.Snapshot, err = snapshotCase(ctx, w, bare, o.duration, progress); err != nil {
			return err
		}
	}
	if o.cases[caseSDK] {
		if rep.SDK, err = sdkCase(ctx, w, grownHead, o.clientRounds, progress); err != nil {
			return err
		}
	}
	if o.cases[caseSidebar] {
		if rep.Sidebar, err = sidebarCase(ctx, w, o.clientRounds, progress); err != nil {
			return err
		}
	}
	// Last: its agent adds events and an agent to the world.
	if o.cases[caseConsumer] {
		if rep.Consumer, err = consumerCase(ctx, app, w, bare, progress); err != nil {
			return err
		}
	}
	return nil
}
