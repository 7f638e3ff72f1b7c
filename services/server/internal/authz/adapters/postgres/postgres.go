// Package postgres implements the authz module's GrantStore on PostgreSQL: the schema authz
// with the table grants. Every statement runs on tx.Runner.DB(ctx), so it joins the caller's
// transaction when there is one.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"bothy.example.com/server/internal/authz"
	"bothy.example.com/server/internal/authz/app"
	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/kernel/migrate"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/kernel/tx"
)

// Schema is the PostgreSQL schema the authz module owns.
const Schema = "authz"

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations returns the authz module's migration set (the schema and authz.grants); the
// composition root applies it after identity's.
func Migrations() migrate.Set {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		// fs.Sub fails only for an invalid path, and "migrations" is a constant.
		panic(fmt.Sprintf("authz: migrations: %v", err))
	}
	return migrate.Set{Schema: Schema, FS: sub}
}

var (
	//go:embed queries/grant_insert.sql
	grantInsert string
	//go:embed queries/grant_delete.sql
	grantDelete string
	//go:embed queries/grant_get.sql
	grantGet string
	//go:embed queries/grants_of_principal.sql
	grantsOfPrincipal string
	//go:embed queries/grants_page.sql
	grantsPage string
	//go:embed queries/owners_lock.sql
	ownersLock string
	//go:embed queries/owners_list.sql
	ownersList string
	//go:embed queries/owners_count.sql
	ownersCount string
	//go:embed queries/channel_readers.sql
	channelReaders string
)

// ErrDuplicateGrant is returned by Insert when the principal already holds a grant on the
// resource: one grant per principal and resource, a different role is a revoke and a new
// grant.
var ErrDuplicateGrant = problem.New(problem.ErrConflict, "The principal already holds a grant on this resource; revoke it first to change the role.")

// uniqueViolation is the SQLSTATE of a unique constraint violation.
const uniqueViolation = "23505"

// Store implements app.GrantStore on authz.grants.
type Store struct {
	runner *tx.Runner
}

var (
	_ app.GrantStore = (*Store)(nil)
	_ authz.Readers  = (*Store)(nil)
)

// New returns a Store whose statements run on runner's transaction of the context, or on its
// pool outside one.
func New(runner *tx.Runner) *Store {
	return &Store{runner: runner}
}

// Insert implements app.GrantStore.
func (s *Store) Insert(ctx context.Context, g authz.Grant) (authz.Grant, error) {
	var created time.Time
	err := s.runner.DB(ctx).QueryRow(ctx, grantInsert,
		g.ID, g.PrincipalID, string(g.ResourceKind), g.ResourceID, string(g.Role), g.CreatedBy).Scan(&created)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == uniqueViolation {
		return authz.Grant{}, fmt.Errorf("authz: insert grant: %w", ErrDuplicateGrant)
	}
	if err != nil {
		return authz.Grant{}, fmt.Errorf("authz: insert grant: %w", err)
	}
	g.CreatedAt = created.UTC()
	return g, nil
}

// Delete implements app.GrantStore.
func (s *Store) Delete(ctx context.Context, id uuid.UUID) (authz.Grant, error) {
	g, err := scanGrant(s.runner.DB(ctx).QueryRow(ctx, grantDelete, id))
	if err != nil {
		return authz.Grant{}, fmt.Errorf("authz: delete grant: %w", err)
	}
	return g, nil
}

// Get implements app.GrantStore.
func (s *Store) Get(ctx context.Context, id uuid.UUID) (authz.Grant, error) {
	g, err := scanGrant(s.runner.DB(ctx).QueryRow(ctx, grantGet, id))
	if err != nil {
		return authz.Grant{}, fmt.Errorf("authz: get grant: %w", err)
	}
	return g, nil
}

// OfPrincipal implements app.GrantStore.
func (s *Store) OfPrincipal(ctx context.Context, principalID uuid.UUID) ([]authz.Grant, error) {
	return s.query(ctx, "grants of principal", grantsOfPrincipal, principalID)
}

