package operations

import (
	"net"
	"net/http"
	"strings"
	"testing"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/migrate"
	"bothy.example.com/server/internal/wire"
	"bothy.example.com/server/internal/wiretest"
)

func TestReadinessOnMigratedDatabase(t *testing.T) {
	t.Parallel()
	env := wiretest.New(t)

	resp := env.Client.Get("/readyz")
	if resp.Status != http.StatusOK {
		t.Fatalf("status = %d, want 200; body %s", resp.Status, resp.Body)
	}
	var r apigen.Readiness
	resp.JSON(t, &r)
	if r.Status != apigen.ReadinessStatusReady || len(r.Checks) != 2 {
		t.Fatalf("readiness = %+v, want ready with the database and migrations checks", r)
	}
}

// TestReadinessFollowsMigrations drops every schema of the migrations and
// their bookkeeping (the state of a database bothy never migrated), expects
// 503, migrates and expects 200, without restarting the App.
func TestReadinessFollowsMigrations(t *testing.T) {
	t.Parallel()
	env := wiretest.New(t)
	ctx := t.Context()
	pool := env.App.Pool()

	wiretest.Unmigrate(t, pool)
	pending, err := migrate.Pending(ctx, pool, wire.Migrations())
	if err != nil || pending == 0 {
		t.Fatalf("Pending after dropping the bookkeeping = %d, %v; want > 0", pending, err)
	}
	p := env.Client.Get("/readyz").RequireProblem(t, http.StatusServiceUnavailable, "unavailable")
	if !strings.Contains(p.Detail, "migrations are pending") {
		t.Fatalf("detail = %q, want it to say migrations are pending", p.Detail)
	}

	if _, err := migrate.Apply(ctx, pool, wire.Migrations()); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	if resp := env.Client.Get("/readyz"); resp.Status != http.StatusOK {
		t.Fatalf("status after migrating = %d, want 200; body %s", resp.Status, resp.Body)
	}
}

func TestReadinessWithDatabaseDown(t *testing.T) {
	t.Parallel()
	// A port nothing listens on: reserve one and close it.
	var lc net.ListenConfig
	ln, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatalf("close listener: %v", err)
	}
	url := "postgres://bothy:secret-of-sam@" + addr + "/bothy?sslmode=disable&connect_timeout=5"
	env := wiretest.New(t, wiretest.WithDatabaseURL(url))

	resp := env.Client.Get("/readyz")
	p := resp.RequireProblem(t, http.StatusServiceUnavailable, "unavailable")
	if !strings.Contains(p.Detail, "database") {
		t.Fatalf("detail = %q, want it to name the database check", p.Detail)
	}
	for _, leak := range []string{addr, "secret-of-sam", "connect", "refused"} {
		if strings.Contains(string(resp.Body), leak) {
			t.Fatalf("503 body leaks %q: %s", leak, resp.Body)
		}
	}
	// Liveness does not depend on the database.
	if resp := env.Client.Get("/healthz"); resp.Status != http.StatusOK {
		t.Fatalf("healthz = %d with the database down, want 200", resp.Status)
	}
}
