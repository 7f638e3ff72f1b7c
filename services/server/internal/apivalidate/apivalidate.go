// Package apivalidate is the one place a request is checked against api/openapi.yaml before an
// operation runs (ADR 0022, spec 05 "Validation"): the body's media type, its text, its
// schema, and the text and schema of the declared string parameters. Handlers and domains keep
// the rules the document cannot say. The composition root builds it from the embedded document
// and attaches its middleware to every generated operation.
package apivalidate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/kernel/textcheck"
)

// Checks holds, per operation, what Middleware checks; built once at start from the embedded
// document by New.
type Checks map[route]*operationChecks

// route is one operation: its method and its path pattern as chi matches it.
type route struct {
	method, pattern string
}

// operationChecks is what one operation's requests are checked against.
type operationChecks struct {
	// body is the operation's request body, nil when it takes none.
	body *openapi3.RequestBody
	// schema is the body's application/json schema, with every object closed
	// to unknown members (see closeObjects).
	schema *openapi3.Schema
	// params are the declared parameters of type string.
	params []*openapi3.Parameter
}

// New reads the operations of doc. It changes doc's request schemas (closeObjects), so doc
// must be a document loaded for the server (apigen.GetSpec loads a new one per call), never
// one that something else validates responses with. It fails for a parameter without a schema
// or a request body without an application/json schema.
func New(doc *openapi3.T) (Checks, error) {
	checks := Checks{}
	closed := map[*openapi3.Schema]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			c := &operationChecks{}
			params := append(openapi3.Parameters{}, item.Parameters...)
			params = append(params, op.Parameters...)
			for _, ref := range params {
				p := ref.Value
				if p == nil || p.Schema == nil || p.Schema.Value == nil {
					return nil, fmt.Errorf("openapi: %s %s: parameter %s has no schema", method, path, ref.Ref)
				}
				if p.Schema.Value.Type.Is(openapi3.TypeString) {
					c.params = append(c.params, p)
				}
			}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				c.body = op.RequestBody.Value
				mt := c.body.Content.Get(jsonMediaType)
				if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
					return nil, fmt.Errorf("openapi: %s %s: the request body has no %s schema", method, path, jsonMediaType)
				}
				c.schema = mt.Schema.Value
				closeObjects(c.schema, closed)
			}
			checks[route{method: strings.ToUpper(method), pattern: path}] = c
		}
	}
	return checks, nil
}

// closeObjects makes every object schema under s that lists properties and
// says nothing of additionalProperties refuse unknown members (spec 05): a
// misspelt optional member is a 400, not silently dropped. A schema that
// allows more members says so (additionalProperties: true or a schema).
func closeObjects(s *openapi3.Schema, seen map[*openapi3.Schema]bool) {
	if s == nil || seen[s] {
		return
	}
	seen[s] = true
	if len(s.Properties) > 0 && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
		no := false
		s.AdditionalProperties.Has = &no
	}
	for _, p := range s.Properties {
		closeObjects(p.Value, seen)
	}
	if s.Items != nil {
		closeObjects(s.Items.Value, seen)
	}
	if s.AdditionalProperties.Schema != nil {
		closeObjects(s.AdditionalProperties.Schema.Value, seen)
	}
	for _, list := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for _, sub := range list {
			closeObjects(sub.Value, seen)
		}
	}
}

const jsonMediaType = "application/json"

// Middleware returns the middleware wire attaches to every generated operation (inside
// authenticate, outside idempotency): it answers 415 for a body that is not JSON, 400
// validation_failed naming the field for a body or a string parameter with invalid text
// (textcheck) or outside its schema, and passes every other request on with its body intact.
func (checks Checks) Middleware() apigen.MiddlewareFunc {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rctx := chi.RouteContext(r.Context())
			if rctx == nil {
				next.ServeHTTP(w, r)
				return
			}
			c := checks[route{method: r.Method, pattern: rctx.RoutePattern()}]
			if c == nil {
				next.ServeHTTP(w, r)
				return
			}
			// Parameter and body faults are reported together, so a client
			// sees every field to fix at once.
			fields := c.checkParams(r, rctx)
			switch {
			case c.body != nil && len(r.Header.Values("Content-Type")) > 1:
				// Which of two media types a proxy or a later reader believes is anyone's
				// guess (spec 05 "Validation"): refused before the body is read.
				fields = append(fields, problem.FieldError{Field: "Content-Type", Message: "must be given once"})
			case c.body != nil:
				bodyFields, err := c.checkBody(r)
				if err != nil {
					problem.Write(w, r, err)
					return
				}
				fields = append(fields, bodyFields...)
			}
			if len(fields) > 0 {
				problem.Write(w, r, problem.Validation(fields...))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// checkParams checks every declared string parameter present in r: its text,
// and for path and query parameters its schema.
func (c *operationChecks) checkParams(r *http.Request, rctx *chi.Context) []problem.FieldError {
	var (
		fields []problem.FieldError
		query  url.Values
	)
	for _, p := range c.params {
		var values []string
		switch p.In {
		case openapi3.ParameterInPath:
			raw := rctx.URLParam(p.Name)
			v, err := url.PathUnescape(raw)
			if err != nil {
				v = raw
			}
			values = []string{v}
		case openapi3.ParameterInQuery:
			if r.URL.RawQuery == "" {
				continue
			}
			if query == nil {
				query = r.URL.Query()
			}
			values = query[p.Name]
		case openapi3.ParameterInHeader:
			values = r.Header.Values(p.Name)
		default:
			continue
		}
		for _, v := range values {
			if msg := textcheck.String(v); msg != "" {
				fields = append(fields, problem.FieldError{Field: p.Name, Message: msg})
				break
			}
			// A header's own rules belong to the middleware that reads it
			// (Idempotency-Key: httpmw.Idempotency, after the device check).
			if p.In == openapi3.ParameterInHeader {
				continue
			}
			if err := p.Schema.Value.VisitJSON(v); err != nil {
				fields = append(fields, schemaFields(p.Name, err)...)
				break
			}
		}
	}
	return fields
}

// checkBody reads r's body and checks its media type, text and schema. It
// returns the invalid fields, or an error that is the whole answer (413, 415,
// an unreadable body). r.Body is replaced by a reader of the same bytes.
func (c *operationChecks) checkBody(r *http.Request) ([]problem.FieldError, error) {
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(r.Body)
		_ = r.Body.Close()
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				return nil, err
			}
			return []problem.FieldError{{Field: "body", Message: "could not be read"}}, nil
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	if len(body) == 0 {
		if c.body.Required {
			return []problem.FieldError{{Field: "body", Message: "is required"}}, nil
		}
		return nil, nil
	}
	if !jsonContentType(r.Header.Get("Content-Type")) {
		return nil, problem.New(problem.ErrUnsupportedMediaType,
			"The request body must be application/json (a +json type and charset=utf-8 are accepted).")
	}
	if f, bad := textcheck.JSON(body); bad {
		return []problem.FieldError{{Field: f.Field, Message: f.Message}}, nil
	}
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return []problem.FieldError{{Field: "body", Message: "is not a valid JSON document for this operation"}}, nil
	}
	if err := c.schema.VisitJSON(doc, openapi3.MultiErrors(), openapi3.VisitAsRequest()); err != nil {
		return schemaFields("", err), nil
	}
	return nil, nil
}

