package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/pglocal"
)

// cluster is the throwaway PostgreSQL of one run.
type cluster struct {
	c   *pglocal.Cluster
	dir string
	url string
}

// startCluster creates and starts a cluster in a fresh directory under the temporary
// directory, with PostgreSQL's default settings (fsync on): a benchmark of a durable log is
// meaningless without durable commits.
func startCluster(ctx context.Context, logger *slog.Logger) (*cluster, error) {
	dir, err := os.MkdirTemp("", "bothy-bench-")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	// The server runs as the postgres account when we are root; it must traverse the directory.
	if err := os.Chmod(dir, 0o755); err != nil { //nolint:gosec // a directory, traversable on purpose.
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("chmod %s: %w", dir, err)
	}
	c, err := pglocal.Start(ctx, pglocal.Options{
		Dir:    filepath.Join(dir, "pgdata"),
		Fsync:  true,
		Logger: logger,
	})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("start cluster: %w", err)
	}
	return &cluster{c: c, dir: dir, url: c.URL(pglocal.DefaultDatabase)}, nil
}

// syncDatabase is the database of the sync cases, beside the cluster's default one.
const syncDatabase = "bothy_sync"

// createDatabase creates the database name on the cluster and returns its URL.
func (c *cluster) createDatabase(ctx context.Context, name string) (string, error) {
	conn, err := connect(ctx, c.url)
	if err != nil {
		return "", err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return databaseURL(c.url, name)
}

// stop shuts the cluster down and removes its directory.
func (c *cluster) stop(ctx context.Context) error {
	return errors.Join(c.c.Stop(ctx), os.RemoveAll(c.dir))
}
