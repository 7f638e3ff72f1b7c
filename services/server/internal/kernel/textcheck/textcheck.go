// Package textcheck finds text a request must not carry: the NUL character,
// which PostgreSQL text cannot hold (a write fails with a 500), and text that
// is not valid UTF-8, which Go's decoders silently turn into U+FFFD (raw
// invalid bytes, overlong forms, encoded surrogates, and in JSON a lone
// surrogate escape such as \ud800). It works on the raw bytes because the
// decoded values no longer show what arrived: encoding/json replaces both
// invalid bytes and lone surrogate escapes before a handler sees the string.
//
// The checks are allocation-free on valid input, so the request validation
// (internal/wire, ADR 0022) runs them on every body and parameter.
package textcheck

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The reasons a text is refused, worded for a problem's errors[].message.
const (
	// MsgNUL is the message for a NUL character, raw or escaped (\u0000).
	MsgNUL = "must not contain the NUL character (U+0000)"
	// MsgInvalidUTF8 is the message for bytes that are not valid UTF-8
	// (invalid bytes, overlong forms, encoded surrogates).
	MsgInvalidUTF8 = "must be valid UTF-8"
	// MsgLoneSurrogate is the message for a \ud800 to \udfff escape that is
	// not half of a surrogate pair.
	MsgLoneSurrogate = "must not contain a lone surrogate escape (\\ud800 to \\udfff)"
	// MsgNameNUL, MsgNameInvalidUTF8 and MsgNameLoneSurrogate are the same
	// faults in a member name, reported on the object that holds the member
	// (the name itself cannot be echoed).
	MsgNameNUL           = "has a member name containing the NUL character (U+0000)"
	MsgNameInvalidUTF8   = "has a member name that is not valid UTF-8"
	MsgNameLoneSurrogate = "has a member name containing a lone surrogate escape (\\ud800 to \\udfff)"
)

// String returns the message for the first fault of s, or "" when s is valid
// text: valid UTF-8 without NUL.
func String(s string) string {
	for i := 0; i < len(s); {
		b := s[i]
		if b == 0 {
			return MsgNUL
		}
		if b < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return MsgInvalidUTF8
		}
		i += size
	}
	return ""
}

// Fault is the first invalid text of a JSON document: Field is the path of
// the member or element that holds it (dotted member names, [i] for array
// elements, "body" for the document itself), Message what is wrong.
type Fault struct {
	// Field names where the text is, as a problem's errors[].field.
	Field string
	// Message says what is wrong, as a problem's errors[].message.
	Message string
}

// maxDepth bounds the nesting the scanner follows; deeper documents are left
// to the JSON decoder, which refuses them (encoding/json stops at 10000).
const maxDepth = 10000

// JSON scans a raw JSON document for invalid text in any string, member names
// included, and returns the first fault, or ok false when there is none.
// Syntax errors are not its business: it stops at the first one and reports
// no fault, leaving the document to the JSON decoder, which refuses it.
func JSON(doc []byte) (f Fault, ok bool) {
	s := scanner{doc: doc}
	s.value(0)
	if s.msg == "" {
		return Fault{}, false
	}
	// Valid input is the common case and pays for no path; a fault is
	// scanned again, this time keeping the path to it.
	t := scanner{doc: doc, track: true}
	t.value(0)
	return Fault{Field: t.field(), Message: t.msg}, true
}

// step is one level of the path to the current value: a member of an object
// (name holds its raw, still escaped bytes) or an element of an array.
type step struct {
	name  []byte
	index int
	array bool
}

