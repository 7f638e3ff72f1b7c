// Package apitest is the one validator of bothy's responses against the API contract,
// api/openapi.yaml (kin-openapi): the end-to-end tests (wiretest's Client) check every response
// of the whole server with Validate, the modules' handler tests check theirs with
// ValidateOperation, and the gateway's frames are checked with ValidateSchema. The document is
// loaded once per test binary, its object schemas closed (closeSchemas) so that a response may
// carry no member the document does not name. It is imported only by tests, so the production
// binary never links the validator.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"bothy.example.com/server/internal/kernel/correlation"
	"bothy.example.com/server/internal/kernel/problem"
)

// RepoRoot returns the repository root: the nearest directory at or above
// the working directory that holds go.work. Tests run in their package
// directory, so this finds api/ and docs/ wherever the checkout lives.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("repo root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repo root: no go.work at or above the working directory")
		}
		dir = parent
	}
}

// SpecPath returns the path of the OpenAPI document under the repository
// root.
func SpecPath(root string) string {
	return filepath.Join(root, "api", "openapi.yaml")
}

// loaded is the OpenAPI document and its router, loaded once per test binary.
var loaded struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	err    error
}

// Spec returns api/openapi.yaml, parsed and validated once per test binary,
// and a router that finds the operation of a request.
func Spec() (*openapi3.T, routers.Router, error) {
	loaded.once.Do(func() {
		root, err := RepoRoot()
		if err != nil {
			loaded.err = err
			return
		}
		doc, err := openapi3.NewLoader().LoadFromFile(SpecPath(root))
		if err != nil {
			loaded.err = fmt.Errorf("load openapi: %w", err)
			return
		}
		if err := doc.Validate(context.Background()); err != nil {
			loaded.err = fmt.Errorf("validate openapi: %w", err)
			return
		}
		closeSchemas(doc)
		router, err := legacy.NewRouter(doc)
		if err != nil {
			loaded.err = fmt.Errorf("openapi router: %w", err)
			return
		}
		loaded.doc, loaded.router = doc, router
	})
	return loaded.doc, loaded.router, loaded.err
}

// closeSchemas holds the server to the members it declares: every object schema of doc that
// lists its properties and says nothing about others is closed (additionalProperties false)
// for validation here. The document itself stays open, so that clients tolerate members a
// later release adds (spec 05, "Undeclared members"); the server's own responses, in every test
// that validates them, may carry no member the document does not name. The parts of an allOf
// (and the oneOf and anyOf alternatives of such a part) are left open, since each is checked
// alone against the whole object; a schema that says
// additionalProperties (Problem: codes add extension members) keeps what it says.
func closeSchemas(doc *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	allOfParts := map[*openapi3.Schema]bool{}
	var parts func(ref *openapi3.SchemaRef)
	parts = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		seen[ref.Value] = true
		s := ref.Value
		// The parts of an allOf, and the alternatives (oneOf, anyOf) of such a part, are
		// each checked against the whole object.
		for _, p := range s.AllOf {
			markPart(p, allOfParts)
		}
		for _, list := range [][]*openapi3.SchemaRef{s.AllOf, s.OneOf, s.AnyOf} {
			for _, p := range list {
				parts(p)
			}
		}
		for _, p := range s.Properties {
			parts(p)
		}
		parts(s.Items)
		parts(s.AdditionalProperties.Schema)
	}
	for _, ref := range schemaRoots(doc) {
		parts(ref)
	}
	for s := range seen {
		if allOfParts[s] || len(s.Properties) == 0 || s.AdditionalProperties.Has != nil || s.AdditionalProperties.Schema != nil {
			continue
		}
		closed := false
		s.AdditionalProperties.Has = &closed
	}
}

// markPart marks ref, and the alternatives of its oneOf and anyOf, as parts of an allOf.
func markPart(ref *openapi3.SchemaRef, parts map[*openapi3.Schema]bool) {
	if ref == nil || ref.Value == nil || parts[ref.Value] {
		return
	}
	parts[ref.Value] = true
	for _, list := range [][]*openapi3.SchemaRef{ref.Value.OneOf, ref.Value.AnyOf} {
		for _, alt := range list {
			markPart(alt, parts)
		}
	}
}

