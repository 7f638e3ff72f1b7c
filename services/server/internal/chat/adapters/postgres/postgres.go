// Package postgres implements the chat module's store on PostgreSQL: the schema chat with the
// tables spaces, channels, dm_participants, threads, messages and mentions, and the channel and
// space directory authz binds to (chat.Directory). Every statement runs on tx.Runner.DB(ctx),
// so it joins the caller's transaction when there is one; rows are turned into the chat types
// here and never leave the package as rows.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/chat/domain"
	"bothy.example.com/server/internal/kernel/migrate"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/kernel/tx"
)

// Schema is the PostgreSQL schema the chat module owns.
const Schema = "chat"

// uniqueViolation is the SQLSTATE of a unique index violation.
const uniqueViolation = "23505"

// The unique indexes whose violations mean something to the use cases.
const (
	channelNameIndex = "channels_space_name"
	externalKeyIndex = "messages_external_key"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrations returns the chat module's migration set; the composition root applies it after
// authz's, in the order of the module register.
func Migrations() migrate.Set {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		// fs.Sub fails only for an invalid path, and "migrations" is a constant.
		panic(fmt.Sprintf("chat: migrations: %v", err))
	}
	return migrate.Set{Schema: Schema, FS: sub}
}

var (
	//go:embed queries/space_insert.sql
	spaceInsert string
	//go:embed queries/space_get.sql
	spaceGet string
	//go:embed queries/space_lock.sql
	spaceLock string
	//go:embed queries/space_update.sql
	spaceUpdate string
	//go:embed queries/spaces_listed.sql
	spacesListed string
	//go:embed queries/space_exists.sql
	spaceExists string
	//go:embed queries/channel_insert.sql
	channelInsert string
	//go:embed queries/channel_insert_direct.sql
	channelInsertDirect string
	//go:embed queries/channel_by_dm_key.sql
	channelByDMKey string
	//go:embed queries/channel_get.sql
	channelGet string
	//go:embed queries/channel_lock.sql
	channelLock string
	//go:embed queries/channel_update.sql
	channelUpdate string
	//go:embed queries/channels_in_space.sql
	channelsInSpace string
	//go:embed queries/channels_listed.sql
	channelsListed string
	//go:embed queries/channel_exists.sql
	channelExists string
	//go:embed queries/channel_spaces.sql
	channelSpaces string
	//go:embed queries/channel_dm_participant.sql
	channelDMParticipant string
	//go:embed queries/thread_insert.sql
	threadInsert string
	//go:embed queries/thread_get.sql
	threadGet string
	//go:embed queries/message_post.sql
	messagePost string
	//go:embed queries/thread_counters.sql
	threadCounters string
	//go:embed queries/message_insert.sql
	messageInsert string
	//go:embed queries/message_get.sql
	messageGet string
	//go:embed queries/message_lock.sql
	messageLock string
	//go:embed queries/message_update.sql
	messageUpdate string
	//go:embed queries/messages_page.sql
	messagesPage string
	//go:embed queries/mentions_delete.sql
	mentionsDelete string
	//go:embed queries/mentions_insert.sql
	mentionsInsert string
	//go:embed queries/mentions_unread_count.sql
	mentionsUnreadCount string
	//go:embed queries/reaction_state.sql
	reactionState string
	//go:embed queries/reaction_insert.sql
	reactionInsert string
	//go:embed queries/reaction_delete.sql
	reactionDelete string
	//go:embed queries/reactions_delete_message.sql
	reactionsDeleteMessage string
	//go:embed queries/reactions_counted.sql
	reactionsCounted string
)

// Store implements app.Store and chat.Directory.
type Store struct {
	runner *tx.Runner
}

var (
	_ app.Store      = (*Store)(nil)
	_ chat.Directory = (*Store)(nil)
)

// New returns a Store whose statements run on runner's transaction of the context, or on its
// pool outside one.
func New(runner *tx.Runner) *Store {
	return &Store{runner: runner}
}

