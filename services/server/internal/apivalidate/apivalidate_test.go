package apivalidate_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"

	"bothy.example.com/server/internal/apivalidate"
	"bothy.example.com/server/internal/kernel/problem"
)

// document is a small OpenAPI document: one operation with a body and a path parameter, one
// without either.
const document = `
openapi: 3.0.3
info: {title: things, version: "1"}
paths:
  /things/{thing_id}:
    parameters:
      - {name: thing_id, in: path, required: true, schema: {type: string, pattern: "^[a-z]+$"}}
    put:
      operationId: putThing
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties:
                name: {type: string, maxLength: 10}
      responses:
        "204": {description: done}
  /things:
    get:
      operationId: listThings
      responses:
        "200": {description: the things}
`

// newHandler serves the document's operations behind the middleware; a request that reaches
// an operation is answered 204 with the body it read.
func newHandler(t *testing.T) http.Handler {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(document))
	if err != nil {
		t.Fatal(err)
	}
	checks, err := apivalidate.New(doc)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusNoContent)
		_, _ = w.Write(body)
	})
	r := chi.NewRouter()
	r.With(chi.Middlewares{checks.Middleware()}...).Put("/things/{thing_id}", echo)
	r.With(chi.Middlewares{checks.Middleware()}...).Get("/things", echo)
	return r
}

func TestMiddleware(t *testing.T) {
	t.Parallel()
	h := newHandler(t)
	for _, tc := range []struct {
		name         string
		method, path string
		contentTypes []string
		body         string
		wantStatus   int
		wantFields   []string
	}{
		{name: "a valid request passes with its body", method: http.MethodPut, path: "/things/abc",
			contentTypes: []string{"application/json"}, body: `{"name":"Alex"}`, wantStatus: http.StatusNoContent},
		{name: "a +json type with charset=utf-8 passes", method: http.MethodPut, path: "/things/abc",
			contentTypes: []string{"application/merge-patch+json; charset=UTF-8"}, body: `{"name":"Sam"}`, wantStatus: http.StatusNoContent},
		{name: "no Content-Type", method: http.MethodPut, path: "/things/abc",
			body: `{"name":"Alex"}`, wantStatus: http.StatusUnsupportedMediaType},
		{name: "text/plain", method: http.MethodPut, path: "/things/abc",
			contentTypes: []string{"text/plain"}, body: `{"name":"Alex"}`, wantStatus: http.StatusUnsupportedMediaType},
		{name: "Content-Type twice, both JSON", method: http.MethodPut, path: "/things/abc",
			contentTypes: []string{"application/json", "application/json"}, body: `{"name":"Alex"}`,
			wantStatus: http.StatusBadRequest, wantFields: []string{"Content-Type"}},
		{name: "Content-Type twice, JSON first", method: http.MethodPut, path: "/things/abc",
			contentTypes: []string{"application/json", "text/plain"}, body: `{"name":"Alex"}`,
			wantStatus: http.StatusBadRequest, wantFields: []string{"Content-Type"}},
		{name: "Content-Type twice, with an empty body", method: http.MethodPut, path: "/things/abc",
			contentTypes: []string{"application/json", "application/json"},
			wantStatus:   http.StatusBadRequest, wantFields: []string{"Content-Type"}},
		{name: "Content-Type twice on an operation without a body", method: http.MethodGet, path: "/things",
			contentTypes: []string{"application/json", "text/plain"}, wantStatus: http.StatusNoContent},
		{name: "the body is required", method: http.MethodPut, path: "/things/abc",
			contentTypes: []string{"application/json"}, wantStatus: http.StatusBadRequest, wantFields: []string{"body"}},
		{name: "an unknown member and a bad parameter at once", method: http.MethodPut, path: "/things/ABC",
			contentTypes: []string{"application/json"}, body: `{"name":"Robin","colour":"red"}`,
			wantStatus: http.StatusBadRequest, wantFields: []string{"thing_id", "colour"}},
		{name: "NUL in a string", method: http.MethodPut, path: "/things/abc",
			contentTypes: []string{"application/json"}, body: `{"name":"a\u0000b"}`,
			wantStatus: http.StatusBadRequest, wantFields: []string{"name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequestWithContext(t.Context(), tc.method, tc.path, strings.NewReader(tc.body))
			for _, ct := range tc.contentTypes {
				req.Header.Add("Content-Type", ct)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.wantStatus {
				t.Fatalf("status %d (%s), want %d", rec.Code, rec.Body, tc.wantStatus)
			}
			if tc.wantStatus == http.StatusNoContent {
				if rec.Body.String() != tc.body {
					t.Fatalf("the operation read %q, want the body %q", rec.Body, tc.body)
				}
				return
			}
			var p problem.Problem
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
				t.Fatalf("the answer is no problem: %v: %s", err, rec.Body)
			}
			var fields []string
			for _, f := range p.Errors {
				fields = append(fields, f.Field)
			}
			if strings.Join(fields, ",") != strings.Join(tc.wantFields, ",") {
				t.Fatalf("fields %v (%s), want %v", fields, rec.Body, tc.wantFields)
			}
		})
	}
}
