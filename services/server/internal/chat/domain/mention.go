package domain

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Handle lengths, as the identity module's handle rule has them.
const (
	minHandleLen = 2
	maxHandleLen = 32
)

// handleByte reports whether c may appear in a handle: ASCII letters, digits, _ . and -, as
// the identity module's handle rule (which this mirrors: modules share no internals).
func handleByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}

func alnumByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Mentions returns the handles a text mentions, lower-cased (identity stores handles in lower
// case), without duplicates, in the order they first appear. A mention is @ followed by a
// handle: the longest run of handle characters, less trailing _ . and - (so "@alex." at the
// end of a sentence mentions alex), 2 to 32 characters starting with a letter or digit. The @
// must not follow a letter, digit, _ . - or @ (alex@example.com mentions nobody), and the run
// must not be followed by a letter, digit or @ (so @sam@example.com and @samé mention nobody).
// Code spans are not treated specially.
func Mentions(text string) []string {
	var (
		out  []string
		seen map[string]bool
	)
	for i := 0; i < len(text); i++ {
		if text[i] != '@' || !mentionMayStart(text, i) {
			continue
		}
		end := i + 1
		for end < len(text) && handleByte(text[end]) {
			end++
		}
		if !mentionMayEnd(text, end) {
			i = end - 1
			continue
		}
		handle := strings.TrimRight(text[i+1:end], "_.-")
		i = end - 1
		if len(handle) < minHandleLen || len(handle) > maxHandleLen || !alnumByte(handle[0]) {
			continue
		}
		handle = strings.ToLower(handle)
		if seen[handle] {
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[handle] = true
		out = append(out, handle)
	}
	return out
}

// mentionMayStart reports whether the @ at i starts a mention: it begins the text or follows
// a rune that is neither a letter, a digit nor one of _ . - @.
func mentionMayStart(text string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(text[:i])
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("_.-@", r)
}

// mentionMayEnd reports whether a handle run ending at end may be a mention: the text ends
// there or the next rune is neither a letter, a digit nor @.
func mentionMayEnd(text string, end int) bool {
	if end == len(text) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(text[end:])
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '@'
}
