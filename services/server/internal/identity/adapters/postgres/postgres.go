// Package postgres implements the identity module's store on PostgreSQL: the schema identity
// with the tables principals, devices and tokens. Every statement runs on tx.Runner.DB(ctx),
// so it joins the caller's transaction when there is one; rows are turned into the identity
// and domain types here and never leave the package as rows.
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
	"github.com/jackc/pgx/v5/pgtype"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/identity/app"
	"bothy.example.com/server/internal/identity/domain"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/migrate"
	"bothy.example.com/server/internal/kernel/tx"
)

// Schema is the PostgreSQL schema the identity module owns.
const Schema = "identity"

// uniqueViolation is the SQLSTATE of a unique index violation.
const uniqueViolation = "23505"

// handleIndex is the unique index on principals' handles.
const handleIndex = "principals_handle"

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations returns the identity module's migration set; the composition root applies it
// after instance's, in the order of the module register.
func Migrations() migrate.Set {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		// fs.Sub fails only for an invalid path, and "migrations" is a constant.
		panic(fmt.Sprintf("identity: migrations: %v", err))
	}
	return migrate.Set{Schema: Schema, FS: sub}
}

var (
	//go:embed queries/principal_insert.sql
	principalInsert string
	//go:embed queries/principal_get.sql
	principalGet string
	//go:embed queries/principal_refs.sql
	principalRefs string
	//go:embed queries/principal_refs_active.sql
	principalRefsActive string
	//go:embed queries/principal_refs_active_by_handle.sql
	principalRefsActiveByHandle string
	//go:embed queries/device_insert.sql
	deviceInsert string
	//go:embed queries/device_get.sql
	deviceGet string
	//go:embed queries/device_lock.sql
	deviceLock string
	//go:embed queries/device_update.sql
	deviceUpdate string
	//go:embed queries/token_insert.sql
	tokenInsert string
	//go:embed queries/token_credential_by_hash.sql
	tokenCredentialByHash string
	//go:embed queries/token_credentials_by_id.sql
	tokenCredentialsByID string
	//go:embed queries/token_revoke.sql
	tokenRevoke string
	//go:embed queries/token_touch_last_used.sql
	tokenTouchLastUsed string
	//go:embed queries/token_get.sql
	tokenGet string
	//go:embed queries/token_list_by_principal.sql
	tokenListByPrincipal string
	//go:embed queries/principal_lock.sql
	principalLock string
	//go:embed queries/principal_set_deactivated.sql
	principalSetDeactivated string
)

// Store implements app.Store.
type Store struct {
	runner *tx.Runner
}

var _ app.Store = (*Store)(nil)

// New returns a Store whose statements run on runner's transaction of the context, or on its
// pool outside one.
func New(runner *tx.Runner) *Store {
	return &Store{runner: runner}
}

// InsertPrincipal implements app.Store.
func (s *Store) InsertPrincipal(ctx context.Context, p identity.Principal) error {
	_, err := s.runner.DB(ctx).Exec(ctx, principalInsert,
		p.ID, string(p.Kind), p.DisplayName, p.Handle, toText(p.Email), p.Scopes, p.CreatedAt)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == uniqueViolation && pgErr.ConstraintName == handleIndex {
		return identity.ErrHandleTaken
	}
	if err != nil {
		return fmt.Errorf("insert principal: %w", err)
	}
	return nil
}

// Principal implements app.Store.
func (s *Store) Principal(ctx context.Context, id uuid.UUID) (identity.Principal, error) {
	var (
		p           identity.Principal
		kind        string
		email       pgtype.Text
		deactivated pgtype.Timestamptz
	)
	err := s.runner.DB(ctx).QueryRow(ctx, principalGet, id).
		Scan(&p.ID, &kind, &p.DisplayName, &p.Handle, &email, &p.Scopes, &p.CreatedAt, &deactivated)
	if errors.Is(err, pgx.ErrNoRows) {
		return identity.Principal{}, identity.ErrPrincipalNotFound
	}
	if err != nil {
		return identity.Principal{}, fmt.Errorf("read principal: %w", err)
	}
	p.Kind = actor.Kind(kind)
	p.Email = email.String
	p.CreatedAt = p.CreatedAt.UTC()
	p.DeactivatedAt = fromTime(deactivated)
	return p, nil
}

