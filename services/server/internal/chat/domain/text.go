package domain

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/kernel/problem"
)

// Limits of the text fields, in characters (runes) after trimming outer space. Message text
// is limited in bytes by the configuration (chat.max_message_bytes), not here.
const (
	// MaxNameLen is the most characters of a space's or channel's name.
	MaxNameLen = 80
	// MaxDescriptionLen is the most characters of a space's description.
	MaxDescriptionLen = 1000
	// MaxTopicLen is the most characters of a channel's topic.
	MaxTopicLen = 250
	// MaxTitleLen is the most characters of a thread's title.
	MaxTitleLen = 200
)

// Conflicts of the chat rules. Each is a problem.ErrConflict with a detail a client may read.
var (
	// ErrChannelNameTaken: a channel of the space that is not archived has the name already
	// (compared case-insensitively).
	ErrChannelNameTaken = problem.New(problem.ErrConflict, "A channel of this space has this name already.")
	// ErrSpaceArchived: no channel may be created in an archived space.
	ErrSpaceArchived = problem.New(problem.ErrConflict, "The space is archived.")
	// ErrChannelArchived: no thread or message may be added to an archived channel, and no
	// message of it edited.
	ErrChannelArchived = problem.New(problem.ErrConflict, "The channel is archived.")
	// ErrMessageDeleted: a deleted (redacted) message cannot be edited or reacted to.
	ErrMessageDeleted = problem.New(problem.ErrConflict, "The message is deleted.")
	// ErrTooManyReactions: a new distinct reaction on a message that holds
	// chat.max_reactions_per_message of them already.
	ErrTooManyReactions = problem.New(problem.ErrConflict, "The message has as many distinct reactions as it may hold.")
)

// validator collects the invalid fields of one input, so that a client learns every problem
// of a request at once.
type validator struct {
	fields []problem.FieldError
}

func (v *validator) fail(field, msg string) {
	v.fields = append(v.fields, problem.FieldError{Field: field, Message: msg})
}

func (v *validator) err() error {
	if len(v.fields) == 0 {
		return nil
	}
	return problem.Validation(v.fields...)
}

func tooLong(n int) string {
	return "must be at most " + strconv.Itoa(n) + " characters"
}

// line checks a one-line text (a name, a title): outer space trimmed, valid UTF-8 without
// control characters, at most limit characters, and required unless optional.
func (v *validator) line(field, s string, limit int, optional bool) string {
	s = strings.TrimSpace(s)
	switch {
	case s == "" && optional:
	case s == "":
		v.fail(field, "is required")
	case !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl):
		v.fail(field, "must be valid UTF-8 without control characters")
	case utf8.RuneCountInString(s) > limit:
		v.fail(field, tooLong(limit))
	}
	return s
}

// text checks an optional free text (a description, a topic) that may span lines: outer
// space trimmed, valid UTF-8 without control characters other than newline and tab, at most
// limit characters.
func (v *validator) text(field, s string, limit int) string {
	s = strings.TrimSpace(s)
	switch {
	case !utf8.ValidString(s) || strings.ContainsFunc(s, isForbiddenControl):
		v.fail(field, "must be valid UTF-8 without control characters other than newline and tab")
	case utf8.RuneCountInString(s) > limit:
		v.fail(field, tooLong(limit))
	}
	return s
}

func isForbiddenControl(r rune) bool {
	return unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r'
}

// content checks a message text: 1 to maxBytes bytes of valid UTF-8, not only whitespace. It
// is stored as written (Markdown may depend on leading space).
func (v *validator) content(s string, maxBytes int) {
	switch {
	case strings.TrimSpace(s) == "":
		v.fail("content_md", "is required and must not be only whitespace")
	case len(s) > maxBytes:
		v.fail("content_md", "must be at most "+strconv.Itoa(maxBytes)+" bytes")
	case !utf8.ValidString(s):
		v.fail("content_md", "must be valid UTF-8")
	}
}

// NewSpace validates in and returns the space it describes, with version 1. Invalid fields
// (name, description) give one problem.Validation error naming each.
func NewSpace(id uuid.UUID, in chat.SpaceInput, now time.Time) (chat.Space, error) {
	var v validator
	name := v.line("name", in.Name, MaxNameLen, false)
	description := v.text("description", in.Description, MaxDescriptionLen)
	if err := v.err(); err != nil {
		return chat.Space{}, err
	}
	return chat.Space{ID: id, Name: name, Description: description, Version: 1, CreatedAt: now.UTC()}, nil
}

