package postgres_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"bothy.example.com/server/internal/identity"
	identitypg "bothy.example.com/server/internal/identity/adapters/postgres"
	"bothy.example.com/server/internal/identity/app"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/clock"
	"bothy.example.com/server/internal/kernel/tx"
	"bothy.example.com/server/internal/leaktest"
	"bothy.example.com/server/internal/pgtest"
)

func TestMain(m *testing.M) { leaktest.Exit(pgtest.Main(m, identitypg.Migrations())) }

var start = time.Date(2026, 12, 1, 9, 30, 15, 0, time.UTC)

// env is one test's database with the store and the use cases over it.
type env struct {
	pool   *pgxpool.Pool
	runner *tx.Runner
	store  *identitypg.Store
	svc    *app.Service
	clock  *clock.Fake
}

func newEnv(t *testing.T, ttl time.Duration) env {
	t.Helper()
	pool := pgtest.New(t)
	runner := tx.NewRunner(pool)
	e := env{pool: pool, runner: runner, store: identitypg.New(runner), clock: clock.NewFake(start)}
	svc, err := app.New(app.Deps{
		Store: e.store, Tx: runner, Clock: e.clock, Logger: slog.New(slog.DiscardHandler),
		Config:   app.Config{TokenTTL: ttl, LastUsedFlushInterval: time.Minute, LastUsedFinalFlushTimeout: 5 * time.Second},
		Appender: nopAppender{}, Owners: noOwners{}, Instance: noOwners{},
	})
	if err != nil {
		t.Fatalf("app.New: %v", err)
	}
	e.svc = svc
	return e
}

func (e env) person(t *testing.T, handle string) identity.Principal {
	t.Helper()
	p, err := e.svc.CreatePerson(t.Context(), identity.PersonInput{DisplayName: handle, Handle: handle, Email: handle + "@example.com"})
	if err != nil {
		t.Fatalf("CreatePerson %s: %v", handle, err)
	}
	return p
}

func (e env) issue(t *testing.T, p identity.Principal, dev *identity.DeviceInput) identity.IssuedToken {
	t.Helper()
	tok, err := e.svc.Tokens().Issue(t.Context(), p.ID, dev)
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	return tok
}

// nopAppender takes events and drops them: the events of identity are tested in the app
// package and, on the real log, in internal/wire.
type nopAppender struct{}

func (nopAppender) Append(context.Context, ...kernel.Event) error { return nil }

// noOwners names no owner, and the instance by the nil id's successor.
type noOwners struct{}

func (noOwners) InstanceOwners(context.Context) ([]uuid.UUID, error) { return nil, nil }

func (noOwners) InstanceID(context.Context) (uuid.UUID, error) {
	return uuid.MustParse("0190a6b2-7c1e-7d3a-9f00-0000000000aa"), nil
}