// Refs implements app.Store.
func (s *Store) Refs(ctx context.Context, ids []uuid.UUID) ([]identity.PrincipalRef, error) {
	return s.refs(ctx, principalRefs, ids)
}

// ActiveRefs implements app.Store.
func (s *Store) ActiveRefs(ctx context.Context, ids []uuid.UUID) ([]identity.PrincipalRef, error) {
	return s.refs(ctx, principalRefsActive, ids)
}

// ActiveByHandles implements app.Store: one probe of the unique handle index per handle.
func (s *Store) ActiveByHandles(ctx context.Context, handles []string) ([]identity.PrincipalRef, error) {
	return s.refs(ctx, principalRefsActiveByHandle, handles)
}

// refs runs a query returning (id, kind, display_name, handle) rows with one argument.
func (s *Store) refs(ctx context.Context, query string, arg any) ([]identity.PrincipalRef, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, query, arg)
	if err != nil {
		return nil, fmt.Errorf("read principal refs: %w", err)
	}
	refs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (identity.PrincipalRef, error) {
		var (
			r    identity.PrincipalRef
			kind string
		)
		err := row.Scan(&r.ID, &kind, &r.DisplayName, &r.Handle)
		r.Kind = actor.Kind(kind)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("read principal refs: %w", err)
	}
	return refs, nil
}

// InsertDevice implements app.Store.
func (s *Store) InsertDevice(ctx context.Context, d identity.Device) error {
	if _, err := s.runner.DB(ctx).Exec(ctx, deviceInsert, d.ID, d.PrincipalID, d.Name, string(d.Status), d.CreatedAt); err != nil {
		return fmt.Errorf("insert device: %w", err)
	}
	return nil
}

// Device implements app.Store.
func (s *Store) Device(ctx context.Context, id uuid.UUID) (identity.Device, error) {
	return s.device(ctx, deviceGet, id)
}

// UpdateDevice implements app.Store: it locks the row (SELECT ... FOR UPDATE), so concurrent
// changes of one device apply one after the other, each to the other's result.
func (s *Store) UpdateDevice(ctx context.Context, id uuid.UUID, change func(*identity.Device) error) (identity.Device, error) {
	d, err := s.device(ctx, deviceLock, id)
	if err != nil {
		return identity.Device{}, err
	}
	if err := change(&d); err != nil {
		return identity.Device{}, err
	}
	if _, err := s.runner.DB(ctx).Exec(ctx, deviceUpdate, d.ID, string(d.Status)); err != nil {
		return identity.Device{}, fmt.Errorf("update device: %w", err)
	}
	return d, nil
}

func (s *Store) device(ctx context.Context, query string, id uuid.UUID) (identity.Device, error) {
	var (
		d      identity.Device
		status string
	)
	err := s.runner.DB(ctx).QueryRow(ctx, query, id).Scan(&d.ID, &d.PrincipalID, &d.Name, &status, &d.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return identity.Device{}, identity.ErrDeviceNotFound
	}
	if err != nil {
		return identity.Device{}, fmt.Errorf("read device: %w", err)
	}
	d.Status = identity.DeviceStatus(status)
	d.CreatedAt = d.CreatedAt.UTC()
	return d, nil
}

// InsertToken implements app.Store.
func (s *Store) InsertToken(ctx context.Context, t domain.Token) error {
	_, err := s.runner.DB(ctx).Exec(ctx, tokenInsert,
		t.ID, t.PrincipalID, toUUID(t.DeviceID), t.Hash[:], t.Scopes, t.CreatedAt, toTime(t.ExpiresAt))
	if err != nil {
		return fmt.Errorf("insert token: %w", err)
	}
	return nil
}