type scanner struct {
	doc  []byte
	pos  int
	path []step
	// track keeps path up to date (the second scan of a faulty document).
	track bool
	// msg is the fault found, "" while none; stop is set by a fault or a
	// syntax error and ends the scan.
	msg  string
	stop bool
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.doc) {
		switch s.doc[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value scans one JSON value at s.pos.
func (s *scanner) value(depth int) {
	s.skipSpace()
	if s.pos >= len(s.doc) || depth > maxDepth {
		s.stop = true
		return
	}
	switch s.doc[s.pos] {
	case '{':
		s.object(depth)
	case '[':
		s.array(depth)
	case '"':
		if msg := s.str(); msg != "" {
			s.fail(msg)
		}
	default:
		// A number or a literal: skip to the next delimiter.
		for s.pos < len(s.doc) {
			switch s.doc[s.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return
			}
			s.pos++
		}
	}
}

func (s *scanner) object(depth int) {
	s.pos++ // '{'
	s.skipSpace()
	if s.pos < len(s.doc) && s.doc[s.pos] == '}' {
		s.pos++
		return
	}
	for !s.stop {
		s.skipSpace()
		if s.pos >= len(s.doc) || s.doc[s.pos] != '"' {
			s.stop = true
			return
		}
		start := s.pos + 1
		if msg := s.str(); msg != "" {
			s.fail(nameMessage(msg))
			return
		}
		if s.stop {
			return
		}
		name := s.doc[start : s.pos-1]
		s.skipSpace()
		if s.pos >= len(s.doc) || s.doc[s.pos] != ':' {
			s.stop = true
			return
		}
		s.pos++
		s.push(step{name: name})
		s.value(depth + 1)
		if s.stop {
			return
		}
		s.pop()
		if !s.next('}') {
			return
		}
	}
}

func (s *scanner) array(depth int) {
	s.pos++ // '['
	s.skipSpace()
	if s.pos < len(s.doc) && s.doc[s.pos] == ']' {
		s.pos++
		return
	}
	for i := 0; !s.stop; i++ {
		s.push(step{index: i, array: true})
		s.value(depth + 1)
		if s.stop {
			return
		}
		s.pop()
		if !s.next(']') {
			return
		}
	}
}

func (s *scanner) push(st step) {
	if s.track {
		s.path = append(s.path, st)
	}
}

func (s *scanner) pop() {
	if s.track {
		s.path = s.path[:len(s.path)-1]
	}
}

// next reads the separator after a member or element: true after a comma,
// false after closing (or at a syntax error, which sets stop).
func (s *scanner) next(closing byte) bool {
	s.skipSpace()
	if s.pos < len(s.doc) {
		switch s.doc[s.pos] {
		case ',':
			s.pos++
			return true
		case closing:
			s.pos++
			return false
		}
	}
	s.stop = true
	return false
}

// str scans the string starting at the quote at s.pos and leaves s.pos after
// its closing quote. It returns the message of its first fault, or "" (with
// stop set at a syntax error).
func (s *scanner) str() string {
	s.pos++ // opening quote
	for s.pos < len(s.doc) {
		b := s.doc[s.pos]
		switch {
		case b == '"':
			s.pos++
			return ""
		case b == 0:
			return MsgNUL
		case b == '\\':
			if msg := s.escape(); msg != "" || s.stop {
				return msg
			}
		case b < utf8.RuneSelf:
			s.pos++
		default:
			r, size := utf8.DecodeRune(s.doc[s.pos:])
			if r == utf8.RuneError && size == 1 {
				return MsgInvalidUTF8
			}
			s.pos += size
		}
	}
	s.stop = true
	return ""
}

// escape scans the escape sequence at s.pos (its backslash).
func (s *scanner) escape() string {
	if s.pos+1 >= len(s.doc) {
		s.stop = true
		return ""
	}
	if s.doc[s.pos+1] != 'u' {
		s.pos += 2
		return ""
	}
	r, ok := s.hex4(s.pos + 2)
	if !ok {
		s.stop = true
		return ""
	}
	s.pos += 6
	switch {
	case r == 0:
		return MsgNUL
	case r >= 0xdc00 && r <= 0xdfff:
		return MsgLoneSurrogate
	case r >= 0xd800 && r <= 0xdbff:
		// A high surrogate must be followed by an escaped low one.
		if s.pos+1 < len(s.doc) && s.doc[s.pos] == '\\' && s.doc[s.pos+1] == 'u' {
			if low, ok := s.hex4(s.pos + 2); ok && low >= 0xdc00 && low <= 0xdfff {
				s.pos += 6
				return ""
			}
		}
		return MsgLoneSurrogate
	}
	return ""
}

// hex4 reads four hex digits at i.
func (s *scanner) hex4(i int) (rune, bool) {
	if i+4 > len(s.doc) {
		return 0, false
	}
	var r rune
	for _, c := range s.doc[i : i+4] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

func (s *scanner) fail(msg string) {
	s.msg = msg
	s.stop = true
}

// nameMessage turns a string fault into the fault of a member name.
func nameMessage(msg string) string {
	switch msg {
	case MsgNUL:
		return MsgNameNUL
	case MsgInvalidUTF8:
		return MsgNameInvalidUTF8
	}
	return MsgNameLoneSurrogate
}

// field writes the path of the fault: member names joined with dots, array
// indexes as [i], "" for an empty name, "body" for the document itself. Names were scanned before
// their values, so they are valid text; their escapes are decoded.
func (s *scanner) field() string {
	if len(s.path) == 0 {
		return "body"
	}
	var b strings.Builder
	for _, st := range s.path {
		if st.array {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(st.index))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		name := unescape(st.name)
		if name == "" {
			name = `""`
		}
		b.WriteString(name)
	}
	return b.String()
}

// unescape decodes the escapes of a scanned member name.
func unescape(raw []byte) string {
	if !strings.ContainsRune(string(raw), '\\') {
		return string(raw)
	}
	if s, err := strconv.Unquote(`"` + string(raw) + `"`); err == nil {
		return s
	}
	return string(raw)
}