// notFound turns pgx.ErrNoRows into problem.ErrNotFound (what, for the error text) and wraps
// anything else as a read failure.
func notFound(err error, what string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("chat: %s: %w", what, problem.ErrNotFound)
	}
	return fmt.Errorf("read %s: %w", what, err)
}

// isUnique reports whether err is a unique violation of the index.
func isUnique(err error, index string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == uniqueViolation && pgErr.ConstraintName == index
}

// Spaces.

// InsertSpace implements app.Store.
func (s *Store) InsertSpace(ctx context.Context, sp chat.Space) error {
	_, err := s.runner.DB(ctx).Exec(ctx, spaceInsert, sp.ID, sp.Name, sp.Description, sp.Version, toTime(sp.ArchivedAt), sp.CreatedAt)
	if err != nil {
		return fmt.Errorf("insert space: %w", err)
	}
	return nil
}

// Space implements app.Store.
func (s *Store) Space(ctx context.Context, id uuid.UUID) (chat.Space, error) {
	sp, err := scanSpace(s.runner.DB(ctx).QueryRow(ctx, spaceGet, id))
	if err != nil {
		return chat.Space{}, notFound(err, "space")
	}
	return sp, nil
}

// Spaces implements app.Store.
func (s *Store) Spaces(ctx context.Context, f app.SpaceFilter) ([]chat.Space, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, spacesListed, f.All, nonNil(f.SpaceIDs))
	if err != nil {
		return nil, fmt.Errorf("list spaces: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (chat.Space, error) { return scanSpace(row) })
	if err != nil {
		return nil, fmt.Errorf("list spaces: %w", err)
	}
	return out, nil
}

// UpdateSpace implements app.Store: it locks the row (SELECT ... FOR UPDATE), so concurrent
// changes of one space apply one after the other, each to the other's result.
func (s *Store) UpdateSpace(ctx context.Context, id uuid.UUID, change func(*chat.Space) (bool, error)) (chat.Space, error) {
	db := s.runner.DB(ctx)
	sp, err := scanSpace(db.QueryRow(ctx, spaceLock, id))
	if err != nil {
		return chat.Space{}, notFound(err, "space")
	}
	changed, err := change(&sp)
	if err != nil || !changed {
		return sp, err
	}
	if _, err := db.Exec(ctx, spaceUpdate, sp.ID, sp.Name, sp.Description, sp.Version, toTime(sp.ArchivedAt)); err != nil {
		return chat.Space{}, fmt.Errorf("update space: %w", err)
	}
	return sp, nil
}

func scanSpace(row pgx.Row) (chat.Space, error) {
	var (
		sp       chat.Space
		archived pgtype.Timestamptz
	)
	if err := row.Scan(&sp.ID, &sp.Name, &sp.Description, &sp.Version, &archived, &sp.CreatedAt); err != nil {
		return chat.Space{}, err
	}
	sp.ArchivedAt = fromTime(archived)
	sp.CreatedAt = sp.CreatedAt.UTC()
	return sp, nil
}

// Channels.

// InsertChannel implements app.Store.
func (s *Store) InsertChannel(ctx context.Context, c chat.Channel) error {
	_, err := s.runner.DB(ctx).Exec(ctx, channelInsert, c.ID, c.SpaceID, c.Name, c.Topic, c.Version, c.CreatedAt)
	if isUnique(err, channelNameIndex) {
		return domain.ErrChannelNameTaken
	}
	if err != nil {
		return fmt.Errorf("insert channel: %w", err)
	}
	return nil
}

// InsertDirect implements app.Store with one statement that inserts the channel and its
// participants unless the key exists (ON CONFLICT DO NOTHING: a concurrent insert of the same
// key waits for the first and then does nothing), and a read of the existing channel when it
// does.
func (s *Store) InsertDirect(ctx context.Context, c chat.Channel, key string) (chat.Channel, bool, error) {
	db := s.runner.DB(ctx)
	var id uuid.UUID
	err := db.QueryRow(ctx, channelInsertDirect, c.ID, key, c.Version, c.CreatedAt, nonNil(c.ParticipantIDs)).Scan(&id)
	switch {
	case err == nil:
		return c, true, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return chat.Channel{}, false, fmt.Errorf("insert direct message: %w", err)
	}
	existing, err := scanChannel(db.QueryRow(ctx, channelByDMKey, key))
	if err != nil {
		return chat.Channel{}, false, fmt.Errorf("read direct message: %w", err)
	}
	return existing, false, nil
}

// Channel implements app.Store.
func (s *Store) Channel(ctx context.Context, id uuid.UUID) (chat.Channel, error) {
	c, err := scanChannel(s.runner.DB(ctx).QueryRow(ctx, channelGet, id))
	if err != nil {
		return chat.Channel{}, notFound(err, "channel")
	}
	return c, nil
}

// ChannelsInSpace implements app.Store.
func (s *Store) ChannelsInSpace(ctx context.Context, spaceID uuid.UUID) ([]chat.Channel, error) {
	return s.channels(ctx, channelsInSpace, spaceID)
}

// Channels implements app.Store.
func (s *Store) Channels(ctx context.Context, f app.ChannelFilter) ([]chat.Channel, error) {
	return s.channels(ctx, channelsListed, f.All, nonNil(f.SpaceIDs), nonNil(f.ChannelIDs), f.ParticipantID)
}

func (s *Store) channels(ctx context.Context, query string, args ...any) ([]chat.Channel, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list channels: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (chat.Channel, error) { return scanChannel(row) })
	if err != nil {
		return nil, fmt.Errorf("list channels: %w", err)
	}
	return out, nil
}

