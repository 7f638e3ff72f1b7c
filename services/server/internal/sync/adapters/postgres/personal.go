package postgres

import (
	"bytes"
	"context"
	_ "embed" // the SQL of queries/
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"bothy.example.com/server/internal/kernel/tx"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/app"
	"bothy.example.com/server/internal/sync/domain"
)

var (
	//go:embed queries/read_state_upsert.sql
	readStateUpsert string
	//go:embed queries/read_state_advance.sql
	readStateAdvance string
	//go:embed queries/read_states_of_principal.sql
	readStatesOfPrincipal string
	//go:embed queries/draft_upsert.sql
	draftUpsert string
	//go:embed queries/draft_delete.sql
	draftDelete string
	//go:embed queries/drafts_of_principal.sql
	draftsOfPrincipal string
	//go:embed queries/draft_get.sql
	draftGet string
	//go:embed queries/setting_upsert.sql
	settingUpsert string
	//go:embed queries/settings_of_principal.sql
	settingsOfPrincipal string
	//go:embed queries/sidebar_upsert.sql
	sidebarUpsert string
	//go:embed queries/sidebar_of_principal.sql
	sidebarOfPrincipal string
)

// PersonalStore implements app.PersonalStore on sync.read_states, sync.drafts,
// sync.user_settings and sync.sidebar. Its statements run in the transaction of the context
// when there is one, else on the pool. Each upsert is one INSERT ... ON CONFLICT DO UPDATE
// that raises the version under the row's lock, so concurrent writes of one row never lose an
// update. Setting values come back compact, in the member order jsonb keeps; sidebar sections
// are stored as a JSON array of domain.SidebarSection.
type PersonalStore struct {
	runner *tx.Runner
}

var _ app.PersonalStore = (*PersonalStore)(nil)

// NewPersonalStore returns a PersonalStore on runner.
func NewPersonalStore(runner *tx.Runner) *PersonalStore {
	return &PersonalStore{runner: runner}
}

// UpsertReadState implements app.PersonalStore.
func (s *PersonalStore) UpsertReadState(ctx context.Context, rs syncmod.ReadState, at time.Time) (syncmod.ReadState, error) {
	row := s.runner.DB(ctx).QueryRow(ctx, readStateUpsert, rs.PrincipalID, rs.ThreadID, rs.ChannelID, rs.LastReadSeq, at)
	out, err := scanReadState(row)
	if err != nil {
		return syncmod.ReadState{}, fmt.Errorf("sync: upsert read state: %w", err)
	}
	return out, nil
}

// AdvanceReadState implements app.PersonalStore: one INSERT ... ON CONFLICT DO UPDATE ...
// WHERE, so the comparison and the write happen under the row's lock.
func (s *PersonalStore) AdvanceReadState(ctx context.Context, rs syncmod.ReadState, at time.Time) (syncmod.ReadState, bool, error) {
	row := s.runner.DB(ctx).QueryRow(ctx, readStateAdvance, rs.PrincipalID, rs.ThreadID, rs.ChannelID, rs.LastReadSeq, at)
	out, err := scanReadState(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return syncmod.ReadState{}, false, nil
	}
	if err != nil {
		return syncmod.ReadState{}, false, fmt.Errorf("sync: advance read state: %w", err)
	}
	return out, true, nil
}

// ReadStates implements app.PersonalStore.
func (s *PersonalStore) ReadStates(ctx context.Context, principalID uuid.UUID) ([]syncmod.ReadState, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, readStatesOfPrincipal, principalID)
	if err != nil {
		return nil, fmt.Errorf("sync: read states: %w", err)
	}
	out, err := collectReadStates(rows)
	if err != nil {
		return nil, fmt.Errorf("sync: read states: %w", err)
	}
	return out, nil
}

// collectReadStates reads the rows of read_states_of_principal.sql and closes them. One set
// of scan targets for every row, and a slice that doubles: a snapshot reads a read state for
// each of thousands of threads, and a closure per row (pgx.CollectRows) would allocate its
// targets for each while append's gentler growth copied the slice over and over.
func collectReadStates(rows pgx.Rows) ([]syncmod.ReadState, error) {
	var rs syncmod.ReadState
	out := []syncmod.ReadState{}
	_, err := pgx.ForEachRow(rows, []any{&rs.PrincipalID, &rs.ThreadID, &rs.ChannelID, &rs.LastReadSeq, &rs.Version}, func() error {
		if len(out) == cap(out) {
			out = slices.Grow(out, max(len(out), 256))
		}
		out = append(out, rs)
		return nil
	})
	if err != nil {
		return nil, err //nolint:wrapcheck // the callers wrap
	}
	return out, nil
}

