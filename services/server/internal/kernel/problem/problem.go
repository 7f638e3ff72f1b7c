// Package problem turns errors into RFC 9457 problem responses. It owns the
// one table from error kind to HTTP status and code, so every module reports
// failures with sentinel errors and never chooses a status itself.
package problem

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"

	"bothy.example.com/server/internal/kernel/correlation"
)

// The kinds of failure a client can be told about. Modules return them
// (wrapped with %w, or through New and Validation for a client-safe detail);
// From maps them to a status and code. Any other error is a 500 internal.
var (
	// ErrUnauthenticated means the request carries no valid credentials.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrDevicePending means the token's device still awaits approval.
	ErrDevicePending = errors.New("device pending")
	// ErrForbidden means the actor may not perform the action.
	ErrForbidden = errors.New("forbidden")
	// ErrNotFound means the resource does not exist or is invisible to the actor.
	ErrNotFound = errors.New("not found")
	// ErrMethodNotAllowed means the path exists but not with this method.
	ErrMethodNotAllowed = errors.New("method not allowed")
	// ErrValidation means the request is malformed; Validation names the fields.
	ErrValidation = errors.New("validation failed")
	// ErrConflict means the request clashes with the current state.
	ErrConflict = errors.New("conflict")
	// ErrResyncRequired means a sync client must rebuild its state from a snapshot.
	ErrResyncRequired = errors.New("resync required")
	// ErrPayloadTooLarge means the request body exceeds http.max_body_bytes.
	ErrPayloadTooLarge = errors.New("payload too large")
	// ErrUnsupportedMediaType means the request body's content type is not accepted.
	ErrUnsupportedMediaType = errors.New("unsupported media type")
	// ErrRateLimited means the caller sent too many requests.
	ErrRateLimited = errors.New("rate limited")
	// ErrUnavailable means a dependency (usually the database) is not ready.
	ErrUnavailable = errors.New("unavailable")
)

// TypePrefix starts every problem type URI; the code follows it.
const TypePrefix = "urn:bothy:problem:"

// CodeInternal is the code of every error that is not one of the kinds.
const CodeInternal = "internal"

// InternalDetail is the only detail a 500 ever carries: the real error is
// logged, never sent, so internals cannot leak to clients.
const InternalDetail = "The server could not complete the request. The error was logged under this request id."

const internalTitle = "Internal error"

// Entry is one row of the kind table.
type Entry struct {
	// Kind is the sentinel error.
	Kind error
	// Status is the HTTP status code.
	Status int
	// Code is the machine-readable code, also the suffix of the type URI.
	Code string
	// Title is the short human summary of the kind.
	Title string
	// Detail is sent when the error carries no detail of its own.
	Detail string
}

// table is the one mapping from kind to response. From checks it in order,
// so an error matching two kinds (errors.Join) gets the first.
var table = []Entry{
	{ErrUnauthenticated, http.StatusUnauthorized, "unauthenticated", "Unauthenticated", "The request needs a valid bearer token."},
	{ErrDevicePending, http.StatusForbidden, "device_pending", "Device pending", "This device has not been approved yet."},
	{ErrForbidden, http.StatusForbidden, "forbidden", "Forbidden", "The actor may not perform this action."},
	{ErrNotFound, http.StatusNotFound, "not_found", "Not found", "The resource does not exist."},
	{ErrMethodNotAllowed, http.StatusMethodNotAllowed, "method_not_allowed", "Method not allowed", "The resource does not support this method."},
	{ErrValidation, http.StatusBadRequest, "validation_failed", "Validation failed", "The request is not valid."},
	{ErrConflict, http.StatusConflict, "conflict", "Conflict", "The request conflicts with the current state of the resource."},
	{ErrResyncRequired, http.StatusGone, "resync_required", "Resync required", "The client must rebuild its state before continuing."},
	{ErrPayloadTooLarge, http.StatusRequestEntityTooLarge, "payload_too_large", "Payload too large", "The request body is larger than the server accepts."},
	{ErrUnsupportedMediaType, http.StatusUnsupportedMediaType, "unsupported_media_type", "Unsupported media type", "The request body has a content type the server does not accept."},
	{ErrRateLimited, http.StatusTooManyRequests, "too_many_requests", "Too many requests", "Too many requests. Retry after the time in Retry-After."},
	{ErrUnavailable, http.StatusServiceUnavailable, "unavailable", "Unavailable", "The service is not ready. Retry later."},
}

// Entries returns a copy of the kind table, so tests elsewhere (the OpenAPI
// Problem schema, documentation) can check they list the same codes.
func Entries() []Entry {
	out := make([]Entry, len(table))
	copy(out, table)
	return out
}

// FieldError names one invalid field of a request and why it is invalid.
type FieldError struct {
	// Field is the JSON name (or dotted path) of the field.
	Field string `json:"field"`
	// Message says what is wrong, in terms a client developer can act on.
	Message string `json:"message"`
}

// kindError is an error of a known kind with a client-safe detail.
type kindError struct {
	kind   error
	detail string
	fields []FieldError
}