// NewChannel validates in and returns the standard channel it describes, with version 1.
// Invalid fields (name, topic) give one problem.Validation error naming each. Whether the
// name is free in the space is the store's question (ErrChannelNameTaken).
func NewChannel(id uuid.UUID, in chat.ChannelInput, now time.Time) (chat.Channel, error) {
	var v validator
	name := v.line("name", in.Name, MaxNameLen, false)
	topic := v.text("topic", in.Topic, MaxTopicLen)
	if err := v.err(); err != nil {
		return chat.Channel{}, err
	}
	return chat.Channel{
		ID: id, SpaceID: in.SpaceID, Kind: chat.ChannelStandard, Name: name, Topic: topic,
		Version: 1, CreatedAt: now.UTC(),
	}, nil
}

// NewDirect returns the direct-message channel of the participants (canonical, see
// DirectParticipants), with version 1 and no space.
func NewDirect(id uuid.UUID, participants []uuid.UUID, now time.Time) chat.Channel {
	return chat.Channel{
		ID: id, Kind: chat.ChannelDM, ParticipantIDs: participants, Version: 1, CreatedAt: now.UTC(),
	}
}

// Title validates an optional thread title and returns it trimmed; a validation error names
// title.
func Title(s string) (string, error) {
	var v validator
	title := v.line("title", s, MaxTitleLen, true)
	return title, v.err()
}

// Content validates a message text against the limit of chat.max_message_bytes; a validation
// error names content_md.
func Content(s string, maxBytes int) error {
	var v validator
	v.content(s, maxBytes)
	return v.err()
}

// NewThread validates a new thread's title and first message and returns both: the thread
// with version 1 and LastMessageSeq 1 and its message with seq 1, in ch, started by author.
// mentions are the resolved mention ids of the text. Invalid fields (title, content_md) give
// one validation error naming each.
func NewThread(threadID, messageID uuid.UUID, ch chat.Channel, author uuid.UUID, in chat.ThreadInput, mentions []uuid.UUID, maxBytes int, now time.Time) (chat.Thread, chat.Message, error) {
	var v validator
	title := v.line("title", in.Title, MaxTitleLen, true)
	v.content(in.ContentMD, maxBytes)
	if err := v.err(); err != nil {
		return chat.Thread{}, chat.Message{}, err
	}
	th := chat.Thread{
		ID: threadID, ChannelID: ch.ID, SpaceID: ch.SpaceID, Title: title, CreatedBy: author,
		CreatedAt: now.UTC(), Version: 1, LastMessageSeq: 1,
	}
	m := NewMessage(messageID, th, author, chat.MessageInput{ThreadID: th.ID, ContentMD: in.ContentMD, ExternalKey: in.ExternalKey}, mentions, now)
	return th, m, nil
}

// NewMessage returns the message of in posted by author into th, whose LastMessageSeq is the
// seq the message takes (the caller advanced it). The text is not validated here: Content
// does that before the seq is taken.
func NewMessage(id uuid.UUID, th chat.Thread, author uuid.UUID, in chat.MessageInput, mentions []uuid.UUID, now time.Time) chat.Message {
	return chat.Message{
		ID: id, ThreadID: th.ID, ChannelID: th.ChannelID, SpaceID: th.SpaceID, Seq: th.LastMessageSeq,
		AuthorID: author, ContentMD: in.ContentMD, MentionIDs: mentions, CreatedAt: now.UTC(),
		ExternalKey: in.ExternalKey,
	}
}

// Edit replaces the text and mentions of m and sets its edit time; ErrMessageDeleted, and no
// change, for a redacted message. The text is validated by Content beforehand.
func Edit(m *chat.Message, contentMD string, mentions []uuid.UUID, now time.Time) error {
	if m.Redacted() {
		return ErrMessageDeleted
	}
	m.ContentMD = contentMD
	m.MentionIDs = mentions
	m.EditedAt = now.UTC()
	return nil
}

// Redact clears the text and mentions of m and sets its redaction time, keeping its ids, seq,
// author and external key (so a re-import does not bring it back). It reports false, and
// changes nothing, when m is redacted already.
func Redact(m *chat.Message, now time.Time) bool {
	if m.Redacted() {
		return false
	}
	m.ContentMD = ""
	m.MentionIDs = nil
	m.Reactions = nil
	m.RedactedAt = now.UTC()
	return true
}

// Archive sets the archive time of a space or channel and advances its version; it reports
// false, and changes nothing, when the row is archived already.
func Archive(archivedAt *time.Time, version *int64, now time.Time) bool {
	if !archivedAt.IsZero() {
		return false
	}
	*archivedAt = now.UTC()
	*version++
	return true
}