// PersonalData implements app.PersonalStore: the four reads go out in one batch, so a
// snapshot pays one round trip for a person's own data instead of four.
func (s *PersonalStore) PersonalData(ctx context.Context, principalID uuid.UUID) (d app.PersonalData, err error) {
	var b pgx.Batch
	b.Queue(readStatesOfPrincipal, principalID)
	b.Queue(sidebarOfPrincipal, principalID)
	b.Queue(settingsOfPrincipal, principalID)
	b.Queue(draftsOfPrincipal, principalID)
	res := s.runner.DB(ctx).SendBatch(ctx, &b)
	defer func() {
		if cerr := res.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("sync: personal data: %w", cerr)
		}
	}()
	if d.ReadStates, err = readStatesFrom(res); err != nil {
		return app.PersonalData{}, fmt.Errorf("sync: personal data: read states: %w", err)
	}
	sb, err := scanSidebar(res.QueryRow())
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		sb = syncmod.Sidebar{PrincipalID: principalID, Sections: []syncmod.SidebarSection{}}
	case err != nil:
		return app.PersonalData{}, fmt.Errorf("sync: personal data: sidebar: %w", err)
	}
	d.Sidebar = sb
	if d.Settings, err = collectFrom(res, scanSetting); err != nil {
		return app.PersonalData{}, fmt.Errorf("sync: personal data: settings: %w", err)
	}
	if d.Drafts, err = collectFrom(res, scanDraft); err != nil {
		return app.PersonalData{}, fmt.Errorf("sync: personal data: drafts: %w", err)
	}
	return d, nil
}

// readStatesFrom reads the next result of res as read_states_of_principal.sql's rows.
func readStatesFrom(res pgx.BatchResults) ([]syncmod.ReadState, error) {
	rows, err := res.Query()
	if err != nil {
		return nil, err //nolint:wrapcheck // the caller wraps
	}
	return collectReadStates(rows)
}

// collectFrom reads the next result of res with scan, row by row; empty, not nil, for none.
func collectFrom[T any](res pgx.BatchResults, scan func(pgx.Row) (T, error)) ([]T, error) {
	rows, err := res.Query()
	if err != nil {
		return nil, err //nolint:wrapcheck // the caller wraps
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (T, error) { return scan(row) })
	if err != nil {
		return nil, err //nolint:wrapcheck // the caller wraps
	}
	return nonNil(out), nil
}

func scanReadState(row pgx.Row) (syncmod.ReadState, error) {
	var rs syncmod.ReadState
	err := row.Scan(&rs.PrincipalID, &rs.ThreadID, &rs.ChannelID, &rs.LastReadSeq, &rs.Version)
	return rs, err
}

// UpsertDraft implements app.PersonalStore.
func (s *PersonalStore) UpsertDraft(ctx context.Context, d syncmod.Draft) (syncmod.Draft, error) {
	row := s.runner.DB(ctx).QueryRow(ctx, draftUpsert, d.PrincipalID, d.ChannelID, toUUID(d.ThreadID), d.ContentMD, d.UpdatedAt)
	out, err := scanDraft(row)
	if err != nil {
		return syncmod.Draft{}, fmt.Errorf("sync: upsert draft: %w", err)
	}
	return out, nil
}

// DeleteDraft implements app.PersonalStore.
func (s *PersonalStore) DeleteDraft(ctx context.Context, principalID, channelID, threadID uuid.UUID) (syncmod.Draft, bool, error) {
	row := s.runner.DB(ctx).QueryRow(ctx, draftDelete, principalID, channelID, toUUID(threadID))
	d, err := scanDraft(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return syncmod.Draft{}, false, nil
	}
	if err != nil {
		return syncmod.Draft{}, false, fmt.Errorf("sync: delete draft: %w", err)
	}
	return d, true, nil
}

// Draft implements app.PersonalStore.
func (s *PersonalStore) Draft(ctx context.Context, principalID, channelID, threadID uuid.UUID) (syncmod.Draft, bool, error) {
	d, err := scanDraft(s.runner.DB(ctx).QueryRow(ctx, draftGet, principalID, channelID, toUUID(threadID)))
	if errors.Is(err, pgx.ErrNoRows) {
		return syncmod.Draft{}, false, nil
	}
	if err != nil {
		return syncmod.Draft{}, false, fmt.Errorf("sync: get draft: %w", err)
	}
	return d, true, nil
}