// ChannelReaders implements authz.Readers in one query (queries/channel_readers.sql): the
// highest role of each principal's grants on the instance (for a standard channel), the space
// and the channel.
func (s *Store) ChannelReaders(ctx context.Context, spaceID, channelID, after uuid.UUID, limit int) ([]authz.Reader, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, channelReaders, spaceID != uuid.Nil, nullable(spaceID), channelID, nullable(after), limit)
	if err != nil {
		return nil, fmt.Errorf("authz: channel readers: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (authz.Reader, error) {
		var (
			r    authz.Reader
			role string
		)
		err := row.Scan(&r.PrincipalID, &role)
		r.Role = authz.Role(role)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("authz: channel readers: %w", err)
	}
	if out == nil {
		out = []authz.Reader{}
	}
	return out, nil
}

// Page implements app.GrantStore.
func (s *Store) Page(ctx context.Context, principalID, after uuid.UUID, limit int) ([]authz.Grant, error) {
	return s.query(ctx, "page of grants", grantsPage, nullable(principalID), nullable(after), limit)
}

// LockOwners implements app.GrantStore: the transaction-scoped advisory lock, then the count
// in a statement of its own (in READ COMMITTED each statement sees what committed before it
// started, so the count sees every owner change of a transaction that held the lock before).
func (s *Store) LockOwners(ctx context.Context) (int, error) {
	if _, err := tx.Value(ctx, ownersKey{}, func() any { return true }); err != nil {
		return 0, fmt.Errorf("authz: lock owners: %w", err)
	}
	db := s.runner.DB(ctx)
	if _, err := db.Exec(ctx, ownersLock); err != nil {
		return 0, fmt.Errorf("authz: lock owners: %w", err)
	}
	var n int
	if err := db.QueryRow(ctx, ownersCount).Scan(&n); err != nil {
		return 0, fmt.Errorf("authz: count owners: %w", err)
	}
	return n, nil
}

// LockedOwners takes the owners' lock as LockOwners does and returns the ids of the
// instance's owners: identity's deactivation keeps one of them active, and the lock keeps a
// concurrent revoke of an owner grant from slipping between its count and its change.
func (s *Store) LockedOwners(ctx context.Context) ([]uuid.UUID, error) {
	if _, err := s.LockOwners(ctx); err != nil {
		return nil, err
	}
	rows, err := s.runner.DB(ctx).Query(ctx, ownersList)
	if err != nil {
		return nil, fmt.Errorf("authz: list owners: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("authz: list owners: %w", err)
	}
	return ids, nil
}

// ownersKey marks, through tx.Value, that LockOwners runs in a transaction (a transaction
// lock outside one would be released at once).
type ownersKey struct{}

func (s *Store) query(ctx context.Context, what, sql string, args ...any) ([]authz.Grant, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("authz: %s: %w", what, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (authz.Grant, error) {
		return scanRow(row)
	})
	if err != nil {
		return nil, fmt.Errorf("authz: %s: %w", what, err)
	}
	return out, nil
}

// nullable turns uuid.Nil into SQL NULL.
func nullable(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

func scanGrant(row pgx.Row) (authz.Grant, error) {
	g, err := scanRow(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return authz.Grant{}, problem.ErrNotFound
	}
	return g, err
}

// scanRow reads the seven columns every grant query returns, in table order.
func scanRow(row pgx.Row) (authz.Grant, error) {
	var (
		g          authz.Grant
		kind, role string
	)
	if err := row.Scan(&g.ID, &g.PrincipalID, &kind, &g.ResourceID, &role, &g.CreatedAt, &g.CreatedBy); err != nil {
		return authz.Grant{}, err
	}
	g.ResourceKind, g.Role, g.CreatedAt = kernel.ResourceKind(kind), authz.Role(role), g.CreatedAt.UTC()
	return g, nil
}