// Credential implements app.Store.
func (s *Store) Credential(ctx context.Context, hash domain.TokenHash) (domain.Credential, error) {
	return scanCredential(s.runner.DB(ctx).QueryRow(ctx, tokenCredentialByHash, hash[:]))
}

// QueueCredential queues Credential's read on b, so a caller can send it with reads of other
// modules in one round trip (wire's authentication reads the permission version with it):
// once b's results are closed, set has received what Credential would return, its error
// included (identity.ErrTokenNotFound for an unknown hash). Set's error never fails the batch.
func (s *Store) QueueCredential(b *pgx.Batch, hash domain.TokenHash, set func(domain.Credential, error)) {
	b.Queue(tokenCredentialByHash, hash[:]).QueryRow(func(row pgx.Row) error {
		set(scanCredential(row))
		return nil
	})
}

// scanCredential scans the row of token_credential_by_hash.sql.
func scanCredential(row pgx.Row) (domain.Credential, error) {
	var (
		c                             domain.Credential
		kind                          string
		expires, revoked, deactivated pgtype.Timestamptz
		device                        pgtype.UUID
		status                        pgtype.Text
	)
	err := row.Scan(&c.TokenID, &c.PrincipalID, &kind, &c.Scopes, &expires, &revoked, &deactivated, &device, &status)
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Credential{}, identity.ErrTokenNotFound
	}
	if err != nil {
		return domain.Credential{}, fmt.Errorf("read token: %w", err)
	}
	c.Kind = actor.Kind(kind)
	c.ExpiresAt, c.RevokedAt, c.DeactivatedAt = fromTime(expires), fromTime(revoked), fromTime(deactivated)
	c.DeviceID = fromUUID(device)
	c.DeviceStatus = identity.DeviceStatus(status.String)
	return c, nil
}

// CredentialsByID implements app.Store with one query over unnest(ids).
func (s *Store) CredentialsByID(ctx context.Context, ids []uuid.UUID) ([]domain.Credential, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, tokenCredentialsByID, ids)
	if err != nil {
		return nil, fmt.Errorf("read tokens by id: %w", err)
	}
	defer rows.Close()
	var out []domain.Credential
	for rows.Next() {
		var (
			c                             domain.Credential
			kind                          string
			expires, revoked, deactivated pgtype.Timestamptz
			device                        pgtype.UUID
			status                        pgtype.Text
		)
		if err := rows.Scan(&c.TokenID, &c.PrincipalID, &kind, &c.Scopes, &expires, &revoked, &deactivated, &device, &status); err != nil {
			return nil, fmt.Errorf("read tokens by id: %w", err)
		}
		c.Kind = actor.Kind(kind)
		c.ExpiresAt, c.RevokedAt, c.DeactivatedAt = fromTime(expires), fromTime(revoked), fromTime(deactivated)
		c.DeviceID = fromUUID(device)
		c.DeviceStatus = identity.DeviceStatus(status.String)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read tokens by id: %w", err)
	}
	return out, nil
}

// RevokeToken implements app.Store.
func (s *Store) RevokeToken(ctx context.Context, id uuid.UUID, at time.Time) (bool, error) {
	var revoked bool
	err := s.runner.DB(ctx).QueryRow(ctx, tokenRevoke, id, at).Scan(&revoked)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, identity.ErrTokenNotFound
	}
	if err != nil {
		return false, fmt.Errorf("revoke token: %w", err)
	}
	return revoked, nil
}

// TokenInfo implements app.Store.
func (s *Store) TokenInfo(ctx context.Context, id uuid.UUID) (identity.TokenInfo, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, tokenGet, id)
	if err != nil {
		return identity.TokenInfo{}, fmt.Errorf("read token: %w", err)
	}
	infos, err := pgx.CollectRows(rows, scanTokenInfo)
	if err != nil {
		return identity.TokenInfo{}, fmt.Errorf("read token: %w", err)
	}
	if len(infos) == 0 {
		return identity.TokenInfo{}, identity.ErrTokenNotFound
	}
	return infos[0], nil
}