// UpdateChannel implements app.Store like UpdateSpace.
func (s *Store) UpdateChannel(ctx context.Context, id uuid.UUID, change func(*chat.Channel) (bool, error)) (chat.Channel, error) {
	db := s.runner.DB(ctx)
	c, err := scanChannel(db.QueryRow(ctx, channelLock, id))
	if err != nil {
		return chat.Channel{}, notFound(err, "channel")
	}
	changed, err := change(&c)
	if err != nil || !changed {
		return c, err
	}
	if _, err := db.Exec(ctx, channelUpdate, c.ID, c.Name, c.Topic, c.Version, toTime(c.ArchivedAt)); err != nil {
		return chat.Channel{}, fmt.Errorf("update channel: %w", err)
	}
	return c, nil
}

func scanChannel(row pgx.Row) (chat.Channel, error) {
	var (
		c            chat.Channel
		space        pgtype.UUID
		kind         string
		archived     pgtype.Timestamptz
		participants []uuid.UUID
	)
	if err := row.Scan(&c.ID, &space, &kind, &c.Name, &c.Topic, &c.Version, &archived, &c.CreatedAt, &participants); err != nil {
		return chat.Channel{}, err
	}
	c.SpaceID = fromUUID(space)
	c.Kind = chat.ChannelKind(kind)
	c.ArchivedAt = fromTime(archived)
	c.CreatedAt = c.CreatedAt.UTC()
	if len(participants) > 0 {
		c.ParticipantIDs = participants
	}
	return c, nil
}

// Threads.

// InsertThread implements app.Store.
func (s *Store) InsertThread(ctx context.Context, t chat.Thread) error {
	_, err := s.runner.DB(ctx).Exec(ctx, threadInsert, t.ID, t.ChannelID, toUUID(t.SpaceID), t.Title, t.CreatedBy,
		t.CreatedAt, t.Version, t.LastMessageSeq, t.UnreadFloorSeq)
	if err != nil {
		return fmt.Errorf("insert thread: %w", err)
	}
	return nil
}

// Thread implements app.Store.
func (s *Store) Thread(ctx context.Context, id uuid.UUID) (chat.Thread, error) {
	t, err := scanThread(s.runner.DB(ctx).QueryRow(ctx, threadGet, id))
	if err != nil {
		return chat.Thread{}, notFound(err, "thread")
	}
	return t, nil
}

