package domain

import (
	"unicode"
	"unicode/utf8"

	"bothy.example.com/server/internal/kernel/problem"
)

// The bounds of a reaction's grammar (ADR 0025). They are part of the format a client
// renders, like the name limits above, not an operational limit: the number of distinct
// reactions a message may hold is the configuration key chat.max_reactions_per_message.
const (
	// MaxShortcodeLen is the most characters of a shortcode's name, between its colons.
	MaxShortcodeLen = 32
	// MaxReactionBytes is the most bytes of a reaction in either form: the longest emoji ZWJ
	// sequences in use (a couple with skin tones, a subdivision flag) take about 35.
	MaxReactionBytes = 64
)

// The code points of the Unicode emoji grammar Reaction accepts (UTS #51).
const (
	zwj            = '\u200D'     // ZERO WIDTH JOINER, between the elements of a sequence
	vs16           = '\uFE0F'     // VARIATION SELECTOR-16, emoji presentation
	keycapMark     = '\u20E3'     // COMBINING ENCLOSING KEYCAP
	blackFlag      = '\U0001F3F4' // the base of a subdivision flag's tag sequence
	cancelTag      = '\U000E007F' // the end of a tag sequence
	firstTag       = '\U000E0020' // the tag characters run from here ...
	lastTag        = '\U000E007E' // ... to here
	firstModifier  = '\U0001F3FB' // the skin tone modifiers run from here ...
	lastModifier   = '\U0001F3FF' // ... to here
	firstRegional  = '\U0001F1E6' // the regional indicators (flags) run from here ...
	lastRegional   = '\U0001F1FF' // ... to here
	maxZWJElements = 10           // a sequence's elements; MaxReactionBytes bounds them first
)

// pictographic is the Extended_Pictographic property of Unicode 15.0 (emoji-data.txt), its
// ranges merged: the code points that may stand as an emoji or begin one.
var pictographic = &unicode.RangeTable{
	R16: []unicode.Range16{
		{0x00A9, 0x00A9, 1}, {0x00AE, 0x00AE, 1}, {0x203C, 0x203C, 1}, {0x2049, 0x2049, 1},
		{0x2122, 0x2122, 1}, {0x2139, 0x2139, 1}, {0x2194, 0x2199, 1}, {0x21A9, 0x21AA, 1},
		{0x231A, 0x231B, 1}, {0x2328, 0x2328, 1}, {0x2388, 0x2388, 1}, {0x23CF, 0x23CF, 1},
		{0x23E9, 0x23F3, 1}, {0x23F8, 0x23FA, 1}, {0x24C2, 0x24C2, 1}, {0x25AA, 0x25AB, 1},
		{0x25B6, 0x25B6, 1}, {0x25C0, 0x25C0, 1}, {0x25FB, 0x25FE, 1}, {0x2600, 0x2605, 1},
		{0x2607, 0x2612, 1}, {0x2614, 0x2685, 1}, {0x2690, 0x2705, 1}, {0x2708, 0x2712, 1},
		{0x2714, 0x2714, 1}, {0x2716, 0x2716, 1}, {0x271D, 0x271D, 1}, {0x2721, 0x2721, 1},
		{0x2728, 0x2728, 1}, {0x2733, 0x2734, 1}, {0x2744, 0x2744, 1}, {0x2747, 0x2747, 1},
		{0x274C, 0x274C, 1}, {0x274E, 0x274E, 1}, {0x2753, 0x2755, 1}, {0x2757, 0x2757, 1},
		{0x2763, 0x2767, 1}, {0x2795, 0x2797, 1}, {0x27A1, 0x27A1, 1}, {0x27B0, 0x27B0, 1},
		{0x27BF, 0x27BF, 1}, {0x2934, 0x2935, 1}, {0x2B05, 0x2B07, 1}, {0x2B1B, 0x2B1C, 1},
		{0x2B50, 0x2B50, 1}, {0x2B55, 0x2B55, 1}, {0x3030, 0x3030, 1}, {0x303D, 0x303D, 1},
		{0x3297, 0x3297, 1}, {0x3299, 0x3299, 1},
	},
	R32: []unicode.Range32{
		{0x1F000, 0x1F0FF, 1}, {0x1F10D, 0x1F10F, 1}, {0x1F12F, 0x1F12F, 1}, {0x1F16C, 0x1F171, 1},
		{0x1F17E, 0x1F17F, 1}, {0x1F18E, 0x1F18E, 1}, {0x1F191, 0x1F19A, 1}, {0x1F1AD, 0x1F1E5, 1},
		{0x1F201, 0x1F20F, 1}, {0x1F21A, 0x1F21A, 1}, {0x1F22F, 0x1F22F, 1}, {0x1F232, 0x1F23A, 1},
		{0x1F23C, 0x1F23F, 1}, {0x1F249, 0x1F3FA, 1}, {0x1F400, 0x1F53D, 1}, {0x1F546, 0x1F64F, 1},
		{0x1F680, 0x1F6FF, 1}, {0x1F774, 0x1F77F, 1}, {0x1F7D5, 0x1F7FF, 1}, {0x1F80C, 0x1F80F, 1},
		{0x1F848, 0x1F84F, 1}, {0x1F85A, 0x1F85F, 1}, {0x1F888, 0x1F88F, 1}, {0x1F8AE, 0x1F8FF, 1},
		{0x1F90C, 0x1F93A, 1}, {0x1F93C, 0x1F945, 1}, {0x1F947, 0x1FAFF, 1}, {0x1FC00, 0x1FFFD, 1},
	},
}

