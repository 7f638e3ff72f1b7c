package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/problem"
)

// The JSON field names of the personal-data requests (spec 05) that validation errors name, so
// that a client can point at the offending field.
const (
	// FieldLastReadSeq is updateReadState's last_read_seq.
	FieldLastReadSeq = "last_read_seq"
	// FieldContentMD is saveDraft's content_md.
	FieldContentMD = "content_md"
	// FieldKey is putSetting's key (a path parameter).
	FieldKey = "key"
	// FieldValue is putSetting's value.
	FieldValue = "value"
	// FieldSections is putSidebar's sections.
	FieldSections = "sections"
)

// SidebarLimits bound what one principal's sidebar holds, and so what every snapshot and
// sidebar.updated event carries: the keys sync.max_sidebar_sections and
// sync.max_sidebar_channels, read by wire.
type SidebarLimits struct {
	// Sections is the most sections a sidebar has.
	Sections int
	// Channels is the most channel ids a sidebar holds in all its sections, counted after
	// duplicates within a section are dropped.
	Channels int
}

// Limits of the personal data's form: the widths of a section's key and title and the nesting
// of a setting's value.
const (
	// MaxSectionKeyLen is the most characters (runes) of a section key.
	MaxSectionKeyLen = 64
	// MaxSectionTitleLen is the most characters (runes) of a section title.
	MaxSectionTitleLen = 80
	// MaxSettingDepth is how deeply arrays and objects may nest in a setting's value: deep
	// enough for any real preference, shallow enough that no parser on the way (PostgreSQL's
	// jsonb included) runs out of stack.
	MaxSettingDepth = 64
)

// SettingKeyPattern is the form of a setting key: a lower-case letter, then at most 63
// lower-case letters, digits, underscores, dots or hyphens. Keys appear in URL paths, so they
// need no escaping.
const SettingKeyPattern = `^[a-z][a-z0-9_.-]{0,63}$`

var settingKey = regexp.MustCompile(SettingKeyPattern)

const (
	msgRequired = "is required"
	msgUTF8     = "must be valid UTF-8"
	msgNUL      = "must not contain the character U+0000"
)

// CheckLastReadSeq checks how far a reader says it has read a thread: 0 (nothing) or more. A
// failure is a validation error naming last_read_seq.
func CheckLastReadSeq(lastReadSeq int64) error {
	if lastReadSeq < 0 {
		return problem.Validation(problem.FieldError{Field: FieldLastReadSeq, Message: "must be 0 or more"})
	}
	return nil
}

// ClampLastReadSeq returns lastReadSeq lowered to lastMessageSeq, the seq of the thread's
// newest message, when it is beyond it: nobody has read a message that does not exist yet, and
// unread counts (newest seq minus last read) must never go negative. The result is never below
// 0.
func ClampLastReadSeq(lastReadSeq, lastMessageSeq int64) int64 {
	return max(min(lastReadSeq, lastMessageSeq), 0)
}

// CheckDraftContent checks the Markdown text of a draft: 1 to maxBytes bytes (the operator's
// sync.max_draft_bytes) of valid UTF-8 without NUL, which PostgreSQL text cannot hold.
// Whitespace alone is a valid draft: it is what the user typed. A failure is a validation
// error naming content_md.
func CheckDraftContent(contentMD string, maxBytes int64) error {
	msg := ""
	switch {
	case contentMD == "":
		msg = msgRequired
	case int64(len(contentMD)) > maxBytes:
		msg = fmt.Sprintf("must be at most %d bytes", maxBytes)
	case !utf8.ValidString(contentMD):
		msg = msgUTF8
	case strings.IndexByte(contentMD, 0) >= 0:
		msg = msgNUL
	default:
		return nil
	}
	return problem.Validation(problem.FieldError{Field: FieldContentMD, Message: msg})
}

