package httpapi

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/kernel/jsontext"
	syncmod "bothy.example.com/server/internal/sync"
)

// Per-entry guesses of the encoded size of the snapshot's two long lists, so that one buffer
// usually holds the whole body: a channel with its capabilities takes about 310 bytes and an
// unread thread about 230 (make bench's snapshot), and a buffer that is too small is copied
// into one twice its size.
const (
	channelBytes      = 384
	unreadThreadBytes = 256
	snapshotRestBytes = 4096
)

// EncodeSnapshot returns getSnapshot's JSON body for v: byte for byte what encoding/json
// writes for ToAPISnapshot(v) (AppendSnapshot), with channels and unread_threads, almost the
// whole body, encoded straight from the view instead of through their API values. It is the
// snapshot's encoder (app.SnapshotDeps.Encoder): the snapshot encodes itself once per build
// and hashes the result for its ETag, and both the handler and the gateway's ready frame send
// those bytes. A test compares it with json.Marshal(ToAPISnapshot(v)) over random views.
func EncodeSnapshot(v syncmod.SnapshotView) ([]byte, error) {
	rest := v
	rest.Channels, rest.UnreadThreads = nil, nil
	return appendSnapshot(nil, ToAPISnapshot(rest), len(v.Channels), len(v.UnreadThreads),
		func(dst []byte) ([]byte, error) { return appendViewChannels(dst, v.Channels) },
		func(dst []byte) []byte { return appendViewUnreadThreads(dst, v.UnreadThreads) })
}

// AppendSnapshot appends the JSON object of s to dst, byte for byte what json.Marshal(s)
// writes (member order, omitted optional members, null for a nil list, HTML-safe string
// escapes, time.Time's RFC 3339 form), and returns the extended slice. The two lists that make
// up almost the whole body, channels and unread_threads, are written by hand without
// reflection or an allocation per value; every other member goes through json.Marshal. A test
// compares both encodings over random snapshots, so a member added to the schema and missed
// here fails it. Errors are json.Marshal's (a setting's value that is not JSON, a time whose
// year has more than four digits).
func AppendSnapshot(dst []byte, s apigen.Snapshot) ([]byte, error) {
	return appendSnapshot(dst, s, len(s.Channels), len(s.UnreadThreads),
		func(dst []byte) ([]byte, error) { return appendChannelViews(dst, s.Channels) },
		func(dst []byte) []byte { return appendUnreadThreads(dst, s.UnreadThreads) })
}

// appendSnapshot appends s with its channels and unread_threads written by the given
// functions (s's own lists are not used), sizing dst for that many of each first.
func appendSnapshot(dst []byte, s apigen.Snapshot, nChannels, nUnread int,
	channels func([]byte) ([]byte, error), unread func([]byte) []byte,
) ([]byte, error) {
	if need := snapshotRestBytes + nChannels*channelBytes + nUnread*unreadThreadBytes; cap(dst)-len(dst) < need {
		dst = append(make([]byte, 0, len(dst)+need), dst...)
	}
	var err error
	for _, m := range []struct {
		name string
		v    any
	}{
		{`{"active_runs":`, s.ActiveRuns},
		{`,"agents":`, s.Agents},
	} {
		if dst, err = appendMarshaled(dst, m.name, m.v); err != nil {
			return nil, err
		}
	}
	dst = append(dst, `,"channels":`...)
	if dst, err = channels(dst); err != nil {
		return nil, err
	}
	if dst, err = appendMarshaled(dst, `,"drafts":`, s.Drafts); err != nil {
		return nil, err
	}
	if dst, err = appendMarshaled(dst, `,"features":`, s.Features); err != nil {
		return nil, err
	}
	dst = append(dst, `,"head_seq":`...)
	dst = strconv.AppendInt(dst, s.HeadSeq, 10)
	if dst, err = appendMarshaled(dst, `,"instance":`, s.Instance); err != nil {
		return nil, err
	}
	dst = append(dst, `,"is_owner":`...)
	dst = strconv.AppendBool(dst, s.IsOwner)
	dst = append(dst, `,"permission_version":`...)
	dst = strconv.AppendInt(dst, s.PermissionVersion, 10)
	for _, m := range []struct {
		name string
		v    any
	}{
		{`,"principal":`, s.Principal},
		{`,"settings":`, s.Settings},
		{`,"sidebar":`, s.Sidebar},
		{`,"spaces":`, s.Spaces},
	} {
		if dst, err = appendMarshaled(dst, m.name, m.v); err != nil {
			return nil, err
		}
	}
	dst = append(dst, `,"sync_epoch":`...)
	dst = jsontext.AppendUUID(dst, s.SyncEpoch)
	dst = append(dst, `,"unread_threads":`...)
	dst = unread(dst)
	return append(dst, '}'), nil
}

