package postgres_test

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	agentspg "bothy.example.com/server/internal/agents/adapters/postgres"
	"bothy.example.com/server/internal/agents/domain"
	"bothy.example.com/server/internal/kernel/ids"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/pgtest"
)

var errBoom = errors.New("boom")

func TestMigrations(t *testing.T) {
	t.Parallel()
	set := agentspg.Migrations()
	if set.Schema != "agents" {
		t.Fatalf("schema = %q, want agents", set.Schema)
	}
	names, err := fs.Glob(set.FS, "*.sql")
	if err != nil || !slices.Equal(names, []string{"0001_create_agents.sql", "0002_create_agent_presence.sql", "0003_create_runs.sql", "0004_create_invocations.sql"}) {
		t.Fatalf("files = %v, %v", names, err)
	}
}

func TestProfiles(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	runner := tx.NewRunner(pool)
	store := agentspg.New(runner)
	ctx := t.Context()
	at := time.Date(2026, 12, 1, 9, 30, 15, 123456000, time.UTC)
	alex := ids.New()
	robin := domain.Profile{PrincipalID: ids.New(), Description: "Summarises long threads.", CreatedBy: alex, CreatedAt: at}
	sam := domain.Profile{PrincipalID: ids.New(), CreatedBy: alex, CreatedAt: at.Add(time.Second)}
	archived := domain.Profile{PrincipalID: ids.New(), CreatedBy: alex, CreatedAt: at}
	for _, p := range []domain.Profile{robin, sam, archived} {
		if err := store.InsertProfile(ctx, p); err != nil {
			t.Fatalf("InsertProfile: %v", err)
		}
	}
	if _, err := pool.Exec(ctx, "UPDATE agents.agents SET archived_at = created_at WHERE principal_id = $1", archived.PrincipalID); err != nil {
		t.Fatalf("archive: %v", err)
	}
	// A profile inserted in a transaction that rolls back is not stored.
	err := runner.RunInTx(ctx, func(ctx context.Context) error {
		if err := store.InsertProfile(ctx, domain.Profile{PrincipalID: ids.New(), CreatedBy: alex, CreatedAt: at}); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("RunInTx = %v", err)
	}

	got, err := store.ActiveProfiles(ctx)
	if err != nil {
		t.Fatalf("ActiveProfiles: %v", err)
	}
	slices.SortFunc(got, func(a, b domain.Profile) int { return a.CreatedAt.Compare(b.CreatedAt) })
	if !slices.Equal(got, []domain.Profile{robin, sam}) {
		t.Fatalf("ActiveProfiles = %+v, want %+v", got, []domain.Profile{robin, sam})
	}
	if got[0].CreatedAt.Location() != time.UTC {
		t.Fatalf("created_at in %v, want UTC", got[0].CreatedAt.Location())
	}

	// The same principal twice is refused by the primary key.
	var pgErr *pgconn.PgError
	if err := store.InsertProfile(ctx, robin); !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		t.Fatalf("second profile of robin = %v, want a unique violation", err)
	}
}

func TestProfileTableEnforcesItsRules(t *testing.T) {
	t.Parallel()
	pool := pgtest.New(t)
	tests := []struct {
		name, sql string
	}{
		{"description length", "INSERT INTO agents.agents (principal_id, description, created_by, created_at) VALUES ($1, repeat('d', 501), $1, now())"},
		{"archived before created", "INSERT INTO agents.agents (principal_id, created_by, created_at, archived_at) VALUES ($1, $1, now(), now() - interval '1 day')"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var pgErr *pgconn.PgError
			if _, err := pool.Exec(t.Context(), tc.sql, ids.New()); !errors.As(err, &pgErr) || pgErr.Code != "23514" {
				t.Fatalf("insert = %v, want a check violation", err)
			}
		})
	}
	// 500 characters are allowed (the domain's limit counts characters, not bytes).
	if _, err := pool.Exec(t.Context(), "INSERT INTO agents.agents (principal_id, description, created_by, created_at) VALUES ($1, $2, $1, now())",
		ids.New(), strings.Repeat("é", 500)); err != nil {
		t.Fatalf("500 characters: %v", err)
	}
}