// PostMessage implements app.Store with one statement (queries/message_post.sql): the
// thread's advance, the message and its mentions.
func (s *Store) PostMessage(ctx context.Context, m chat.Message) (app.Posting, error) {
	var (
		p  app.Posting
		at time.Time
	)
	t, err := scanThread(s.runner.DB(ctx).QueryRow(ctx, messagePost, m.ID, m.ThreadID, m.AuthorID, m.ContentMD,
		m.CreatedAt, toTime(m.EditedAt), toTime(m.RedactedAt), toText(m.ExternalKey), nonNil(m.MentionIDs), toUUID(m.InvocationID)),
		&p.ChannelArchived, &at)
	if isUnique(err, externalKeyIndex) {
		return app.Posting{}, chat.ErrDuplicateKey
	}
	if err != nil {
		return app.Posting{}, notFound(err, "thread")
	}
	p.Thread, p.CreatedAt = t, at.UTC()
	return p, nil
}

// ThreadCounters implements app.Store.
func (s *Store) ThreadCounters(ctx context.Context, channelIDs []uuid.UUID) ([]chat.ThreadCounter, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, threadCounters, nonNil(channelIDs))
	if err != nil {
		return nil, fmt.Errorf("thread counters: %w", err)
	}
	// One set of scan targets for every row, and a slice that doubles: a snapshot reads
	// thousands of counters, and a closure per row (pgx.CollectRows) would allocate its
	// targets for each while append's gentler growth copied the slice over and over.
	var (
		c     chat.ThreadCounter
		space pgtype.UUID
		out   = []chat.ThreadCounter{}
	)
	_, err = pgx.ForEachRow(rows, []any{&c.ThreadID, &c.ChannelID, &space, &c.LastMessageSeq, &c.UnreadFloorSeq, &c.Version}, func() error {
		c.SpaceID = fromUUID(space)
		if len(out) == cap(out) {
			out = slices.Grow(out, max(len(out), 256))
		}
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("thread counters: %w", err)
	}
	return out, nil
}

// scanThread scans a thread row and then the further columns into extra.
func scanThread(row pgx.Row, extra ...any) (chat.Thread, error) {
	var (
		t     chat.Thread
		space pgtype.UUID
	)
	dest := append([]any{&t.ID, &t.ChannelID, &space, &t.Title, &t.CreatedBy, &t.CreatedAt, &t.Version, &t.LastMessageSeq, &t.UnreadFloorSeq}, extra...)
	if err := row.Scan(dest...); err != nil {
		return chat.Thread{}, err
	}
	t.SpaceID = fromUUID(space)
	t.CreatedAt = t.CreatedAt.UTC()
	return t, nil
}

// Messages.

// InsertMessage implements app.Store with one statement for the message and its mentions.
func (s *Store) InsertMessage(ctx context.Context, m chat.Message) error {
	_, err := s.runner.DB(ctx).Exec(ctx, messageInsert, m.ID, m.ThreadID, m.ChannelID, m.Seq, m.AuthorID, m.ContentMD,
		m.CreatedAt, toTime(m.EditedAt), toTime(m.RedactedAt), toText(m.ExternalKey), nonNil(m.MentionIDs))
	if isUnique(err, externalKeyIndex) {
		return chat.ErrDuplicateKey
	}
	if err != nil {
		return fmt.Errorf("insert message: %w", err)
	}
	return nil
}

// Message implements app.Store.
func (s *Store) Message(ctx context.Context, id uuid.UUID) (chat.Message, error) {
	m, err := scanMessage(s.runner.DB(ctx).QueryRow(ctx, messageGet, id))
	if err != nil {
		return chat.Message{}, notFound(err, "message")
	}
	return m, nil
}

