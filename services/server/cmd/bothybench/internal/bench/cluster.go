package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/jackc/pgx/v5"

	_ "embed" // the world's seeding SQL
	"net/url"

	"bothy.example.com/server/internal/pglocal"
)

// Cluster is the throwaway PostgreSQL of one run.
type Cluster struct {
	c   *pglocal.Cluster
	dir string
	URL string
}

// StartCluster creates and starts a cluster in a fresh directory under the temporary
// directory, with PostgreSQL's default settings (fsync on): a benchmark of a durable log is
// meaningless without durable commits.
func StartCluster(ctx context.Context, logger *slog.Logger) (*Cluster, error) {
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
	return &Cluster{c: c, dir: dir, URL: c.URL(pglocal.DefaultDatabase)}, nil
}

// SyncDatabase is the database of the sync cases, beside the cluster's default one.
const SyncDatabase = "bothy_sync"

// CreateDatabase creates the database name on the cluster and returns its URL.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) (string, error) {
	conn, err := Connect(ctx, c.URL)
	if err != nil {
		return "", err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return DatabaseURL(c.URL, name)
}

// Stop shuts the cluster down and removes its directory.
func (c *Cluster) Stop(ctx context.Context) error {
	return errors.Join(c.c.Stop(ctx), os.RemoveAll(c.dir))
}

// DatabaseURL returns rawURL with its database replaced by name.
func DatabaseURL(rawURL, name string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", errors.New("the database URL does not parse")
	}
	u.Path = "/" + name
	return u.String(), nil
}