// schemaRoots returns every schema the document names: its components and those written
// inline in responses and request bodies.
func schemaRoots(doc *openapi3.T) []*openapi3.SchemaRef {
	var roots []*openapi3.SchemaRef
	for _, ref := range doc.Components.Schemas {
		roots = append(roots, ref)
	}
	media := func(content openapi3.Content) {
		for _, mt := range content {
			if mt != nil {
				roots = append(roots, mt.Schema)
			}
		}
	}
	for _, ref := range doc.Components.Responses {
		if ref != nil && ref.Value != nil {
			media(ref.Value.Content)
		}
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.Responses != nil {
				for _, ref := range op.Responses.Map() {
					if ref != nil && ref.Value != nil {
						media(ref.Value.Content)
					}
				}
			}
		}
	}
	return roots
}

// Validate checks one response to req against the API contract and returns
// every way it breaks it:
//   - X-Request-Id is present and valid;
//   - a JSON body (application/json or any +json type) parses and holds no
//     null anywhere (spec 05: optional members are omitted, lists are []);
//   - when the document has an operation for req, the status, content type
//     and body match that operation (undocumented statuses fail);
//   - otherwise (no route, or a method the path lacks: the router's 404,
//     405 and the body limit's 413) the body is a Problem, unless it is a
//     file of the web client (a GET outside /api/ answered 200 or 304 with
//     a type other than JSON);
//   - a problem body agrees with the response: its status is the HTTP
//     status and its type is urn:bothy:problem:<code>;
//   - a HEAD has no body, and a status and headers its path's GET declares.
func Validate(ctx context.Context, req *http.Request, status int, header http.Header, body []byte) error {
	return validate(ctx, req, status, header, body, true)
}

// ValidateOperation checks one response of a module's handlers (served without the edge's
// middleware) to req against the API contract, as Validate does but for two points: req must
// name an operation of the document (a handler test drives operations only), and the response
// need not carry X-Request-Id (the edge's middleware adds it).
func ValidateOperation(ctx context.Context, req *http.Request, status int, header http.Header, body []byte) error {
	return validate(ctx, req, status, header, body, false)
}

// validate is Validate (edge true: the whole server's response) and ValidateOperation (edge
// false: one handler's response to one of the document's operations).
func validate(ctx context.Context, req *http.Request, status int, header http.Header, body []byte, edge bool) error {
	doc, router, err := Spec()
	if err != nil {
		return err
	}
	var errs []error
	if !edge {
		// A handler test drives operations only: no route is a failure, not a problem to check.
		routed := req.Clone(ctx)
		routed.URL = &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
		if _, _, err := router.FindRoute(routed); err != nil {
			return fmt.Errorf("%s %s has no operation in the document: %w", req.Method, req.URL.Path, err)
		}
	} else if id := header.Get(correlation.Header); id == "" {
		errs = append(errs, errors.New("response has no X-Request-Id header"))
	} else if !correlation.Valid(id) {
		errs = append(errs, fmt.Errorf("response X-Request-Id %q is not a valid request id", id))
	}

	if req.Method == http.MethodHead {
		return errors.Join(append(errs, validateHead(ctx, req, router, status, header, body)...)...)
	}

	mediaType, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	isJSON := mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")
	var value any
	if isJSON {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&value); err != nil {
			return errors.Join(append(errs, fmt.Errorf("response body is not json: %w", err))...)
		}
		if path, found := FindNull(value, "$"); found {
			errs = append(errs, fmt.Errorf("response body has null at %s", path))
		}
	}

	// The router matches paths only: the document's server is relative.
	routed := req.Clone(ctx)
	routed.URL = &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	route, pathParams, routeErr := router.FindRoute(routed)
	if routeErr == nil {
		in := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{
				Request:    routed,
				PathParams: pathParams,
				Route:      route,
			},
			Status: status,
			Header: header,
			Body:   io.NopCloser(bytes.NewReader(body)),
			Options: &openapi3filter.Options{
				IncludeResponseStatus: true,
				MultiError:            true,
			},
		}
		if err := openapi3filter.ValidateResponse(ctx, in); err != nil {
			errs = append(errs, fmt.Errorf("openapi: %s %s -> %d: %w", req.Method, req.URL.Path, status, err))
		}
	} else if !webClientFile(req, status, mediaType) {
		// No operation, and not a file of the web client (webui): a problem.
		if mediaType != problem.ContentType {
			errs = append(errs, fmt.Errorf("%s %s has no operation in the document, so its %d must be %s, got %q",
				req.Method, req.URL.Path, status, problem.ContentType, header.Get("Content-Type")))
		} else if schema := doc.Components.Schemas["Problem"]; schema == nil || schema.Value == nil {
			errs = append(errs, errors.New("openapi: components.schemas.Problem is missing"))
		} else if err := schema.Value.VisitJSON(Plain(value), openapi3.MultiErrors()); err != nil {
			errs = append(errs, fmt.Errorf("openapi: problem body: %w", err))
		}
	}

	if mediaType == problem.ContentType && value != nil {
		errs = append(errs, checkProblem(value, status)...)
	}
	return errors.Join(errs...)
}

