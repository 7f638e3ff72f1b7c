// Package registercheck checks that the module register, the operation
// register, the OpenAPI document and the SQL of every component agree, so
// that the contracts of spec 01 (only the owner touches its tables) and spec
// 04 (every operation names one action and one resource) are enforced by a
// gate instead of by review.
package registercheck

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"bothy.example.com/architecture/internal/register"
)

// Options names the inputs. Register, Operations and OpenAPI are relative to
// Root (slash-separated), and so is every path in a report, so the output is
// the same on every machine.
type Options struct {
	Root       string
	Register   string
	Operations string
	OpenAPI    string
}

// Violation is one broken rule. File is relative to the repository root;
// Line is 0 when the rule is about a file or directory as a whole.
type Violation struct {
	File    string
	Line    int
	Message string
}

// String renders the one-line form the gate prints: "file:line: message",
// which editors and CI logs turn into links.
func (v Violation) String() string {
	if v.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", v.File, v.Line, v.Message)
	}
	return fmt.Sprintf("%s: %s", v.File, v.Message)
}

// Run performs every check and returns the violations sorted by file, line
// and message. The error is for inputs that cannot be read or parsed (the
// check could not run); broken rules are violations, not errors.
func Run(opts Options) ([]Violation, error) {
	reg, err := register.Load(join(opts.Root, opts.Register))
	if err != nil {
		return nil, fmt.Errorf("module register: %w", err)
	}
	var out []Violation
	ops, err := checkOperations(reg, opts)
	if err != nil {
		return nil, err
	}
	out = append(out, ops...)
	sql, err := checkSQL(reg, opts.Root, opts.Register)
	if err != nil {
		return nil, err
	}
	out = append(out, sql...)
	slices.SortFunc(out, func(a, b Violation) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Message, b.Message))
	})
	return slices.Compact(out), nil
}

// join turns a slash-separated path relative to root into an OS path.
func join(root, rel string) string {
	return filepath.Join(root, filepath.FromSlash(rel))
}