// Messages implements app.Store.
func (s *Store) Messages(ctx context.Context, threadID uuid.UUID, after int64, limit int) ([]chat.Message, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, messagesPage, threadID, after, limit)
	if err != nil {
		return nil, fmt.Errorf("list messages: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (chat.Message, error) { return scanMessage(row) })
	if err != nil {
		return nil, fmt.Errorf("list messages: %w", err)
	}
	return out, nil
}

// UpdateMessage implements app.Store like UpdateSpace; its mention rows are replaced by the
// changed message's MentionIDs.
func (s *Store) UpdateMessage(ctx context.Context, id uuid.UUID, change func(*chat.Message) (bool, error)) (chat.Message, error) {
	db := s.runner.DB(ctx)
	m, err := scanMessage(db.QueryRow(ctx, messageLock, id))
	if err != nil {
		return chat.Message{}, notFound(err, "message")
	}
	changed, err := change(&m)
	if err != nil || !changed {
		return m, err
	}
	if _, err := db.Exec(ctx, messageUpdate, m.ID, m.ContentMD, toTime(m.EditedAt), toTime(m.RedactedAt)); err != nil {
		return chat.Message{}, fmt.Errorf("update message: %w", err)
	}
	if _, err := db.Exec(ctx, mentionsDelete, m.ID); err != nil {
		return chat.Message{}, fmt.Errorf("update message: remove mentions: %w", err)
	}
	if len(m.MentionIDs) > 0 {
		if _, err := db.Exec(ctx, mentionsInsert, m.ID, m.ThreadID, m.ChannelID, m.Seq, m.MentionIDs); err != nil {
			return chat.Message{}, fmt.Errorf("update message: store mentions: %w", err)
		}
	}
	if m.Redacted() {
		if _, err := db.Exec(ctx, reactionsDeleteMessage, m.ID); err != nil {
			return chat.Message{}, fmt.Errorf("update message: remove reactions: %w", err)
		}
	}
	return m, nil
}

// LockMessage implements app.Store: the message, locked until the transaction of ctx ends.
func (s *Store) LockMessage(ctx context.Context, id uuid.UUID) (chat.Message, error) {
	m, err := scanMessage(s.runner.DB(ctx).QueryRow(ctx, messageLock, id))
	if err != nil {
		return chat.Message{}, notFound(err, "message")
	}
	return m, nil
}

// ReactionState implements app.Store in one query.
func (s *Store) ReactionState(ctx context.Context, messageID, principalID uuid.UUID, reaction string) (app.ReactionState, error) {
	var (
		st       app.ReactionState
		distinct int64
	)
	err := s.runner.DB(ctx).QueryRow(ctx, reactionState, messageID, principalID, reaction).Scan(&distinct, &st.Exists, &st.Made)
	if err != nil {
		return app.ReactionState{}, fmt.Errorf("reaction state: %w", err)
	}
	st.Distinct = int(distinct)
	return st, nil
}

// InsertReaction implements app.Store; a reaction the principal made already affects no row.
func (s *Store) InsertReaction(ctx context.Context, r app.Reaction) (bool, error) {
	tag, err := s.runner.DB(ctx).Exec(ctx, reactionInsert, r.MessageID, r.PrincipalID, r.Reaction, r.CreatedAt)
	if err != nil {
		return false, fmt.Errorf("insert reaction: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// DeleteReaction implements app.Store.
func (s *Store) DeleteReaction(ctx context.Context, messageID, principalID uuid.UUID, reaction string) (bool, error) {
	tag, err := s.runner.DB(ctx).Exec(ctx, reactionDelete, messageID, principalID, reaction)
	if err != nil {
		return false, fmt.Errorf("delete reaction: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Reactions implements app.Store in one query.
func (s *Store) Reactions(ctx context.Context, messageIDs []uuid.UUID, readerID uuid.UUID) (map[uuid.UUID][]chat.ReactionCount, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, reactionsCounted, nonNil(messageIDs), readerID)
	if err != nil {
		return nil, fmt.Errorf("reactions: %w", err)
	}
	out := map[uuid.UUID][]chat.ReactionCount{}
	var (
		message uuid.UUID
		rc      chat.ReactionCount
		n       int64
	)
	_, err = pgx.ForEachRow(rows, []any{&message, &rc.Reaction, &n, &rc.Me}, func() error {
		rc.Count = int(n)
		out[message] = append(out[message], rc)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reactions: %w", err)
	}
	return out, nil
}

// CountUnreadMentions implements app.Store with one query; the read seqs travel as two
// arrays (thread ids and seqs).
func (s *Store) CountUnreadMentions(ctx context.Context, principalID uuid.UUID, channelIDs []uuid.UUID, readSeqs map[uuid.UUID]int64) (map[uuid.UUID]int, error) {
	threads := make([]uuid.UUID, 0, len(readSeqs))
	seqs := make([]int64, 0, len(readSeqs))
	for t, seq := range readSeqs {
		threads = append(threads, t)
		seqs = append(seqs, seq)
	}
	rows, err := s.runner.DB(ctx).Query(ctx, mentionsUnreadCount, principalID, nonNil(channelIDs), threads, seqs)
	if err != nil {
		return nil, fmt.Errorf("count unread mentions: %w", err)
	}
	out := map[uuid.UUID]int{}
	var (
		thread uuid.UUID
		n      int64
	)
	_, err = pgx.ForEachRow(rows, []any{&thread, &n}, func() error {
		out[thread] = int(n)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count unread mentions: %w", err)
	}
	return out, nil
}

func scanMessage(row pgx.Row) (chat.Message, error) {
	var (
		m                chat.Message
		space            pgtype.UUID
		edited, redacted pgtype.Timestamptz
		key              pgtype.Text
		invocation       pgtype.UUID
		mentioned        []uuid.UUID
	)
	err := row.Scan(&m.ID, &m.ThreadID, &m.ChannelID, &space, &m.Seq, &m.AuthorID, &m.ContentMD, &m.CreatedAt,
		&edited, &redacted, &key, &invocation, &mentioned)
	if err != nil {
		return chat.Message{}, err
	}
	m.SpaceID = fromUUID(space)
	m.CreatedAt = m.CreatedAt.UTC()
	m.EditedAt, m.RedactedAt = fromTime(edited), fromTime(redacted)
	m.ExternalKey = key.String
	m.InvocationID = fromUUID(invocation)
	if len(mentioned) > 0 {
		m.MentionIDs = mentioned
	}
	return m, nil
}

// The directory authz binds to.

// SpacesOfChannels implements chat.Directory in one query.
func (s *Store) SpacesOfChannels(ctx context.Context, channelIDs []uuid.UUID) (map[uuid.UUID]uuid.UUID, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, channelSpaces, nonNil(channelIDs))
	if err != nil {
		return nil, fmt.Errorf("chat: spaces of channels: %w", err)
	}
	out := make(map[uuid.UUID]uuid.UUID, len(channelIDs))
	var channel, space uuid.UUID
	_, err = pgx.ForEachRow(rows, []any{&channel, &space}, func() error {
		out[channel] = space
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("chat: spaces of channels: %w", err)
	}
	return out, nil
}

// ChannelExists implements chat.Directory.
func (s *Store) ChannelExists(ctx context.Context, channelID uuid.UUID) (bool, error) {
	return s.exists(ctx, channelExists, channelID, "channel")
}

// DirectParticipant implements chat.Directory in one query.
func (s *Store) DirectParticipant(ctx context.Context, channelID, principalID uuid.UUID) (direct, participant bool, err error) {
	err = s.runner.DB(ctx).QueryRow(ctx, channelDMParticipant, channelID, principalID).Scan(&direct, &participant)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("chat: direct participant: %w", err)
	}
	return direct, participant, nil
}

// SpaceExists implements chat.Directory.
func (s *Store) SpaceExists(ctx context.Context, spaceID uuid.UUID) (bool, error) {
	return s.exists(ctx, spaceExists, spaceID, "space")
}

func (s *Store) exists(ctx context.Context, query string, id uuid.UUID, what string) (bool, error) {
	var ok bool
	if err := s.runner.DB(ctx).QueryRow(ctx, query, id).Scan(&ok); err != nil {
		return false, fmt.Errorf("chat: %s exists: %w", what, err)
	}
	return ok, nil
}

// nonNil turns a nil slice into an empty one, so that it is an empty array in SQL, not NULL.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
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
