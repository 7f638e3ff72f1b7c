package chat

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Search finds the messages an actor may read by their text (spec 05a, "Message search";
// ADR 0024).
type Search interface {
	// Messages returns one page of the messages matching q.Text that the actor of ctx may
	// read now, best first: thread.read on the instance first (every principal; an app through
	// messages:read), then a SQL prefilter built from the actor's Scope and thread.read on each
	// hit's message in filter mode. Redacted messages are never found. Invalid input is a
	// problem.Validation naming the parameter (q, before, cursor).
	Messages(ctx context.Context, q SearchQuery) (SearchPage, error)
}

// SearchQuery is one search request: the query text, the filters that narrow it (each
// optional: uuid.Nil or the zero time for none) and the page.
type SearchQuery struct {
	// Text is the web-search style query (words, "phrases", or, -excluded).
	Text string
	// SpaceID, ChannelID, ThreadID and AuthorID keep only the messages of that space,
	// channel, thread or author.
	SpaceID, ChannelID, ThreadID, AuthorID uuid.UUID
	// Before and After keep only the messages created strictly before or after the time.
	Before, After time.Time
	// Cursor is the NextCursor of the previous page; empty for the first.
	Cursor string
	// Limit is the most hits checked for the page; 0 or less, or above
	// chat.search_page_size, is that page size.
	Limit int
}

// SearchPage is one page of hits.
type SearchPage struct {
	// Hits are the messages found that the actor may read, best first.
	Hits []SearchHit
	// NextCursor continues the search after this page; empty on the last page.
	NextCursor string
}

// SearchHit is one message found, with how well it matched and an excerpt around the matches.
type SearchHit struct {
	// Message is the message, as listMessages gives it.
	Message Message
	// Rank is PostgreSQL's ts_rank of the message for the query; higher is better.
	Rank float32
	// Excerpt is the part of the text around the matches, as plain-text segments.
	Excerpt []ExcerptSegment
}

// ExcerptSegment is a run of an excerpt's text: concatenated, the segments are the excerpt.
type ExcerptSegment struct {
	// Text is the run's text, as written (never escaped or marked up).
	Text string
	// Match reports whether the query found these words.
	Match bool
}