// CheckSettingKey checks a setting key against SettingKeyPattern; a failure is a validation
// error naming key.
func CheckSettingKey(key string) error {
	if settingKey.MatchString(key) {
		return nil
	}
	return problem.Validation(problem.FieldError{Field: FieldKey, Message: msgSettingKey})
}

const msgSettingKey = "must be a lower-case letter followed by at most 63 lower-case letters, digits, '_', '.' or '-'"

// NormalizeSetting checks a whole setting, its key as CheckSettingKey and its value as
// NormalizeSettingValue, and returns the normalized value. A failure is one validation error
// naming key, value or both, so that a client learns every mistake from one answer.
func NormalizeSetting(key string, value json.RawMessage, maxBytes int64) (json.RawMessage, error) {
	var fields []problem.FieldError
	if !settingKey.MatchString(key) {
		fields = append(fields, problem.FieldError{Field: FieldKey, Message: msgSettingKey})
	}
	out, msg := normalizeValue(value, maxBytes)
	if msg != "" {
		fields = append(fields, problem.FieldError{Field: FieldValue, Message: msg})
	}
	if len(fields) > 0 {
		return nil, problem.Validation(fields...)
	}
	return out, nil
}

// NormalizeSettingValue checks a setting's value and returns it in the form it is stored and
// sent: compact, object members sorted by name (the last of duplicate names wins), HTML
// characters unescaped, a new slice. The value is any one JSON value of valid UTF-8 except that
// it neither is nor contains null (spec 05: no null anywhere), no string or name holds U+0000,
// every number fits a 64-bit float (RFC 8259 interoperability), arrays and objects nest at most
// MaxSettingDepth deep, and the normalized form has at most maxBytes bytes (the operator's
// sync.max_setting_bytes). A failure is a validation error naming value.
func NormalizeSettingValue(value json.RawMessage, maxBytes int64) (json.RawMessage, error) {
	out, msg := normalizeValue(value, maxBytes)
	if msg != "" {
		return nil, problem.Validation(problem.FieldError{Field: FieldValue, Message: msg})
	}
	return out, nil
}

// normalizeValue is NormalizeSettingValue with the failure as a message.
func normalizeValue(value json.RawMessage, maxBytes int64) (json.RawMessage, string) {
	if len(bytes.TrimSpace(value)) == 0 {
		return nil, msgRequired
	}
	if !utf8.Valid(value) {
		return nil, msgUTF8
	}
	dec := json.NewDecoder(bytes.NewReader(value))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, "must be valid JSON"
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, "must be exactly one JSON value"
	}
	if msg := checkValue(v, 0); msg != "" {
		return nil, msg
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Unreachable: v holds only what the decoder produced, and every json.Number in it
		// came from valid JSON.
		return nil, "must be valid JSON"
	}
	out := bytes.TrimSuffix(b.Bytes(), []byte{'\n'})
	if int64(len(out)) > maxBytes {
		return nil, fmt.Sprintf("must be at most %d bytes of JSON", maxBytes)
	}
	return out, ""
}

// checkValue walks a decoded value (UseNumber) at nesting depth and returns what is wrong with
// it, or "" when nothing is.
func checkValue(v any, depth int) string {
	switch v := v.(type) {
	case nil:
		return "must not be or contain null"
	case string:
		if strings.IndexByte(v, 0) >= 0 {
			return msgNUL
		}
	case json.Number:
		if f, err := strconv.ParseFloat(v.String(), 64); err != nil && math.IsInf(f, 0) {
			return "must hold only numbers that fit a 64-bit float"
		}
	case []any:
		if depth == MaxSettingDepth {
			return fmt.Sprintf("must not nest arrays and objects more than %d deep", MaxSettingDepth)
		}
		for _, item := range v {
			if msg := checkValue(item, depth+1); msg != "" {
				return msg
			}
		}
	case map[string]any:
		if depth == MaxSettingDepth {
			return fmt.Sprintf("must not nest arrays and objects more than %d deep", MaxSettingDepth)
		}
		for name, item := range v {
			if strings.IndexByte(name, 0) >= 0 {
				return msgNUL
			}
			if msg := checkValue(item, depth+1); msg != "" {
				return msg
			}
		}
	}
	return ""
}