// Reaction validates a reaction (ADR 0025): either a shortcode, a colon, 1 to MaxShortcodeLen
// of a-z 0-9 _ + -, and a colon (":thumbs_up:", ":+1:"), or exactly one Unicode emoji: a
// pictograph (Extended_Pictographic) with an optional VS16 or skin tone, a ZWJ sequence of
// such elements, a flag of two regional indicators, a subdivision flag (the black flag, tags,
// the cancel tag) or a keycap ([0-9#*], an optional VS16, the keycap mark). Either form has
// at most MaxReactionBytes. Anything else, a second emoji, text beside one, outer space, VS15,
// is a validation error naming reaction. The reaction is stored as sent: no form is mapped to
// another.
func Reaction(r string) error {
	if r == "" || len(r) > MaxReactionBytes || !utf8.ValidString(r) {
		return invalidReaction()
	}
	if r[0] == ':' {
		if !shortcode(r) {
			return invalidReaction()
		}
		return nil
	}
	if !emoji([]rune(r)) {
		return invalidReaction()
	}
	return nil
}

func invalidReaction() error {
	return problem.Validation(problem.FieldError{
		Field:   "reaction",
		Message: "must be a shortcode such as :thumbs_up: (a-z 0-9 _ + -) or one Unicode emoji",
	})
}

// shortcode reports whether r is ":name:" with a name of 1 to MaxShortcodeLen of a-z 0-9 _ + -.
func shortcode(r string) bool {
	if len(r) < 3 || r[0] != ':' || r[len(r)-1] != ':' {
		return false
	}
	name := r[1 : len(r)-1]
	if len(name) > MaxShortcodeLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '+' && c != '-' {
			return false
		}
	}
	return true
}

// emoji reports whether rs is exactly one emoji of the forms Reaction names.
func emoji(rs []rune) bool {
	switch {
	case keycapBase(rs[0]):
		return keycap(rs)
	case regional(rs[0]):
		return len(rs) == 2 && regional(rs[1])
	case rs[0] == blackFlag && len(rs) > 1 && tag(rs[1]):
		return tagFlag(rs)
	}
	elements := 0
	for {
		n := element(rs)
		if n == 0 {
			return false
		}
		elements++
		rs = rs[n:]
		if len(rs) == 0 {
			return elements <= maxZWJElements
		}
		if rs[0] != zwj {
			return false
		}
		rs = rs[1:]
	}
}

// element returns the length of the ZWJ sequence element at the start of rs (a pictograph,
// then an optional VS16 or skin tone), 0 when rs does not start with one.
func element(rs []rune) int {
	if len(rs) == 0 || !unicode.Is(pictographic, rs[0]) {
		return 0
	}
	if len(rs) > 1 && (rs[1] == vs16 || modifier(rs[1])) {
		return 2
	}
	return 1
}

func keycap(rs []rune) bool {
	switch len(rs) {
	case 2:
		return rs[1] == keycapMark
	case 3:
		return rs[1] == vs16 && rs[2] == keycapMark
	}
	return false
}

func tagFlag(rs []rune) bool {
	if len(rs) < 3 || rs[len(rs)-1] != cancelTag {
		return false
	}
	for _, c := range rs[1 : len(rs)-1] {
		if !tag(c) {
			return false
		}
	}
	return true
}

func keycapBase(c rune) bool { return c >= '0' && c <= '9' || c == '#' || c == '*' }
func regional(c rune) bool   { return c >= firstRegional && c <= lastRegional }
func modifier(c rune) bool   { return c >= firstModifier && c <= lastModifier }
func tag(c rune) bool        { return c >= firstTag && c <= lastTag }
