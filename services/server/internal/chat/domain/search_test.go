package domain_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/chat"
	"bothy.example.com/server/internal/chat/domain"
)

func TestSearchCursorRoundTrips(t *testing.T) {
	t.Parallel()
	for _, p := range []domain.SearchPosition{
		{Rank: 0, ID: id},
		{Rank: 0.0607927, ID: space},
		{Rank: math.SmallestNonzeroFloat32, ID: uuid.Max},
		{Rank: math.MaxFloat32, ID: uuid.Nil},
	} {
		c := domain.EncodeSearchCursor(p)
		got, err := domain.DecodeSearchCursor(c)
		if err != nil || got != p {
			t.Errorf("DecodeSearchCursor(EncodeSearchCursor(%+v)) = %+v, %v", p, got, err)
		}
		if strings.ContainsAny(c, "+/=") {
			t.Errorf("cursor %q is not base64url without padding", c)
		}
	}
}

func TestSearchCursorRefusesWhatItDidNotMake(t *testing.T) {
	t.Parallel()
	nan := domain.EncodeSearchCursor(domain.SearchPosition{Rank: float32(math.NaN()), ID: id})
	negative := domain.EncodeSearchCursor(domain.SearchPosition{Rank: -1, ID: id})
	infinite := domain.EncodeSearchCursor(domain.SearchPosition{Rank: float32(math.Inf(1)), ID: id})
	for _, c := range []string{"", "not a cursor", "AAAA", nan, negative, infinite, domain.EncodeSearchCursor(domain.SearchPosition{ID: id}) + "AA"} {
		if _, err := domain.DecodeSearchCursor(c); !slices.Equal(fields(t, err), []string{"cursor"}) {
			t.Errorf("DecodeSearchCursor(%q): want a validation error naming cursor", c)
		}
	}
}

func TestSearchText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		invalid        bool
	}{
		{"trimmed", "  jam  ", "jam", false},
		{"at the limit in characters", "ééééé", "ééééé", false},
		{"empty", "", "", true},
		{"blank", " \t ", "", true},
		{"too long", "printers", "", true},
		{"control character", "pr\x01", "", true},
		{"invalid UTF-8", "pr\xff", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.SearchText(tt.in, 5)
			if tt.invalid {
				if !slices.Equal(fields(t, err), []string{"q"}) {
					t.Fatalf("SearchText(%q) = %q, %v; want a validation error naming q", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("SearchText(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestSearchWindow(t *testing.T) {
	t.Parallel()
	later := now.Add(time.Minute)
	for _, ok := range [][2]time.Time{{}, {later, {}}, {{}, later}, {later, now}} {
		if err := domain.SearchWindow(ok[0], ok[1]); err != nil {
			t.Errorf("SearchWindow(%v, %v) = %v", ok[0], ok[1], err)
		}
	}
	for _, bad := range [][2]time.Time{{now, now}, {now, later}} {
		if err := domain.SearchWindow(bad[0], bad[1]); !slices.Equal(fields(t, err), []string{"before"}) {
			t.Errorf("SearchWindow(%v, %v): want a validation error naming before", bad[0], bad[1])
		}
	}
}

func TestExcerpt(t *testing.T) {
	t.Parallel()
	s, e := domain.MatchStart, domain.MatchStop
	seg := func(text string, match bool) chat.ExcerptSegment {
		return chat.ExcerptSegment{Text: text, Match: match}
	}
	tests := []struct {
		name, headline string
		want           []chat.ExcerptSegment
	}{
		{"empty", "", []chat.ExcerptSegment{}},
		{"no match", "plain text", []chat.ExcerptSegment{seg("plain text", false)}},
		{"one match", "the " + s + "printer" + e + " is jammed", []chat.ExcerptSegment{seg("the ", false), seg("printer", true), seg(" is jammed", false)}},
		{"at both ends", s + "printer" + e + " and " + s + "toner" + e, []chat.ExcerptSegment{seg("printer", true), seg(" and ", false), seg("toner", true)}},
		{"neighbours merged", s + "floor" + e + s + "2" + e, []chat.ExcerptSegment{seg("floor2", true)}},
		{"markup kept as text", "<b>" + s + "x" + e + "</b> & co", []chat.ExcerptSegment{seg("<b>", false), seg("x", true), seg("</b> & co", false)}},
		{"unclosed", "a " + s + "b", []chat.ExcerptSegment{seg("a ", false), seg("b", true)}},
		{"stray stop", "a" + e + "b", []chat.ExcerptSegment{seg("ab", false)}},
		{"empty match dropped", "a" + s + e + "b", []chat.ExcerptSegment{seg("ab", false)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := domain.Excerpt(tt.headline)
			if got == nil || !slices.Equal(got, tt.want) {
				t.Fatalf("Excerpt(%q) = %#v, want %#v", tt.headline, got, tt.want)
			}
		})
	}
}
