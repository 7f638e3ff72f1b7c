package postgres

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"bothy.example.com/server/internal/instance"
)

var (
	//go:embed queries/cluster_identity_current.sql
	clusterIdentityCurrent string
	//go:embed queries/cluster_identity_lock.sql
	clusterIdentityLock string
	//go:embed queries/cluster_identity_record.sql
	clusterIdentityRecord string
)

var _ instance.ClusterIdentity = (*Store)(nil)

// identity is a cluster's system identifier and timeline.
type identity struct {
	system   string
	timeline int64
}

func (i identity) String() string { return fmt.Sprintf("system %s timeline %d", i.system, i.timeline) }

// current reads the identity of the cluster the session runs on; ok is false when the role may
// not read the control data.
func (s *Store) current(ctx context.Context) (identity, bool, error) {
	var id identity
	err := s.runner.DB(ctx).QueryRow(ctx, clusterIdentityCurrent).Scan(&id.system, &id.timeline)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42501" { // insufficient_privilege
		return identity{}, false, nil
	}
	if err != nil {
		return identity{}, false, fmt.Errorf("instance: read the cluster's identity: %w", err)
	}
	return id, true, nil
}

// Reconcile implements instance.ClusterIdentity.
func (s *Store) Reconcile(ctx context.Context, at time.Time) (r instance.Restore, rotated, ok bool, err error) {
	err = s.runner.RunInTx(ctx, func(ctx context.Context) error {
		cur, readable, err := s.current(ctx)
		if err != nil || !readable {
			return err
		}
		ok = true
		var stored identity
		err = s.runner.DB(ctx).QueryRow(ctx, clusterIdentityLock).Scan(&stored.system, &stored.timeline)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return s.record(ctx, cur, at)
		case err != nil:
			return fmt.Errorf("instance: read the recorded cluster identity: %w", err)
		case stored == cur:
			return nil
		}
		r, err = s.RotateEpoch(ctx, instance.RestoreInput{
			At: at, How: instance.RestoreDetected,
			Source: "the database ran on " + stored.String() + " and now runs on " + cur.String(),
		})
		if err != nil {
			return err
		}
		rotated = true
		return s.record(ctx, cur, at)
	})
	return r, rotated, ok, err
}

// Record implements instance.ClusterIdentity.
func (s *Store) Record(ctx context.Context, at time.Time) (bool, error) {
	cur, ok, err := s.current(ctx)
	if err != nil || !ok {
		return false, err
	}
	return true, s.record(ctx, cur, at)
}

func (s *Store) record(ctx context.Context, id identity, at time.Time) error {
	if _, err := s.runner.DB(ctx).Exec(ctx, clusterIdentityRecord, id.system, id.timeline, at); err != nil {
		return fmt.Errorf("instance: record the cluster identity: %w", err)
	}
	return nil
}
