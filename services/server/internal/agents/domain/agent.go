// Package domain holds the agents module's rules, free of storage and HTTP: what a valid agent
// description is and what the profile of an agent holds.
package domain

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// MaxDescriptionLen is the most characters (runes) of an agent's description: a paragraph
// that says what the agent does.
const MaxDescriptionLen = 500

// Profile is what the agents module stores of an agent; its name and handle belong to its
// identity principal.
type Profile struct {
	// PrincipalID is the agent's identity principal (of kind agent).
	PrincipalID uuid.UUID
	// Description says what the agent does; empty when it has none.
	Description string
	// CreatedBy is the principal who created the agent.
	CreatedBy uuid.UUID
	// CreatedAt is when the agent was created, in UTC (its principal's creation time).
	CreatedAt time.Time
	// ArchivedAt is when the agent was archived; zero while it is active.
	ArchivedAt time.Time
}

// Description returns the stored form of a description (outer space trimmed) and, when it is
// invalid, what is wrong with it ("" when it is valid).
func Description(s string) (normalized, problem string) {
	s = strings.TrimSpace(s)
	switch {
	case !utf8.ValidString(s):
		return s, "must be valid UTF-8"
	case strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }):
		return s, "must not contain control characters other than line feeds and tabs"
	case utf8.RuneCountInString(s) > MaxDescriptionLen:
		return s, "must be at most 500 characters"
	}
	return s, ""
}
