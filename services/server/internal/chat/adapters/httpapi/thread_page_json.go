package httpapi

import (
	"fmt"
	"strconv"
	"time"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/jsontext"
)

// threadSummaryBytes bounds the encoded size of a thread summary's members other than its
// title and excerpt (names, five ids, two times, five integers: at most about 560 bytes, 420
// with the bench's values), so that the page is sized once: a title or an excerpt that needs
// escapes grows the buffer by copying it into one twice its size.
const threadSummaryBytes = 576

// AppendThreadSummaryList appends the JSON object of l to dst, byte for byte what
// json.Marshal(l) writes (member order, omitted optional members, null for a nil list,
// HTML-safe string escapes, time.Time's RFC 3339 form), and returns the extended slice. It is
// listChannelThreads' encoder: a client polls the list, and encoding/json spent about a tenth
// of the request's CPU on the page's five ids and two times per thread (make bench). A test
// compares both encodings over random pages, so a member added to the schema and missed here
// fails it. Its errors are json.Marshal's (a time whose year has more than four digits).
func AppendThreadSummaryList(dst []byte, l apigen.ThreadSummaryList) ([]byte, error) {
	need := 128 // the braces, items, next_cursor and the newline the handler adds
	for _, s := range l.Items {
		need += threadSummaryBytes + len(s.Title) + len(s.FirstMessageExcerpt)
	}
	if cap(dst)-len(dst) < need {
		dst = append(make([]byte, 0, len(dst)+need), dst...)
	}
	dst = append(dst, `{"items":`...)
	if l.Items == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, s := range l.Items {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendThreadSummary(dst, s); err != nil {
				return nil, err
			}
		}
		dst = append(dst, ']')
	}
	if l.NextCursor != nil {
		dst = append(dst, `,"next_cursor":`...)
		dst = jsontext.AppendString(dst, *l.NextCursor, true)
	}
	return append(dst, '}'), nil
}

// appendThreadSummary appends one thread summary as json.Marshal writes it.
func appendThreadSummary(dst []byte, s apigen.ThreadSummary) ([]byte, error) {
	dst = append(dst, `{"channel_id":`...)
	dst = jsontext.AppendUUID(dst, s.ChannelId)
	var err error
	if dst, err = appendTime(dst, `,"created_at":`, s.CreatedAt); err != nil {
		return nil, fmt.Errorf("encode thread %s: %w", s.Id, err)
	}
	dst = append(dst, `,"created_by":`...)
	dst = jsontext.AppendUUID(dst, s.CreatedBy)
	dst = append(dst, `,"first_message_excerpt":`...)
	dst = jsontext.AppendString(dst, s.FirstMessageExcerpt, true)
	dst = append(dst, `,"first_message_redacted":`...)
	dst = strconv.AppendBool(dst, s.FirstMessageRedacted)
	dst = append(dst, `,"id":`...)
	dst = jsontext.AppendUUID(dst, s.Id)
	if dst, err = appendTime(dst, `,"last_message_at":`, s.LastMessageAt); err != nil {
		return nil, fmt.Errorf("encode thread %s: %w", s.Id, err)
	}
	dst = append(dst, `,"last_message_seq":`...)
	dst = strconv.AppendInt(dst, s.LastMessageSeq, 10)
	dst = append(dst, `,"mention_count":`...)
	dst = strconv.AppendInt(dst, s.MentionCount, 10)
	dst = append(dst, `,"reply_count":`...)
	dst = strconv.AppendInt(dst, s.ReplyCount, 10)
	if s.SpaceId != nil {
		dst = append(dst, `,"space_id":`...)
		dst = jsontext.AppendUUID(dst, *s.SpaceId)
	}
	dst = append(dst, `,"title":`...)
	dst = jsontext.AppendString(dst, s.Title, true)
	dst = append(dst, `,"unread_count":`...)
	dst = strconv.AppendInt(dst, s.UnreadCount, 10)
	dst = append(dst, `,"version":`...)
	dst = strconv.AppendInt(dst, s.Version, 10)
	return append(dst, '}'), nil
}

// appendTime appends member and t quoted in time.Time's JSON form, failing where its
// MarshalJSON fails (a year outside 0 to 9999).
func appendTime(dst []byte, member string, t time.Time) ([]byte, error) {
	dst = append(dst, member...)
	dst = append(dst, '"')
	dst, err := t.AppendText(dst)
	if err != nil {
		return nil, err
	}
	return append(dst, '"'), nil
}