// Tokens implements app.Store.
func (s *Store) Tokens(ctx context.Context, principalID, after uuid.UUID, limit int) ([]identity.TokenInfo, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, tokenListByPrincipal, principalID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	infos, err := pgx.CollectRows(rows, scanTokenInfo)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return infos, nil
}

// scanTokenInfo reads a row of token_get.sql or token_list_by_principal.sql.
func scanTokenInfo(row pgx.CollectableRow) (identity.TokenInfo, error) {
	var (
		t                      identity.TokenInfo
		device                 pgtype.UUID
		name, status           pgtype.Text
		expires, revoked, used pgtype.Timestamptz
	)
	if err := row.Scan(&t.ID, &t.PrincipalID, &device, &name, &status, &t.Scopes, &t.CreatedAt, &expires, &revoked, &used); err != nil {
		return identity.TokenInfo{}, err
	}
	t.DeviceID = fromUUID(device)
	t.DeviceName = name.String
	t.DeviceStatus = identity.DeviceStatus(status.String)
	t.CreatedAt = t.CreatedAt.UTC()
	t.ExpiresAt, t.RevokedAt, t.LastUsedAt = fromTime(expires), fromTime(revoked), fromTime(used)
	return t, nil
}

// LockPrincipals implements app.Store.
func (s *Store) LockPrincipals(ctx context.Context, ids []uuid.UUID) ([]identity.Principal, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, principalLock, ids)
	if err != nil {
		return nil, fmt.Errorf("lock principals: %w", err)
	}
	ps, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (identity.Principal, error) {
		var (
			p           identity.Principal
			kind        string
			email       pgtype.Text
			deactivated pgtype.Timestamptz
		)
		err := row.Scan(&p.ID, &kind, &p.DisplayName, &p.Handle, &email, &p.Scopes, &p.CreatedAt, &deactivated)
		p.Kind, p.Email, p.CreatedAt, p.DeactivatedAt = actor.Kind(kind), email.String, p.CreatedAt.UTC(), fromTime(deactivated)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("lock principals: %w", err)
	}
	return ps, nil
}

// SetDeactivatedAt implements app.Store.
func (s *Store) SetDeactivatedAt(ctx context.Context, id uuid.UUID, at time.Time) (bool, error) {
	var changed bool
	err := s.runner.DB(ctx).QueryRow(ctx, principalSetDeactivated, id, toTime(at)).Scan(&changed)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, identity.ErrPrincipalNotFound
	}
	if err != nil {
		return false, fmt.Errorf("set principal deactivation: %w", err)
	}
	return changed, nil
}

// TouchTokens implements app.Store with one UPDATE ... FROM unnest(ids, times).
func (s *Store) TouchTokens(ctx context.Context, uses []app.TokenUse) error {
	ids := make([]uuid.UUID, len(uses))
	ats := make([]time.Time, len(uses))
	for i, u := range uses {
		ids[i], ats[i] = u.TokenID, u.At
	}
	if _, err := s.runner.DB(ctx).Exec(ctx, tokenTouchLastUsed, ids, ats); err != nil {
		return fmt.Errorf("record token last use: %w", err)
	}
	return nil
}

// toText maps "" to SQL NULL.
func toText(s string) pgtype.Text {
	return pgtype.Text{String: s, Valid: s != ""}
}

// toUUID maps uuid.Nil to SQL NULL.
func toUUID(u uuid.UUID) pgtype.UUID {
	return pgtype.UUID{Bytes: u, Valid: u != uuid.Nil}
}

// fromUUID maps SQL NULL to uuid.Nil.
func fromUUID(u pgtype.UUID) uuid.UUID {
	if !u.Valid {
		return uuid.Nil
	}
	return u.Bytes
}

// toTime maps the zero time to SQL NULL.
func toTime(t time.Time) pgtype.Timestamptz {
	return pgtype.Timestamptz{Time: t, Valid: !t.IsZero()}
}

// fromTime maps SQL NULL to the zero time and anything else to UTC.
func fromTime(t pgtype.Timestamptz) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}
