// Package jsontext holds the JSON text primitives of bothy's hand-written encoders: the
// event envelope (sync's AppendEnvelope, for REST and the gateway alike), the snapshot's body
// and the thread list's page. Those bodies are hot (every catch-up page, every poll), and
// encoding/json spends most of their time in reflection and in the Marshaler calls of every
// UUID and time; one place writes a string and an id, so that every encoder escapes alike
// and as encoding/json does.
package jsontext

import (
	"encoding/hex"
	"unicode/utf8"

	"github.com/google/uuid"
)

const hexDigits = "0123456789abcdef"

// safeSet and htmlSafeSet say which ASCII bytes a JSON string holds as they are, without and
// with HTML escaping: a table lookup per byte, where a run of comparisons took twice as long
// on plain text (a thread list's excerpts).
var safeSet, htmlSafeSet = asciiSafe(false), asciiSafe(true)

// asciiSafe is the table of the ASCII bytes written unescaped: not a control character, a
// quote or a backslash, and with escapeHTML not < > &.
func asciiSafe(escapeHTML bool) (set [utf8.RuneSelf]bool) {
	for b := range set {
		set[b] = b >= 0x20 && b != '"' && b != '\\' && (!escapeHTML || (b != '<' && b != '>' && b != '&'))
	}
	return set
}

// AppendUUID appends u as a quoted canonical lower-case UUID (its MarshalText form)
// without allocating. It fills a fixed array and appends it once: an envelope has up to six
// ids, and appending digit by digit was four tenths of a catch-up page's encoding (make bench).
func AppendUUID(dst []byte, u uuid.UUID) []byte {
	var b [38]byte
	b[0], b[9], b[14], b[19], b[24], b[37] = '"', '-', '-', '-', '-', '"'
	hex.Encode(b[1:9], u[0:4])
	hex.Encode(b[10:14], u[4:6])
	hex.Encode(b[15:19], u[6:8])
	hex.Encode(b[20:24], u[8:10])
	hex.Encode(b[25:37], u[10:16])
	return append(dst, b[:]...)
}

// AppendString appends s as a JSON string byte for byte as encoding/json writes it:
// quote and backslash escaped, \b \f \n \r \t by name, other control characters as \u00XX,
// U+2028 and U+2029 as \u2028 and \u2029 (for JavaScript consumers), invalid UTF-8 as
// \ufffd; with escapeHTML (encoding/json's default) also < > & as \u003c \u003e \u0026. The
// envelope writes without HTML escaping (its payloads pass through as stored), the snapshot
// and the thread list with it (their bodies are what encoding/json wrote before they were
// hand-written).
func AppendString(dst []byte, s string, escapeHTML bool) []byte {
	dst = append(dst, '"')
	safe := &safeSet
	if escapeHTML {
		safe = &htmlSafeSet
	}
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if safe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0x0f])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0x0f])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
