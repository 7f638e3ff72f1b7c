// Package domain holds the instance module's pure rules: how a feature flag's value for an
// actor is decided, and what a valid flag key and description are.
package domain

import (
	"regexp"
	"unicode/utf8"

	"bothy.example.com/server/internal/kernel/problem"
)

// MaxKeyLen bounds a flag key: keys are identifiers in code and configuration, not prose.
const MaxKeyLen = 64

// MaxDescriptionLen bounds a flag description, in characters: a sentence or two for operators.
const MaxDescriptionLen = 500

// keyRe is the flag key syntax: a lower-case letter, then lower-case letters, digits, '.', '_'
// and '-', so keys are safe in URLs, shells, logs and JSON without quoting questions.
var keyRe = regexp.MustCompile(`^[a-z][a-z0-9._-]*$`)

// Value decides a flag's value for one actor: the override for the actor's principal wins,
// then the override for its principal kind, then the flag's default. A nil override is
// absent.
func Value(defaultEnabled bool, kindOverride, principalOverride *bool) bool {
	switch {
	case principalOverride != nil:
		return *principalOverride
	case kindOverride != nil:
		return *kindOverride
	}
	return defaultEnabled
}

// KeyProblem returns what is wrong with a flag key, or "" when it is valid.
func KeyProblem(key string) string {
	switch {
	case key == "":
		return "must not be empty"
	case len(key) > MaxKeyLen:
		return "must be at most 64 characters"
	case !keyRe.MatchString(key):
		return "must start with a-z and contain only a-z, 0-9, '.', '_' and '-'"
	}
	return ""
}

// ValidateKey returns a problem.ErrValidation naming the field key when key is not a valid
// flag key, else nil.
func ValidateKey(key string) error {
	if msg := KeyProblem(key); msg != "" {
		return problem.Validation(problem.FieldError{Field: "key", Message: msg})
	}
	return nil
}

// ValidateDefinition checks a flag definition and returns a problem.ErrValidation naming every
// invalid field (key, description), else nil. The description may be empty.
func ValidateDefinition(key, description string) error {
	var fields []problem.FieldError
	if msg := KeyProblem(key); msg != "" {
		fields = append(fields, problem.FieldError{Field: "key", Message: msg})
	}
	switch {
	case !utf8.ValidString(description):
		fields = append(fields, problem.FieldError{Field: "description", Message: "must be valid UTF-8"})
	case utf8.RuneCountInString(description) > MaxDescriptionLen:
		fields = append(fields, problem.FieldError{Field: "description", Message: "must be at most 500 characters"})
	}
	if len(fields) > 0 {
		return problem.Validation(fields...)
	}
	return nil
}