// ValidateSchema checks a JSON document against the schema of components.schemas named name,
// as Validate checks a response body (no null anywhere, then the schema): for what reaches a
// client outside an HTTP response, such as the gateway's event frames.
func ValidateSchema(name string, data []byte) error {
	doc, _, err := Spec()
	if err != nil {
		return err
	}
	schema := doc.Components.Schemas[name]
	if schema == nil || schema.Value == nil {
		return fmt.Errorf("openapi: components.schemas.%s is missing", name)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var value any
	if err := dec.Decode(&value); err != nil {
		return fmt.Errorf("not json: %w", err)
	}
	if path, found := FindNull(value, "$"); found {
		return fmt.Errorf("null at %s", path)
	}
	if err := schema.Value.VisitJSON(Plain(value), openapi3.MultiErrors()); err != nil {
		return fmt.Errorf("openapi: %s: %w", name, err)
	}
	return nil
}

// webClientFile reports whether a response is one of the web client's files (package webui),
// which bothy serves outside the API: a GET outside /api/ answered 200 or 304 with a type
// other than JSON.
func webClientFile(req *http.Request, status int, mediaType string) bool {
	return req.Method == http.MethodGet && !strings.HasPrefix(req.URL.Path, "/api/") &&
		(status == http.StatusOK || status == http.StatusNotModified) &&
		mediaType != "application/json" && !strings.HasSuffix(mediaType, "+json")
}

// validateHead checks the answer to a HEAD (spec 05: answered wherever GET is, declared as the
// GET only): no body, and, when the path has a GET operation, a status and headers that
// operation declares.
func validateHead(ctx context.Context, req *http.Request, router routers.Router, status int, header http.Header, body []byte) []error {
	var errs []error
	if len(body) != 0 {
		errs = append(errs, fmt.Errorf("HEAD %s -> %d has a body of %d bytes", req.URL.Path, status, len(body)))
	}
	routed := req.Clone(ctx)
	routed.Method = http.MethodGet
	routed.URL = &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	route, pathParams, err := router.FindRoute(routed)
	if err != nil {
		return errs
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: routed, PathParams: pathParams, Route: route},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(nil)),
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			ExcludeResponseBody:   true,
			MultiError:            true,
		},
	}
	if err := openapi3filter.ValidateResponse(ctx, in); err != nil {
		errs = append(errs, fmt.Errorf("openapi: HEAD %s -> %d (as its GET): %w", req.URL.Path, status, err))
	}
	return errs
}

// checkProblem checks that a problem body agrees with its response.
func checkProblem(value any, status int) []error {
	obj, ok := value.(map[string]any)
	if !ok {
		return []error{errors.New("problem body is not a json object")}
	}
	var errs []error
	if n, ok := obj["status"].(json.Number); !ok || n.String() != strconv.Itoa(status) {
		errs = append(errs, fmt.Errorf("problem status %v differs from the response status %d", obj["status"], status))
	}
	code, _ := obj["code"].(string)
	if typ, _ := obj["type"].(string); typ != problem.TypePrefix+code {
		errs = append(errs, fmt.Errorf("problem type %q is not %s%s", typ, problem.TypePrefix, code))
	}
	return errs
}

// FindNull returns the JSON path of the first null in v (a decoded JSON value), path naming v
// itself ("$"): spec 05 allows none anywhere.
func FindNull(v any, path string) (string, bool) {
	switch t := v.(type) {
	case nil:
		return path, true
	case map[string]any:
		for k, e := range t {
			if p, found := FindNull(e, path+"."+k); found {
				return p, true
			}
		}
	case []any:
		for i, e := range t {
			if p, found := FindNull(e, fmt.Sprintf("%s[%d]", path, i)); found {
				return p, true
			}
		}
	}
	return "", false
}

// Plain turns the json.Number leaves of v (decoded with UseNumber) into float64, the number
// type kin-openapi's schema validation expects.
func Plain(v any) any {
	switch t := v.(type) {
	case json.Number:
		f, err := t.Float64()
		if err != nil {
			return t.String()
		}
		return f
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = Plain(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = Plain(e)
		}
		return out
	}
	return v
}
