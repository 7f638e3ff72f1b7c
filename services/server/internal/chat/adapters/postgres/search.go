package postgres

import (
	"context"
	_ "embed" // the search queries
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"bothy.example.com/server/internal/chat/app"
	"bothy.example.com/server/internal/chat/domain"
)

var (
	//go:embed queries/search_usable.sql
	searchUsable string
	//go:embed queries/search_messages.sql
	searchMessages string
)

// SearchUsable implements app.Store in one query.
func (s *Store) SearchUsable(ctx context.Context, text string) (bool, error) {
	var ok bool
	if err := s.runner.DB(ctx).QueryRow(ctx, searchUsable, text).Scan(&ok); err != nil {
		return false, fmt.Errorf("search: parse the query: %w", err)
	}
	return ok, nil
}

// SearchMessages implements app.Store in one query (queries/search_messages.sql).
func (s *Store) SearchMessages(ctx context.Context, spec app.SearchSpec) ([]app.SearchRow, error) {
	rows, err := s.runner.DB(ctx).Query(ctx, searchMessages, SearchArgs(spec)...)
	if err != nil {
		return nil, fmt.Errorf("search messages: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (app.SearchRow, error) {
		var r app.SearchRow
		var (
			space            pgtype.UUID
			edited, redacted pgtype.Timestamptz
			key              pgtype.Text
			invocation       pgtype.UUID
		)
		m := &r.Message
		err := row.Scan(&m.ID, &m.ThreadID, &m.ChannelID, &space, &m.Seq, &m.AuthorID, &m.ContentMD, &m.CreatedAt,
			&edited, &redacted, &key, &invocation, &m.MentionIDs, &r.Rank, &r.Headline)
		if err != nil {
			return r, err
		}
		m.SpaceID = fromUUID(space)
		m.CreatedAt = m.CreatedAt.UTC()
		m.EditedAt, m.RedactedAt = fromTime(edited), fromTime(redacted)
		m.ExternalKey = key.String
		m.InvocationID = fromUUID(invocation)
		if len(m.MentionIDs) == 0 {
			m.MentionIDs = nil
		}
		return r, nil
	})
	if err != nil {
		return nil, fmt.Errorf("search messages: %w", err)
	}
	return out, nil
}

// SearchArgs are the arguments of queries/search_messages.sql for spec, in order; the
// benchmark (cmd/bothybench) passes the same ones to the bare statement.
func SearchArgs(spec app.SearchSpec) []any {
	var rank pgtype.Float4
	var from pgtype.UUID
	if spec.From != nil {
		rank = pgtype.Float4{Float32: spec.From.Rank, Valid: true}
		from = toUUID(spec.From.ID)
	}
	return []any{
		spec.Text, spec.Visible.All, nonNil(spec.Visible.ChannelIDs), nonNil(spec.Visible.SpaceIDs),
		toUUID(spec.SpaceID), toUUID(spec.ChannelID), toUUID(spec.ThreadID), toUUID(spec.AuthorID),
		toTime(spec.Before), toTime(spec.After), rank, from, spec.Limit, headlineOptions(spec.ExcerptWords),
	}
}

// SearchMessagesSQL is the statement SearchMessages runs, for the benchmark's bare baseline.
func SearchMessagesSQL() string { return searchMessages }

// headlineOptions are ts_headline's options: the match markers, and an excerpt of at most
// words words (chat.search_excerpt_words), at least half as many where the text has them.
func headlineOptions(words int) string {
	return "StartSel=" + domain.MatchStart + ", StopSel=" + domain.MatchStop +
		", MaxWords=" + strconv.Itoa(words) + ", MinWords=" + strconv.Itoa(max(1, words/2))
}