// appendViewChannels appends the channels of a view as ToAPISnapshot maps them (toAPIChannelView
// for each) and json.Marshal writes them: always a list, never null.
func appendViewChannels(dst []byte, list []chat.ChannelView) ([]byte, error) {
	dst = append(dst, '[')
	for i, c := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendChannelView(dst, toAPIChannelView(c)); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// appendViewUnreadThreads appends the unread threads of a view as ToAPISnapshot maps them (no
// space_id in a direct message) and json.Marshal writes them: always a list, never null.
func appendViewUnreadThreads(dst []byte, list []syncmod.UnreadThread) []byte {
	dst = append(dst, '[')
	for i, u := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		var space *uuid.UUID
		if u.SpaceID != uuid.Nil {
			space = &u.SpaceID
		}
		dst = appendUnreadThread(dst, u.ChannelID, u.LastMessageSeq, u.LastReadSeq, u.MentionCount, space, u.ThreadID, u.UnreadCount)
	}
	return append(dst, ']')
}

// appendMarshaled appends name and json.Marshal(v).
func appendMarshaled(dst []byte, name string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode snapshot: %w", err)
	}
	dst = append(dst, name...)
	return append(dst, b...), nil
}

// appendChannelViews appends the channels as json.Marshal does.
func appendChannelViews(dst []byte, list []apigen.ChannelView) ([]byte, error) {
	if list == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i, c := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendChannelView(dst, c); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// appendChannelView appends one channel as json.Marshal does. The snapshot lists no archived
// channel, but ChannelView (shared with getChannel) has archived_at, written first as
// json.Marshal orders the generated fields.
func appendChannelView(dst []byte, c apigen.ChannelView) ([]byte, error) {
	dst = append(dst, '{')
	if c.ArchivedAt != nil {
		dst = append(dst, `"archived_at":"`...)
		var err error
		if dst, err = c.ArchivedAt.AppendText(dst); err != nil {
			return nil, fmt.Errorf("encode snapshot: channel %s: %w", c.Id, err)
		}
		dst = append(dst, `",`...)
	}
	dst = append(dst, `"capabilities":`...)
	if c.Capabilities == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for j, capability := range c.Capabilities {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = jsontext.AppendString(dst, string(capability), true)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"created_at":"`...)
	var err error
	if dst, err = c.CreatedAt.AppendText(dst); err != nil {
		return nil, fmt.Errorf("encode snapshot: channel %s: %w", c.Id, err)
	}
	dst = append(dst, `","id":`...)
	dst = jsontext.AppendUUID(dst, c.Id)
	dst = append(dst, `,"kind":`...)
	dst = jsontext.AppendString(dst, string(c.Kind), true)
	dst = append(dst, `,"level":`...)
	dst = jsontext.AppendString(dst, string(c.Level), true)
	if c.Name != nil {
		dst = append(dst, `,"name":`...)
		dst = jsontext.AppendString(dst, *c.Name, true)
	}
	dst = append(dst, `,"participant_ids":`...)
	if c.ParticipantIds == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for j, id := range c.ParticipantIds {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = jsontext.AppendUUID(dst, id)
		}
		dst = append(dst, ']')
	}
	if c.SpaceId != nil {
		dst = append(dst, `,"space_id":`...)
		dst = jsontext.AppendUUID(dst, *c.SpaceId)
	}
	if c.Topic != nil {
		dst = append(dst, `,"topic":`...)
		dst = jsontext.AppendString(dst, *c.Topic, true)
	}
	dst = append(dst, `,"version":`...)
	dst = strconv.AppendInt(dst, c.Version, 10)
	return append(dst, '}'), nil
}

// appendUnreadThreads appends the unread threads as json.Marshal does.
func appendUnreadThreads(dst []byte, list []apigen.UnreadThread) []byte {
	if list == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, u := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendUnreadThread(dst, u.ChannelId, u.LastMessageSeq, u.LastReadSeq, u.MentionCount, u.SpaceId, u.ThreadId, u.UnreadCount)
	}
	return append(dst, ']')
}

// appendUnreadThread appends one apigen.UnreadThread, given member by member, as json.Marshal
// writes it; space is omitted when nil.
func appendUnreadThread(dst []byte, channel uuid.UUID, lastMessage, lastRead, mentions int64, space *uuid.UUID, thread uuid.UUID, unread int64) []byte {
	dst = append(dst, `{"channel_id":`...)
	dst = jsontext.AppendUUID(dst, channel)
	dst = append(dst, `,"last_message_seq":`...)
	dst = strconv.AppendInt(dst, lastMessage, 10)
	dst = append(dst, `,"last_read_seq":`...)
	dst = strconv.AppendInt(dst, lastRead, 10)
	dst = append(dst, `,"mention_count":`...)
	dst = strconv.AppendInt(dst, mentions, 10)
	if space != nil {
		dst = append(dst, `,"space_id":`...)
		dst = jsontext.AppendUUID(dst, *space)
	}
	dst = append(dst, `,"thread_id":`...)
	dst = jsontext.AppendUUID(dst, thread)
	dst = append(dst, `,"unread_count":`...)
	dst = strconv.AppendInt(dst, unread, 10)
	return append(dst, '}')
}