// jsonContentType reports whether a body's Content-Type is JSON:
// application/json or a type with the +json suffix, with no charset or
// charset=utf-8 (RFC 8259: JSON between systems is UTF-8). A missing
// Content-Type is not JSON.
func jsonContentType(header string) bool {
	if header == "" {
		return false
	}
	mt, params, err := mime.ParseMediaType(header)
	if err != nil {
		return false
	}
	suffixed := strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
	if mt != jsonMediaType && !suffixed {
		return false
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return false
	}
	return true
}

// schemaFields turns a kin-openapi validation error into the fields of a
// validation_failed problem, prefix being the parameter's name ("" for a
// body). Messages are the document's rule in words, never the value.
func schemaFields(prefix string, err error) []problem.FieldError {
	var all []*openapi3.SchemaError
	var collect func(error)
	collect = func(err error) {
		var multi openapi3.MultiError
		if errors.As(err, &multi) {
			for _, e := range multi {
				collect(e)
			}
			return
		}
		var se *openapi3.SchemaError
		if errors.As(err, &se) {
			all = append(all, se)
		}
	}
	collect(err)
	if len(all) == 0 {
		field := prefix
		if field == "" {
			field = "body"
		}
		return []problem.FieldError{{Field: field, Message: "does not match the schema of this operation"}}
	}
	fields := make([]problem.FieldError, 0, len(all))
	for _, se := range all {
		fields = append(fields, schemaField(prefix, se))
	}
	sort.SliceStable(fields, func(i, j int) bool { return fields[i].Field < fields[j].Field })
	return fields
}

// schemaField names the field of one schema error and says what is wrong.
func schemaField(prefix string, se *openapi3.SchemaError) problem.FieldError {
	path := se.JSONPointer()
	message := se.Reason
	switch se.SchemaField {
	case "required":
		message = "is required"
	case "nullable":
		message = "must not be null"
	case "properties":
		// An unknown member: the pointer ends at its object, the reason
		// quotes its name.
		if name, ok := quotedName(se.Reason); ok {
			path = append(path, name)
			message = "is not a known member"
		}
	case "type":
		message = "must be " + typeWords(se.Schema)
	}
	return problem.FieldError{Field: fieldPath(prefix, path), Message: message}
}

// quotedName extracts the Go-quoted name of a kin-openapi reason such as
// `property "x" is unsupported`.
func quotedName(reason string) (string, bool) {
	i := strings.IndexByte(reason, '"')
	if i < 0 {
		return "", false
	}
	name, err := strconv.QuotedPrefix(reason[i:])
	if err != nil {
		return "", false
	}
	s, err := strconv.Unquote(name)
	return s, err == nil
}

// typeWords says which JSON type a schema wants.
func typeWords(s *openapi3.Schema) string {
	if s == nil || s.Type == nil || len(*s.Type) == 0 {
		return "of the type the schema names"
	}
	t := (*s.Type)[0]
	switch t {
	case openapi3.TypeObject, openapi3.TypeArray, openapi3.TypeInteger:
		return "an " + t
	}
	return "a " + t
}

// fieldPath writes a JSON pointer's segments as the problem's field: member
// names joined with dots, array indexes as [i], after prefix.
func fieldPath(prefix string, segments []string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, s := range segments {
		if _, err := strconv.Atoi(s); err == nil && s != "" && s[0] != '-' && s[0] != '+' {
			b.WriteString("[" + s + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		if s == "" {
			s = `""`
		}
		b.WriteString(s)
	}
	if b.Len() == 0 {
		return "body"
	}
	return b.String()
}
