package domain_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/domain"
	"bothy.example.com/server/internal/kernel/problem"
)

var (
	now   = time.Date(2026, 12, 1, 9, 30, 15, 0, time.FixedZone("CET", 3600))
	id    = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000c1")
	space = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000c2")
	alex  = uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000a1")
)

// fields returns the field names of a validation error, failing the test for any other error.
func fields(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	if !errors.Is(err, problem.ErrValidation) {
		t.Fatalf("err = %v, want a validation error", err)
	}
	p := problem.From(t.Context(), err)
	out := make([]string, len(p.Errors))
	for i, f := range p.Errors {
		out[i] = f.Field
	}
	return out
}

func TestNewSpace(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       chat.SpaceInput
		want     chat.Space
		invalids []string
	}{
		{name: "trimmed", in: chat.SpaceInput{Name: "  Support  ", Description: " Help for Alex and Sam "},
			want: chat.Space{ID: id, Name: "Support", Description: "Help for Alex and Sam", Version: 1, CreatedAt: now.UTC()}},
		{name: "no description", in: chat.SpaceInput{Name: "Marketing"},
			want: chat.Space{ID: id, Name: "Marketing", Version: 1, CreatedAt: now.UTC()}},
		{name: "longest name", in: chat.SpaceInput{Name: strings.Repeat("é", domain.MaxNameLen)},
			want: chat.Space{ID: id, Name: strings.Repeat("é", domain.MaxNameLen), Version: 1, CreatedAt: now.UTC()}},
		{name: "multi-line description", in: chat.SpaceInput{Name: "Support", Description: "line one\nline two"},
			want: chat.Space{ID: id, Name: "Support", Description: "line one\nline two", Version: 1, CreatedAt: now.UTC()}},
		{name: "empty name", in: chat.SpaceInput{Name: "   "}, invalids: []string{"name"}},
		{name: "name too long", in: chat.SpaceInput{Name: strings.Repeat("a", domain.MaxNameLen+1)}, invalids: []string{"name"}},
		{name: "control character", in: chat.SpaceInput{Name: "Sup\x00port"}, invalids: []string{"name"}},
		{name: "newline in name", in: chat.SpaceInput{Name: "Sup\nport"}, invalids: []string{"name"}},
		{name: "invalid UTF-8", in: chat.SpaceInput{Name: "Sup\xffport"}, invalids: []string{"name"}},
		{name: "description too long", in: chat.SpaceInput{Name: "Support", Description: strings.Repeat("d", domain.MaxDescriptionLen+1)},
			invalids: []string{"description"}},
		{name: "description with NUL", in: chat.SpaceInput{Name: "Support", Description: "a\x00b"}, invalids: []string{"description"}},
		{name: "both", in: chat.SpaceInput{Name: "", Description: strings.Repeat("d", domain.MaxDescriptionLen+1)},
			invalids: []string{"name", "description"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.NewSpace(id, tt.in, now)
			if f := fields(t, err); !slices.Equal(f, tt.invalids) {
				t.Fatalf("invalid fields = %v, want %v (err %v)", f, tt.invalids, err)
			}
			if err == nil && got != tt.want {
				t.Fatalf("NewSpace = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestNewChannel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       chat.ChannelInput
		want     chat.Channel
		invalids []string
	}{
		{name: "trimmed", in: chat.ChannelInput{SpaceID: space, Name: " general ", Topic: " Questions from Robin "},
			want: chat.Channel{ID: id, SpaceID: space, Kind: chat.ChannelStandard, Name: "general", Topic: "Questions from Robin", Version: 1, CreatedAt: now.UTC()}},
		{name: "no topic", in: chat.ChannelInput{SpaceID: space, Name: "random"},
			want: chat.Channel{ID: id, SpaceID: space, Kind: chat.ChannelStandard, Name: "random", Version: 1, CreatedAt: now.UTC()}},
		{name: "empty name", in: chat.ChannelInput{SpaceID: space}, invalids: []string{"name"}},
		{name: "topic too long", in: chat.ChannelInput{SpaceID: space, Name: "general", Topic: strings.Repeat("t", domain.MaxTopicLen+1)},
			invalids: []string{"topic"}},
		{name: "longest topic", in: chat.ChannelInput{SpaceID: space, Name: "general", Topic: strings.Repeat("t", domain.MaxTopicLen)},
			want: chat.Channel{ID: id, SpaceID: space, Kind: chat.ChannelStandard, Name: "general", Topic: strings.Repeat("t", domain.MaxTopicLen), Version: 1, CreatedAt: now.UTC()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.NewChannel(id, tt.in, now)
			if f := fields(t, err); !slices.Equal(f, tt.invalids) {
				t.Fatalf("invalid fields = %v, want %v (err %v)", f, tt.invalids, err)
			}
			if err == nil && !channelsEqual(got, tt.want) {
				t.Fatalf("NewChannel = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func channelsEqual(a, b chat.Channel) bool {
	return a.ID == b.ID && a.SpaceID == b.SpaceID && a.Kind == b.Kind && a.Name == b.Name && a.Topic == b.Topic &&
		slices.Equal(a.ParticipantIDs, b.ParticipantIDs) && a.Version == b.Version &&
		a.ArchivedAt.Equal(b.ArchivedAt) && a.CreatedAt.Equal(b.CreatedAt)
}

func TestTitle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       string
		want     string
		invalids []string
	}{
		{name: "empty is none", in: "", want: ""},
		{name: "blank is none", in: "   ", want: ""},
		{name: "trimmed", in: " Release plan ", want: "Release plan"},
		{name: "longest", in: strings.Repeat("t", domain.MaxTitleLen), want: strings.Repeat("t", domain.MaxTitleLen)},
		{name: "too long", in: strings.Repeat("t", domain.MaxTitleLen+1), invalids: []string{"title"}},
		{name: "control", in: "a\tb", invalids: []string{"title"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.Title(tt.in)
			if f := fields(t, err); !slices.Equal(f, tt.invalids) {
				t.Fatalf("invalid fields = %v, want %v (err %v)", f, tt.invalids, err)
			}
			if err == nil && got != tt.want {
				t.Fatalf("Title = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestContent(t *testing.T) {
	t.Parallel()
	const limit = 16
	tests := []struct {
		name    string
		in      string
		invalid bool
	}{
		{name: "text", in: "Hello @sam"},
		{name: "exactly the limit", in: strings.Repeat("x", limit)},
		{name: "multi-byte at the limit", in: strings.Repeat("é", limit/2)},
		{name: "outer space kept valid", in: "  hi\n"},
		{name: "empty", in: "", invalid: true},
		{name: "only whitespace", in: " \n\t ", invalid: true},
		{name: "over the limit", in: strings.Repeat("x", limit+1), invalid: true},
		{name: "multi-byte over the limit", in: strings.Repeat("é", limit/2) + "x", invalid: true},
		{name: "invalid UTF-8", in: "ab\xffcd", invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := domain.Content(tt.in, limit)
			var want []string
			if tt.invalid {
				want = []string{"content_md"}
			}
			if f := fields(t, err); !slices.Equal(f, want) {
				t.Fatalf("invalid fields = %v, want %v (err %v)", f, want, err)
			}
		})
	}
}

func TestNewThreadAndFirstMessage(t *testing.T) {
	t.Parallel()
	ch := chat.Channel{ID: uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000d1"), SpaceID: space, Kind: chat.ChannelStandard}
	msgID := uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000d2")
	mentions := []uuid.UUID{alex}
	th, m, err := domain.NewThread(id, msgID, ch, alex, chat.ThreadInput{ChannelID: ch.ID, Title: " Plan ", ContentMD: "Hi @alex", ExternalKey: "git:1"}, mentions, 64, now)
	if err != nil {
		t.Fatalf("NewThread: %v", err)
	}
	wantThread := chat.Thread{ID: id, ChannelID: ch.ID, SpaceID: space, Title: "Plan", CreatedBy: alex, CreatedAt: now.UTC(), Version: 1, LastMessageSeq: 1}
	if th != wantThread {
		t.Fatalf("thread = %+v, want %+v", th, wantThread)
	}
	if m.ID != msgID || m.ThreadID != id || m.ChannelID != ch.ID || m.SpaceID != space || m.Seq != 1 || m.AuthorID != alex ||
		m.ContentMD != "Hi @alex" || !slices.Equal(m.MentionIDs, mentions) || !m.CreatedAt.Equal(now) || m.CreatedAt.Location() != time.UTC ||
		m.ExternalKey != "git:1" || !m.EditedAt.IsZero() || m.Redacted() {
		t.Fatalf("message = %+v", m)
	}

	_, _, err = domain.NewThread(id, msgID, ch, alex, chat.ThreadInput{Title: strings.Repeat("t", domain.MaxTitleLen+1), ContentMD: " "}, nil, 64, now)
	if f := fields(t, err); !slices.Equal(f, []string{"title", "content_md"}) {
		t.Fatalf("invalid fields = %v, want title and content_md", f)
	}
}

func TestNewMessage(t *testing.T) {
	t.Parallel()
	th := chat.Thread{ID: id, ChannelID: uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000d1"), SpaceID: space, LastMessageSeq: 7}
	msgID := uuid.MustParse("01938d2a-7c00-7a01-8000-0000000000d2")
	m := domain.NewMessage(msgID, th, alex, chat.MessageInput{ThreadID: id, ContentMD: "seven", ExternalKey: "k"}, nil, now)
	if m.ID != msgID || m.ThreadID != id || m.ChannelID != th.ChannelID || m.SpaceID != space || m.Seq != 7 ||
		m.AuthorID != alex || m.ContentMD != "seven" || m.MentionIDs != nil || !m.CreatedAt.Equal(now) || m.ExternalKey != "k" {
		t.Fatalf("NewMessage = %+v", m)
	}
}

func TestEditMessage(t *testing.T) {
	t.Parallel()
	m := chat.Message{ID: id, ContentMD: "old", MentionIDs: []uuid.UUID{alex}}
	if err := domain.Edit(&m, "new", nil, now); err != nil {
		t.Fatalf("Edit: %v", err)
	}
	if m.ContentMD != "new" || m.MentionIDs != nil || !m.EditedAt.Equal(now) || m.EditedAt.Location() != time.UTC {
		t.Fatalf("edited = %+v", m)
	}

	deleted := chat.Message{ID: id, RedactedAt: now}
	if err := domain.Edit(&deleted, "again", nil, now); !errors.Is(err, domain.ErrMessageDeleted) || !errors.Is(err, problem.ErrConflict) {
		t.Fatalf("Edit of a deleted message = %v, want ErrMessageDeleted (a conflict)", err)
	}
	if deleted.ContentMD != "" {
		t.Fatalf("a refused edit changed the message: %+v", deleted)
	}
}

func TestRedactMessage(t *testing.T) {
	t.Parallel()
	m := chat.Message{ID: id, ContentMD: "secret", MentionIDs: []uuid.UUID{alex}, ExternalKey: "git:1"}
	if !domain.Redact(&m, now) {
		t.Fatal("Redact of a live message reports no change")
	}
	if m.ContentMD != "" || m.MentionIDs != nil || !m.RedactedAt.Equal(now) || !m.Redacted() || m.ExternalKey != "git:1" {
		t.Fatalf("redacted = %+v", m)
	}
	again := m
	if domain.Redact(&again, now.Add(time.Hour)) {
		t.Fatal("Redact of a redacted message reports a change")
	}
	if !again.RedactedAt.Equal(now) {
		t.Fatalf("second Redact moved redacted_at to %v", again.RedactedAt)
	}
}

func TestArchive(t *testing.T) {
	t.Parallel()
	var (
		at      time.Time
		version int64 = 3
	)
	if !domain.Archive(&at, &version, now) {
		t.Fatal("Archive reports no change")
	}
	if !at.Equal(now) || at.Location() != time.UTC || version != 4 {
		t.Fatalf("archived at %v version %d, want %v and 4", at, version, now)
	}
	if domain.Archive(&at, &version, now.Add(time.Hour)) {
		t.Fatal("archiving twice reports a change")
	}
	if !at.Equal(now) || version != 4 {
		t.Fatalf("second Archive changed it: %v %d", at, version)
	}
}
