package domain_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"bothy.example.com/server/internal/chat/domain"
	"bothy.example.com/server/internal/kernel/problem"
)

func TestReaction(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", domain.MaxShortcodeLen)
	for _, c := range []struct {
		name, in string
		ok       bool
	}{
		// Shortcodes.
		{"shortcode", ":thumbs_up:", true},
		{"shortcode with plus", ":+1:", true},
		{"shortcode with minus and digits", ":party-parrot-2:", true},
		{"shortcode of one character", ":x:", true},
		{"longest shortcode", ":" + long + ":", true},
		{"shortcode one too long", ":" + long + "a:", false},
		{"empty shortcode", "::", false},
		{"upper case", ":Thumbs_Up:", false},
		{"space inside", ":thumbs up:", false},
		{"no closing colon", ":thumbs_up", false},
		{"no opening colon", "thumbs_up:", false},
		{"colon inside", ":a:b:", false},
		{"dot inside", ":a.b:", false},
		{"non-ASCII letter", ":caf\u00e9:", false},
		{"bare word", "thumbs_up", false},
		{"percent", ":100%:", false},
		{"slash", ":a/b:", false},

		// Unicode emoji.
		{"thumbs up", "\U0001F44D", true},
		{"thumbs up, skin tone", "\U0001F44D\U0001F3FD", true},
		{"red heart with VS16", "\u2764\uFE0F", true},
		{"red heart without VS16", "\u2764", true},
		{"party popper", "\U0001F389", true},
		{"newest plane", "\U0001FAE8", true},
		{"family ZWJ sequence", "\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466", true},
		{"runner, tone, ZWJ, female sign", "\U0001F3C3\U0001F3FD\u200D\u2640\uFE0F", true},
		{"eye in speech bubble", "\U0001F441\uFE0F\u200D\U0001F5E8\uFE0F", true},
		{"flag", "\U0001F1F3\U0001F1F4", true},
		{"subdivision flag", "\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F", true},
		{"keycap", "1\uFE0F\u20E3", true},
		{"keycap without VS16", "#\u20E3", true},
		{"copyright with VS16", "\u00A9\uFE0F", true},

		{"empty", "", false},
		{"two emoji", "\U0001F44D\U0001F44D", false},
		{"emoji and text", "\U0001F44Dok", false},
		{"text", "ok", false},
		{"digit alone", "1", false},
		{"letter", "a", false},
		{"lone regional indicator", "\U0001F1F3", false},
		{"three regional indicators", "\U0001F1F3\U0001F1F4\U0001F1F3", false},
		{"lone skin tone", "\U0001F3FD", false},
		{"two skin tones", "\U0001F44D\U0001F3FD\U0001F3FD", false},
		{"lone VS16", "\uFE0F", false},
		{"VS15 text presentation", "\u2764\uFE0E", false},
		{"leading ZWJ", "\u200D\U0001F44D", false},
		{"trailing ZWJ", "\U0001F44D\u200D", false},
		{"double ZWJ", "\U0001F468\u200D\u200D\U0001F469", false},
		{"ZWJ to a letter", "\U0001F468\u200Da", false},
		{"tag without cancel", "\U0001F3F4\U000E0067\U000E0062", false},
		{"cancel tag alone", "\U0001F3F4\U000E007F", false},
		{"keycap of a letter", "a\uFE0F\u20E3", false},
		{"combining mark", "\U0001F44D\u0301", false},
		{"space around", " \U0001F44D", false},
		{"control", "\U0001F44D\n", false},
		{"invalid UTF-8", "\xf0\x9f\x91", false},
		{"CJK ideograph", "\u4E2D", false},
		{"too many bytes", strings.Repeat("\U0001F468\u200D", 20) + "\U0001F468", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			err := domain.Reaction(c.in)
			if c.ok {
				if err != nil {
					t.Fatalf("Reaction(%q) = %v, want nil", c.in, err)
				}
				return
			}
			if !errors.Is(err, problem.ErrValidation) {
				t.Fatalf("Reaction(%q) = %v, want a validation error", c.in, err)
			}
			if got := fields(t, err); !slices.Equal(got, []string{"reaction"}) {
				t.Fatalf("Reaction(%q) names %v, want [reaction]", c.in, got)
			}
		})
	}
}

func TestReactionBoundsFitTheLimit(t *testing.T) {
	t.Parallel()
	// The longest shortcode fits MaxReactionBytes, so no valid shortcode is refused by length.
	if n := len(":" + strings.Repeat("a", domain.MaxShortcodeLen) + ":"); n > domain.MaxReactionBytes {
		t.Fatalf("longest shortcode has %d bytes, above MaxReactionBytes %d", n, domain.MaxReactionBytes)
	}
}
