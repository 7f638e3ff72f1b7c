package syncbench

import (
	"context"
	_ "embed" // the snapshot baseline's SQL
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/cmd/bothybench/internal/bench"
)

var (
	//go:embed queries/bare_sync_epoch.sql
	bareSyncEpoch string
	//go:embed queries/bare_principal_refs.sql
	barePrincipalRefs string
	//go:embed queries/bare_instance.sql
	bareInstance string
	//go:embed queries/bare_spaces_listed.sql
	bareSpacesListed string
	//go:embed queries/bare_channels_listed.sql
	bareChannelsListed string
	//go:embed queries/bare_sidebar_of_principal.sql
	bareSidebarOfPrincipal string
	//go:embed queries/bare_read_states_of_principal.sql
	bareReadStatesOfPrincipal string
	//go:embed queries/bare_thread_counters.sql
	bareThreadCounters string
	//go:embed queries/bare_mentions_unread_count.sql
	bareMentionsUnreadCount string
	//go:embed queries/bare_settings_of_principal.sql
	bareSettingsOfPrincipal string
	//go:embed queries/bare_drafts_of_principal.sql
	bareDraftsOfPrincipal string
	//go:embed queries/bare_agents_active.sql
	bareAgentsActive string
	//go:embed queries/bare_flags_evaluated.sql
	bareFlagsEvaluated string
)

// snapshotBareQueries is how many statements one run of the snapshot's baseline issues.
const snapshotBareQueries = 16

// snapshotQueries is the snapshot's baseline: each component query of the snapshot, issued
// once, bare, one after another on the bare pool, with the parameters the snapshot passes
// (what the actor's cached Scope holds: its visible spaces and granted channels) and each
// result scanned into plain values; a later statement takes what it needs from an earlier
// one's rows (the visible channels, the read positions), as the snapshot does. Nothing is
// authorized, assembled, encoded or sent. The snapshot itself issues more: the token lookup
// of the request's authentication and a permission_version read for each authorization that
// checks the cached Scope.
type snapshotQueries struct {
	actor    uuid.UUID
	spaces   []uuid.UUID
	channels []uuid.UUID
}

// newSnapshotQueries returns the baseline of Sam's snapshot in w.
func newSnapshotQueries(w *SyncWorld) *snapshotQueries {
	q := &snapshotQueries{actor: w.Sam.ID}
	seen := map[uuid.UUID]bool{}
	for i, c := range w.Channels {
		if i%snapshotShare != 0 {
			continue
		}
		q.channels = append(q.channels, c)
		if s := w.SpaceOf(i); !seen[s] {
			seen[s] = true
			q.spaces = append(q.spaces, s)
		}
	}
	return q
}

// run issues the statements once.
func (q *snapshotQueries) run(ctx context.Context, pool *pgxpool.Pool) error {
	if err := q.run1(ctx, pool); err != nil {
		return fmt.Errorf("snapshot baseline: %w", err)
	}
	return nil
}

func (q *snapshotQueries) run1(ctx context.Context, pool *pgxpool.Pool) error {
	var (
		n     int64
		id    uuid.UUID
		when  time.Time
		name  string
		raw   []byte
		flag  bool
		flagP pgtype.Bool
	)
	if err := pool.QueryRow(ctx, bench.BarePermissionVersion, "event_seq").Scan(&n); err != nil {
		return fmt.Errorf("head: %w", err)
	}
	if err := pool.QueryRow(ctx, bareSyncEpoch).Scan(&id); err != nil {
		return fmt.Errorf("sync epoch: %w", err)
	}
	if err := pool.QueryRow(ctx, bench.BarePermissionVersion, "permission_version").Scan(&n); err != nil {
		return fmt.Errorf("permission version: %w", err)
	}
	if err := bench.Each(ctx, pool, barePrincipalRefs, []any{[]uuid.UUID{q.actor}}, &id, &name, &name, &name); err != nil {
		return fmt.Errorf("principal: %w", err)
	}
	if err := pool.QueryRow(ctx, bareInstance).Scan(&id, &name, &id, &when, &n); err != nil {
		return fmt.Errorf("instance: %w", err)
	}
	var archived pgtype.Timestamptz
	if err := bench.Each(ctx, pool, bareSpacesListed, []any{false, q.spaces}, &id, &name, &name, &n, &archived, &when); err != nil {
		return fmt.Errorf("spaces: %w", err)
	}
	var (
		visible      = make([]uuid.UUID, 0, len(q.channels))
		visibleSet   = make(map[uuid.UUID]bool, len(q.channels))
		channel      uuid.UUID
		space        pgtype.UUID
		participants []uuid.UUID
	)
	err := bench.Each(ctx, pool, bareChannelsListed, []any{false, []uuid.UUID{}, q.channels, q.actor}, func() error {
		visible = append(visible, channel)
		visibleSet[channel] = true
		return nil
	}, &channel, &space, &name, &name, &name, &n, &archived, &when, &participants)
	if err != nil {
		return fmt.Errorf("channels: %w", err)
	}
	if err := bench.Each(ctx, pool, bareSidebarOfPrincipal, []any{q.actor}, &id, &raw, &n); err != nil {
		return fmt.Errorf("sidebar: %w", err)
	}
	var (
		thread  uuid.UUID
		readSeq int64
		threads []uuid.UUID
		seqs    []int64
	)
	err = bench.Each(ctx, pool, bareReadStatesOfPrincipal, []any{q.actor}, func() error {
		if visibleSet[channel] {
			threads, seqs = append(threads, thread), append(seqs, readSeq)
		}
		return nil
	}, &id, &thread, &channel, &readSeq, &n)
	if err != nil {
		return fmt.Errorf("read states: %w", err)
	}
	if err := bench.Each(ctx, pool, bareThreadCounters, []any{visible}, &thread, &channel, &space, &n, &n, &n); err != nil {
		return fmt.Errorf("thread counters: %w", err)
	}
	if err := bench.Each(ctx, pool, bareMentionsUnreadCount, []any{q.actor, visible, threads, seqs}, &thread, &n); err != nil {
		return fmt.Errorf("mentions: %w", err)
	}
	if err := bench.Each(ctx, pool, bareSettingsOfPrincipal, []any{q.actor}, &id, &name, &raw, &n); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	var draftThread pgtype.UUID
	if err := bench.Each(ctx, pool, bareDraftsOfPrincipal, []any{q.actor}, &id, &channel, &draftThread, &name, &n, &when); err != nil {
		return fmt.Errorf("drafts: %w", err)
	}
	var agentIDs []uuid.UUID
	err = bench.Each(ctx, pool, bareAgentsActive, nil, func() error {
		agentIDs = append(agentIDs, id)
		return nil
	}, &id, &name, &channel, &when)
	if err != nil {
		return fmt.Errorf("agents: %w", err)
	}
	if err := bench.Each(ctx, pool, barePrincipalRefs, []any{agentIDs}, &id, &name, &name, &name); err != nil {
		return fmt.Errorf("agent names: %w", err)
	}
	if err := bench.Each(ctx, pool, bareFlagsEvaluated, []any{"person", q.actor}, &name, &flag, &flagP, &flagP); err != nil {
		return fmt.Errorf("flags: %w", err)
	}
	return nil
}
