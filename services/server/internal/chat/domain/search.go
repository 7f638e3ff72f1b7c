package domain

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/kernel/problem"
)

// The markers the store asks ts_headline to put around each matched word. They are control
// characters a message may contain, so the store turns them into spaces in the text it
// headlines first (ExcerptText): in what it returns they only ever mark matches.
const (
	// MatchStart opens a matched run (ts_headline's StartSel).
	MatchStart = "\x02"
	// MatchStop closes it (ts_headline's StopSel).
	MatchStop = "\x03"
)

// SearchPosition is where a page of hits ends in the search order (rank descending, then
// message id descending): the next page starts strictly after it.
type SearchPosition struct {
	// Rank is the last hit's rank, exactly as PostgreSQL computed it (a real).
	Rank float32
	// ID is the last hit's message id.
	ID uuid.UUID
}

// cursorLen is the length of a decoded cursor: the rank's four bytes and the id's sixteen.
const cursorLen = 4 + 16

var errCursor = problem.Validation(problem.FieldError{Field: "cursor", Message: "is not a cursor of this search"})

// EncodeSearchCursor makes the opaque cursor of a position: the rank's IEEE 754 bits and the
// id, base64url without padding, so the next page compares with the very rank PostgreSQL
// returned.
func EncodeSearchCursor(p SearchPosition) string {
	var b [cursorLen]byte
	binary.BigEndian.PutUint32(b[:4], math.Float32bits(p.Rank))
	copy(b[4:], p.ID[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// DecodeSearchCursor reads a cursor EncodeSearchCursor made; anything else is a
// problem.Validation naming cursor.
func DecodeSearchCursor(s string) (SearchPosition, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != cursorLen {
		return SearchPosition{}, errCursor
	}
	rank := math.Float32frombits(binary.BigEndian.Uint32(b[:4]))
	if math.IsNaN(float64(rank)) || math.IsInf(float64(rank), 0) || rank < 0 {
		return SearchPosition{}, errCursor
	}
	id, err := uuid.FromBytes(b[4:])
	if err != nil {
		return SearchPosition{}, errCursor
	}
	return SearchPosition{Rank: rank, ID: id}, nil
}

// SearchText checks a query text: not blank, valid UTF-8 without control characters, at most
// maxChars characters (chat.search_query_max_chars). It returns the text trimmed, or a
// problem.Validation naming q.
func SearchText(q string, maxChars int) (string, error) {
	q = strings.TrimSpace(q)
	var msg string
	switch {
	case q == "":
		msg = "is required and must not be only whitespace"
	case !utf8.ValidString(q) || strings.ContainsFunc(q, isForbiddenControl):
		msg = "must be valid UTF-8 without control characters"
	case utf8.RuneCountInString(q) > maxChars:
		msg = tooLong(maxChars)
	default:
		return q, nil
	}
	return "", problem.Validation(problem.FieldError{Field: "q", Message: msg})
}

// ErrNothingToFind is the answer to a query without a word to look for (only punctuation, or
// only excluded words): it would match every message or none, and cannot use the index.
var ErrNothingToFind = problem.Validation(problem.FieldError{Field: "q", Message: "must contain at least one word to look for (not only excluded words)"})

// SearchWindow checks the time filters: when both are set, before must be later than after.
func SearchWindow(before, after time.Time) error {
	if !before.IsZero() && !after.IsZero() && !before.After(after) {
		return problem.Validation(problem.FieldError{Field: "before", Message: "must be later than after"})
	}
	return nil
}

// Excerpt cuts a headline the store made with MatchStart and MatchStop around the matched
// words into segments, merging neighbours of the same kind and dropping empty ones. A stray
// marker (none can occur, see MatchStart) is dropped with its text kept.
func Excerpt(headline string) []chat.ExcerptSegment {
	out := []chat.ExcerptSegment{}
	add := func(text string, match bool) {
		if text == "" {
			return
		}
		if n := len(out); n > 0 && out[n-1].Match == match {
			out[n-1].Text += text
			return
		}
		out = append(out, chat.ExcerptSegment{Text: text, Match: match})
	}
	rest := headline
	for rest != "" {
		start := strings.Index(rest, MatchStart)
		if start < 0 {
			add(strings.ReplaceAll(rest, MatchStop, ""), false)
			break
		}
		add(strings.ReplaceAll(rest[:start], MatchStop, ""), false)
		rest = rest[start+len(MatchStart):]
		stop := strings.Index(rest, MatchStop)
		if stop < 0 {
			add(strings.ReplaceAll(rest, MatchStart, ""), true)
			break
		}
		add(strings.ReplaceAll(rest[:stop], MatchStart, ""), true)
		rest = rest[stop+len(MatchStop):]
	}
	return out
}