// SidebarSection is one section of a principal's sidebar, as it is stored and as
// sidebar.updated carries it: every member present, channel_ids never null.
type SidebarSection struct {
	// Key identifies the section within the sidebar: 1 to MaxSectionKeyLen characters, unique.
	Key string `json:"key"`
	// Title is shown above the section; at most MaxSectionTitleLen characters, may be empty.
	Title string `json:"title"`
	// Collapsed tells whether the client shows the section folded.
	Collapsed bool `json:"collapsed"`
	// ChannelIDs are the channels of the section in the owner's order.
	ChannelIDs []uuid.UUID `json:"channel_ids"`
}

// NormalizeSidebar checks a sidebar and returns it as it is stored: a new slice (empty, not
// nil, for no sections) in the given order, each section's channel ids in the given order
// with later duplicates within the section dropped (a channel may appear in several
// sections), never nil. Channel ids are not checked against what the owner may read: the
// snapshot filters what its reader cannot read.
//
// Rules: at most limits.Sections sections and limits.Channels channel ids in all; each
// key 1 to MaxSectionKeyLen characters, unique; each title at most MaxSectionTitleLen
// characters; keys and titles valid UTF-8 without control characters; no nil channel id. A
// failure is one validation error naming sections once per problem, each message naming the
// section by its 1-based position.
func NormalizeSidebar(sections []SidebarSection, limits SidebarLimits) ([]SidebarSection, error) {
	invalid := func(msgs ...string) error {
		fields := make([]problem.FieldError, len(msgs))
		for i, m := range msgs {
			fields[i] = problem.FieldError{Field: FieldSections, Message: m}
		}
		return problem.Validation(fields...)
	}
	if len(sections) > limits.Sections {
		return nil, invalid(fmt.Sprintf("must have at most %d sections", limits.Sections))
	}
	var msgs []string
	fail := func(i int, format string, args ...any) {
		msgs = append(msgs, fmt.Sprintf("section %d: ", i+1)+fmt.Sprintf(format, args...))
	}
	out := make([]SidebarSection, len(sections))
	keys := make(map[string]bool, len(sections))
	channels := 0
	for i, s := range sections {
		if msg := checkText(s.Key, 1, MaxSectionKeyLen); msg != "" {
			fail(i, "key %s", msg)
		} else if keys[s.Key] {
			fail(i, "key %q is used by an earlier section", s.Key)
		}
		keys[s.Key] = true
		if msg := checkText(s.Title, 0, MaxSectionTitleLen); msg != "" {
			fail(i, "title %s", msg)
		}
		ids := make([]uuid.UUID, 0, len(s.ChannelIDs))
		seen := make(map[uuid.UUID]bool, len(s.ChannelIDs))
		nilID := false
		for _, id := range s.ChannelIDs {
			nilID = nilID || id == uuid.Nil
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		if nilID {
			fail(i, "channel ids must not hold the nil UUID")
		}
		channels += len(ids)
		out[i] = SidebarSection{Key: s.Key, Title: s.Title, Collapsed: s.Collapsed, ChannelIDs: ids}
	}
	if channels > limits.Channels {
		msgs = append(msgs, fmt.Sprintf("must hold at most %d channel ids in all sections, not %d", limits.Channels, channels))
	}
	if len(msgs) > 0 {
		return nil, invalid(msgs...)
	}
	return out, nil
}

// checkText checks a key or title: valid UTF-8 of minRunes to maxRunes characters without
// control characters. It returns what is wrong, or "".
func checkText(s string, minRunes, maxRunes int) string {
	if !utf8.ValidString(s) {
		return msgUTF8
	}
	if n := utf8.RuneCountInString(s); n < minRunes || n > maxRunes {
		return fmt.Sprintf("must have %d to %d characters", minRunes, maxRunes)
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return "must not contain control characters"
	}
	return ""
}
