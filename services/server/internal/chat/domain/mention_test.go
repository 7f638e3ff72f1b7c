package domain_test

import (
	"slices"
	"strings"
	"testing"

	"bothy.example.com/server/internal/chat/domain"
)

func TestMentions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{name: "none", in: "no mentions here", want: nil},
		{name: "one", in: "@sam", want: []string{"sam"}},
		{name: "in a sentence", in: "Thanks @sam, and @robin!", want: []string{"sam", "robin"}},
		{name: "lower-cased", in: "hi @Alex", want: []string{"alex"}},
		{name: "deduplicated case-insensitively", in: "@sam @Sam @SAM", want: []string{"sam"}},
		{name: "order of first appearance", in: "@robin @alex @robin", want: []string{"robin", "alex"}},
		{name: "sentence end dot", in: "ask @alex.", want: []string{"alex"}},
		{name: "trailing punctuation run", in: "ask @alex_-. now", want: []string{"alex"}},
		{name: "inner punctuation kept", in: "@build-bot and @sam.r_2", want: []string{"build-bot", "sam.r_2"}},
		{name: "in parentheses", in: "(@sam)", want: []string{"sam"}},
		{name: "after newline", in: "line\n@robin", want: []string{"robin"}},
		{name: "in a code span still counts", in: "`@sam`", want: []string{"sam"}},
		{name: "email is no mention", in: "mail alex@example.com", want: nil},
		{name: "after a letter", in: "x@sam", want: nil},
		{name: "after a non-ASCII letter", in: "é@sam", want: nil},
		{name: "after a dot", in: ".@sam", want: nil},
		{name: "double at", in: "@@sam", want: nil},
		{name: "followed by at", in: "@sam@example.com", want: nil},
		{name: "lone at", in: "@ sam", want: nil},
		{name: "at the end", in: "sam@", want: nil},
		{name: "too short", in: "@a", want: nil},
		{name: "longest", in: "@" + strings.Repeat("r", 32), want: []string{strings.Repeat("r", 32)}},
		{name: "too long", in: "@" + strings.Repeat("r", 33), want: nil},
		{name: "starts with punctuation", in: "@-sam", want: nil},
		{name: "a letter after the handle", in: "@samé", want: nil},
		{name: "a symbol after the handle ends it", in: "@sam’s", want: []string{"sam"}},
		{name: "only punctuation after the first", in: "@a.", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := domain.Mentions(tt.in); !slices.Equal(got, tt.want) {
				t.Fatalf("Mentions(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
