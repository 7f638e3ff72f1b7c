package domain

import (
	"net/mail"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/identity"
	"bothy.example.com/server/internal/kernel/actor"
	"bothy.example.com/server/internal/kernel/problem"
)

// Limits of the text fields of principals and devices.
const (
	// MaxDisplayNameLen is the most characters (runes) of a display name or device name.
	MaxDisplayNameLen = 100
	// MaxEmailLen is the most bytes of an email address (RFC 5321's path limit less the
	// angle brackets).
	MaxEmailLen = 254
)

// handlePattern is what a handle may look like before it is lower-cased: ASCII only, so that
// case folding cannot turn a look-alike (the Kelvin sign, a dotted capital I) into another
// principal's handle; starting and ending with a letter or digit, so that "@alex." at the end
// of a sentence mentions alex.
var handlePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,30}[A-Za-z0-9]$`)

// Messages of the validation errors, shared by every field they apply to.
const (
	msgRequired     = "is required"
	msgTooLong      = "must be at most 100 characters"
	msgControl      = "must not contain control characters"
	msgHandle       = "must be 2 to 32 characters of letters, digits, _ . and -, starting and ending with a letter or digit"
	msgEmail        = "must be a plain email address such as alex@example.com"
	msgNoScopes     = "must name at least one scope"
	msgUnknownScope = "is not a scope (events:subscribe, messages:read, messages:write, agents:read)"
	msgDeviceStatus = "must be pending or approved"
)

// NormalizeHandle returns the stored form of a handle and whether it is valid. Handles are
// compared case-insensitively by storing them in lower case.
func NormalizeHandle(handle string) (string, bool) {
	if !handlePattern.MatchString(handle) {
		return "", false
	}
	return strings.ToLower(handle), true
}

// NewPerson validates in and returns the person it describes, with the given id and creation
// time. Invalid fields give one problem.Validation error naming each of them.
func NewPerson(id uuid.UUID, in identity.PersonInput, now time.Time) (identity.Principal, error) {
	var v validator
	name := v.displayName("display_name", in.DisplayName)
	handle := v.handle("handle", in.Handle)
	email := v.email("email", in.Email)
	if err := v.err(); err != nil {
		return identity.Principal{}, err
	}
	return identity.Principal{
		ID: id, Kind: actor.KindPerson, DisplayName: name, Handle: handle, Email: email, CreatedAt: now.UTC(),
	}, nil
}

// NewApp validates in and returns the app it describes. Its scopes are sorted and without
// duplicates.
func NewApp(id uuid.UUID, in identity.AppInput, now time.Time) (identity.Principal, error) {
	var v validator
	name := v.displayName("display_name", in.DisplayName)
	handle := v.handle("handle", in.Handle)
	scopes := v.scopes("scopes", in.Scopes)
	if err := v.err(); err != nil {
		return identity.Principal{}, err
	}
	return identity.Principal{
		ID: id, Kind: actor.KindApp, DisplayName: name, Handle: handle, Scopes: scopes, CreatedAt: now.UTC(),
	}, nil
}

// NewAgent validates in and returns the agent principal it describes.
func NewAgent(id uuid.UUID, in identity.AgentInput, now time.Time) (identity.Principal, error) {
	var v validator
	name := v.displayName("display_name", in.DisplayName)
	handle := v.handle("handle", in.Handle)
	if err := v.err(); err != nil {
		return identity.Principal{}, err
	}
	return identity.Principal{
		ID: id, Kind: actor.KindAgent, DisplayName: name, Handle: handle, CreatedAt: now.UTC(),
	}, nil
}

// validator collects the invalid fields of one input.
type validator struct {
	fields []problem.FieldError
}

func (v *validator) fail(field, msg string) {
	v.fields = append(v.fields, problem.FieldError{Field: field, Message: msg})
}

func (v *validator) err() error {
	if len(v.fields) == 0 {
		return nil
	}
	return problem.Validation(v.fields...)
}

// displayName checks a display or device name and returns it with outer space trimmed.
func (v *validator) displayName(field, s string) string {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		v.fail(field, msgRequired)
	case !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl):
		v.fail(field, msgControl)
	case utf8.RuneCountInString(s) > MaxDisplayNameLen:
		v.fail(field, msgTooLong)
	}
	return s
}

func (v *validator) handle(field, s string) string {
	if s == "" {
		v.fail(field, msgRequired)
		return ""
	}
	h, ok := NormalizeHandle(s)
	if !ok {
		v.fail(field, msgHandle)
	}
	return h
}

// email accepts a bare address only: what net/mail parses as an address with no display name,
// comment or angle brackets, so the stored text is exactly the address.
func (v *validator) email(field, s string) string {
	if s == "" {
		v.fail(field, msgRequired)
		return ""
	}
	addr, err := mail.ParseAddress(s)
	if err != nil || addr.Name != "" || addr.Address != s || len(s) > MaxEmailLen {
		v.fail(field, msgEmail)
		return ""
	}
	return s
}

func (v *validator) scopes(field string, in []string) []string {
	if len(in) == 0 {
		v.fail(field, msgNoScopes)
		return nil
	}
	ok := true
	for i, s := range in {
		if !identity.ValidScope(s) {
			v.fail(field+"["+strconv.Itoa(i)+"]", msgUnknownScope)
			ok = false
		}
	}
	if !ok {
		return nil
	}
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}