// Drafts implements app.PersonalStore.
func (s *PersonalStore) Drafts(ctx context.Context, principalID uuid.UUID) ([]syncmod.Draft, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, draftsOfPrincipal, principalID)
	if err != nil {
		return nil, fmt.Errorf("sync: drafts: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (syncmod.Draft, error) { return scanDraft(row) })
	if err != nil {
		return nil, fmt.Errorf("sync: drafts: %w", err)
	}
	return nonNil(out), nil
}

func scanDraft(row pgx.Row) (syncmod.Draft, error) {
	var (
		d      syncmod.Draft
		thread pgtype.UUID
	)
	if err := row.Scan(&d.PrincipalID, &d.ChannelID, &thread, &d.ContentMD, &d.Version, &d.UpdatedAt); err != nil {
		return syncmod.Draft{}, err
	}
	d.ThreadID = fromUUID(thread)
	d.UpdatedAt = d.UpdatedAt.UTC()
	return d, nil
}

// UpsertSetting implements app.PersonalStore.
func (s *PersonalStore) UpsertSetting(ctx context.Context, set syncmod.Setting, at time.Time) (syncmod.Setting, error) {
	row := s.runner.DB(ctx).QueryRow(ctx, settingUpsert, set.PrincipalID, set.Key, []byte(set.Value), at)
	out, err := scanSetting(row)
	if err != nil {
		return syncmod.Setting{}, fmt.Errorf("sync: upsert setting %q: %w", set.Key, err)
	}
	return out, nil
}

// Settings implements app.PersonalStore.
func (s *PersonalStore) Settings(ctx context.Context, principalID uuid.UUID) ([]syncmod.Setting, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, settingsOfPrincipal, principalID)
	if err != nil {
		return nil, fmt.Errorf("sync: settings: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (syncmod.Setting, error) { return scanSetting(row) })
	if err != nil {
		return nil, fmt.Errorf("sync: settings: %w", err)
	}
	return nonNil(out), nil
}

// scanSetting reads a setting row; jsonb's text form has a space after every colon and comma,
// so the value is compacted to what clients sent (and what the size limit counted).
func scanSetting(row pgx.Row) (syncmod.Setting, error) {
	var (
		set   syncmod.Setting
		value []byte
	)
	if err := row.Scan(&set.PrincipalID, &set.Key, &value, &set.Version); err != nil {
		return syncmod.Setting{}, err
	}
	var b bytes.Buffer
	if err := json.Compact(&b, value); err != nil {
		return syncmod.Setting{}, fmt.Errorf("setting %q: stored value: %w", set.Key, err)
	}
	set.Value = b.Bytes()
	return set, nil
}

// UpsertSidebar implements app.PersonalStore.
func (s *PersonalStore) UpsertSidebar(ctx context.Context, sb syncmod.Sidebar, at time.Time) (syncmod.Sidebar, error) {
	sections := make([]domain.SidebarSection, len(sb.Sections))
	for i, sec := range sb.Sections {
		sections[i] = domain.SidebarSection(sec)
		if sections[i].ChannelIDs == nil {
			sections[i].ChannelIDs = []uuid.UUID{}
		}
	}
	encoded, err := json.Marshal(sections)
	if err != nil {
		return syncmod.Sidebar{}, fmt.Errorf("sync: upsert sidebar: %w", err)
	}
	out, err := scanSidebar(s.runner.DB(ctx).QueryRow(ctx, sidebarUpsert, sb.PrincipalID, encoded, at))
	if err != nil {
		return syncmod.Sidebar{}, fmt.Errorf("sync: upsert sidebar: %w", err)
	}
	return out, nil
}

// Sidebar implements app.PersonalStore.
func (s *PersonalStore) Sidebar(ctx context.Context, principalID uuid.UUID) (syncmod.Sidebar, bool, error) {
	sb, err := scanSidebar(s.runner.DB(ctx).QueryRow(ctx, sidebarOfPrincipal, principalID))
	if errors.Is(err, pgx.ErrNoRows) {
		return syncmod.Sidebar{}, false, nil
	}
	if err != nil {
		return syncmod.Sidebar{}, false, fmt.Errorf("sync: sidebar: %w", err)
	}
	return sb, true, nil
}

func scanSidebar(row pgx.Row) (syncmod.Sidebar, error) {
	var (
		sb  syncmod.Sidebar
		raw []byte
	)
	if err := row.Scan(&sb.PrincipalID, &raw, &sb.Version); err != nil {
		return syncmod.Sidebar{}, err
	}
	var sections []domain.SidebarSection
	if err := json.Unmarshal(raw, &sections); err != nil {
		return syncmod.Sidebar{}, fmt.Errorf("stored sections: %w", err)
	}
	sb.Sections = make([]syncmod.SidebarSection, len(sections))
	for i, sec := range sections {
		sb.Sections[i] = syncmod.SidebarSection(sec)
		if sb.Sections[i].ChannelIDs == nil {
			sb.Sections[i].ChannelIDs = []uuid.UUID{}
		}
	}
	return sb, nil
}

// nonNil returns list, or an empty slice for nil: the readers promise empty, not nil.
func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}