func (e *kindError) Error() string {
	var b strings.Builder
	b.WriteString(e.kind.Error())
	if e.detail != "" {
		b.WriteString(": ")
		b.WriteString(e.detail)
	}
	for i, f := range e.fields {
		if i == 0 && e.detail == "" {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(f.Field)
		b.WriteString(": ")
		b.WriteString(f.Message)
	}
	return b.String()
}

func (e *kindError) Unwrap() error { return e.kind }

// New returns an error that Is(kind) and carries detail, a sentence the
// client may read: callers must not put internal state (SQL, paths) in it.
// With a kind outside the table the response is a 500 and detail is not sent.
func New(kind error, detail string) error {
	return &kindError{kind: kind, detail: detail}
}

// Validation returns an error that Is(ErrValidation) and lists the invalid
// fields, so a client can point at each of them.
func Validation(fields ...FieldError) error {
	return &kindError{kind: ErrValidation, fields: append([]FieldError(nil), fields...)}
}

// extError adds extension members to the problem of the error it wraps.
type extError struct {
	err error
	ext map[string]any
}

func (e *extError) Error() string { return e.err.Error() }
func (e *extError) Unwrap() error { return e.err }

// WithExtensions returns err with extra members for its problem response
// (resync_required's reason and head_seq, for example). Extensions of an
// outer wrapper win over inner ones with the same name; names of standard
// members are ignored. A nil err stays nil. Extensions are not sent for 500s.
func WithExtensions(err error, ext map[string]any) error {
	if err == nil {
		return nil
	}
	return &extError{err: err, ext: maps.Clone(ext)}
}

// Problem is the body of an error response (RFC 9457). Its JSON has no null:
// empty optional members are omitted, extensions are flattened into the
// object, and errors appears only for validation_failed.
type Problem struct {
	// Type is TypePrefix followed by Code.
	Type string `json:"type"`
	// Title is the kind's short summary.
	Title string `json:"title"`
	// Status is the HTTP status code.
	Status int `json:"status"`
	// Code is the machine-readable kind clients switch on.
	Code string `json:"code"`
	// Detail explains this occurrence, safe to show to the client.
	Detail string `json:"detail"`
	// RequestID is the request's correlation id.
	RequestID string `json:"request_id,omitempty"`
	// Errors lists the invalid fields of a validation_failed problem.
	Errors []FieldError `json:"errors,omitempty"`
	// Extensions are further members, flattened into the JSON object.
	Extensions map[string]any `json:"-"`
}

// From maps err to its problem. It is the one place deciding status and code:
// a kind of the table (found with errors.Is, so wrapping keeps the kind), an
// *http.MaxBytesError (413, from a body cut by httpmw.BodyLimit), or else 500
// internal, whose detail is InternalDetail whatever err says. A
// context.Canceled error is a 500 too (the client is usually gone and will not
// read it); Write logs it at info level rather than error. The request id
// comes from correlation.From(ctx).
func From(ctx context.Context, err error) Problem {
	p := Problem{RequestID: correlation.From(ctx)}
	var e *Entry
	for i := range table {
		if errors.Is(err, table[i].Kind) {
			e = &table[i]
			break
		}
	}
	var mbe *http.MaxBytesError
	if e == nil && errors.As(err, &mbe) {
		p.fill(entryFor(ErrPayloadTooLarge))
		p.Detail = fmt.Sprintf("The request body is larger than %d bytes.", mbe.Limit)
		return p
	}
	if e == nil {
		p.Type = TypePrefix + CodeInternal
		p.Title = internalTitle
		p.Status = http.StatusInternalServerError
		p.Code = CodeInternal
		p.Detail = InternalDetail
		return p
	}
	p.fill(*e)
	var ke *kindError
	if errors.As(err, &ke) && errors.Is(ke.kind, e.Kind) {
		if ke.detail != "" {
			p.Detail = ke.detail
		}
		if len(ke.fields) > 0 {
			p.Errors = append([]FieldError(nil), ke.fields...)
		}
	}
	if errors.Is(e.Kind, ErrValidation) && p.Errors == nil {
		p.Errors = []FieldError{}
	}
	p.Extensions = extensions(err)
	return p
}

func (p *Problem) fill(e Entry) {
	p.Type = TypePrefix + e.Code
	p.Title = e.Title
	p.Status = e.Status
	p.Code = e.Code
	p.Detail = e.Detail
}

func entryFor(kind error) Entry {
	for _, e := range table {
		if errors.Is(e.Kind, kind) {
			return e
		}
	}
	panic(fmt.Sprintf("problem: kind %v missing from the table", kind))
}

// extensions merges the extension maps found along err's chain, outer first.
func extensions(err error) map[string]any {
	var out map[string]any
	for e := err; e != nil; e = errors.Unwrap(e) {
		x, ok := e.(*extError) //nolint:errorlint // the loop walks the chain link by link; errors.As would stop at the first
		if !ok {
			continue
		}
		for k, v := range x.ext {
			if out == nil {
				out = map[string]any{}
			}
			if _, seen := out[k]; !seen {
				out[k] = v
			}
		}
	}
	return out
}
