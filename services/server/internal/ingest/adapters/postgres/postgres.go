// Package postgres stores the ingester's cursors and records in the schema ingest. Every
// statement runs on tx.Runner.DB(ctx), so it joins the caller's transaction when there is one:
// a record row is inserted in the transaction of its chat write.
package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"bothy.example.com/server/internal/ingest"
	"bothy.example.com/server/internal/ingest/app"
	"bothy.example.com/server/internal/ingest/domain"
	"bothy.example.com/server/internal/kernel/migrate"
	"bothy.example.com/server/internal/kernel/tx"
)

// Schema is the PostgreSQL schema the ingest module owns.
const Schema = "ingest"

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations returns the ingest module's migration set, which creates the schema, the cursors
// and the records.
func Migrations() migrate.Set {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		// fs.Sub fails only for an invalid path, and "migrations" is a constant.
		panic(fmt.Sprintf("ingest: migrations: %v", err))
	}
	return migrate.Set{Schema: Schema, FS: sub}
}

var (
	//go:embed queries/cursors_of_repository.sql
	cursorsOfRepository string
	//go:embed queries/cursor_upsert.sql
	cursorUpsert string
	//go:embed queries/records_by_keys.sql
	recordsByKeys string
	//go:embed queries/records_by_key_prefix.sql
	recordsByKeyPrefix string
	//go:embed queries/pull_requests_merged_as.sql
	pullRequestsMergedAs string
	//go:embed queries/record_insert.sql
	recordInsert string
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

// Cursors implements app.Store.
func (s *Store) Cursors(ctx context.Context, repository string) ([]domain.Cursor, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, cursorsOfRepository, repository)
	if err != nil {
		return nil, fmt.Errorf("ingest: cursors: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (domain.Cursor, error) {
		var (
			c       domain.Cursor
			section string
		)
		err := row.Scan(&c.Repository, &section, &c.ChannelID, &c.Position, &c.UpdatedAt)
		c.Section, c.UpdatedAt = ingest.Section(section), c.UpdatedAt.UTC()
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("ingest: cursors: %w", err)
	}
	return out, nil
}

// SaveCursor implements app.Store.
func (s *Store) SaveCursor(ctx context.Context, c domain.Cursor) error {
	if !c.Section.Valid() {
		return fmt.Errorf("ingest: save cursor: unknown section %q", c.Section)
	}
	if _, err := s.runner.DB(ctx).Exec(ctx, cursorUpsert, c.Repository, string(c.Section), c.ChannelID, c.Position, c.UpdatedAt); err != nil {
		return fmt.Errorf("ingest: save cursor %s/%s: %w", c.Repository, c.Section, err)
	}
	return nil
}

// Records implements app.Store.
func (s *Store) Records(ctx context.Context, keys []string) (map[string]domain.Record, error) {
	out := map[string]domain.Record{}
	if len(keys) == 0 {
		return out, nil
	}
	recs, err := s.query(ctx, recordsByKeys, keys)
	if err != nil {
		return nil, fmt.Errorf("ingest: records: %w", err)
	}
	for _, r := range recs {
		out[r.Key] = r
	}
	return out, nil
}

// likeEscaper escapes LIKE's wildcards and its escape character (PostgreSQL's default, the
// backslash).
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// RecordsWithPrefix implements app.Store.
func (s *Store) RecordsWithPrefix(ctx context.Context, prefix string, limit int) ([]domain.Record, error) {
	recs, err := s.query(ctx, recordsByKeyPrefix, likeEscaper.Replace(prefix), limit)
	if err != nil {
		return nil, fmt.Errorf("ingest: records with a prefix: %w", err)
	}
	return recs, nil
}

// MergedPullRequests implements app.Store.
func (s *Store) MergedPullRequests(ctx context.Context, shas []string) (map[string]domain.Record, error) {
	out := map[string]domain.Record{}
	if len(shas) == 0 {
		return out, nil
	}
	recs, err := s.query(ctx, pullRequestsMergedAs, shas)
	if err != nil {
		return nil, fmt.Errorf("ingest: merged pull requests: %w", err)
	}
	for _, r := range recs {
		out[r.MergeCommit] = r
	}
	return out, nil
}

// InsertRecords implements app.Store: the records go in one round trip.
func (s *Store) InsertRecords(ctx context.Context, records []domain.Record) error {
	if len(records) == 0 {
		return nil
	}
	b := &pgx.Batch{}
	for _, r := range records {
		if !r.Kind.Valid() {
			return fmt.Errorf("ingest: insert record %s: unknown kind %q", r.Key, r.Kind)
		}
		var merge *string
		if r.MergeCommit != "" {
			merge = &r.MergeCommit
		}
		b.Queue(recordInsert, r.Key, string(r.Kind), r.Repository, r.ChannelID, r.ThreadID, r.MessageID, merge, r.CreatedAt)
	}
	if err := s.runner.DB(ctx).SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("ingest: insert records: %w", err)
	}
	return nil
}

// query runs a statement returning records and converts its rows.
func (s *Store) query(ctx context.Context, sql string, args ...any) ([]domain.Record, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, toRecord)
}

// toRecord converts one row of the records table.
func toRecord(row pgx.CollectableRow) (domain.Record, error) {
	var (
		r                        domain.Record
		kind                     string
		channel, thread, message uuid.UUID
		merge                    *string
		createdAt                time.Time
	)
	if err := row.Scan(&r.Key, &kind, &r.Repository, &channel, &thread, &message, &merge, &createdAt); err != nil {
		return domain.Record{}, err
	}
	r.Kind, r.ChannelID, r.ThreadID, r.MessageID, r.CreatedAt = domain.Kind(kind), channel, thread, message, createdAt.UTC()
	if merge != nil {
		r.MergeCommit = *merge
	}
	return r, nil
}
