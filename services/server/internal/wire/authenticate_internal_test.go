package wire

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"

	"bothy.example.com/server/internal/apigen"
)

// TestPublicRoutesOfTheEmbeddedDocument: exactly the three operational
// endpoints are public, because api/openapi.yaml says security: [] on them.
func TestPublicRoutesOfTheEmbeddedDocument(t *testing.T) {
	t.Parallel()
	doc, err := apigen.GetSpec()
	if err != nil {
		t.Fatalf("GetSwagger: %v", err)
	}
	public, err := publicRoutes(doc)
	if err != nil {
		t.Fatalf("publicRoutes: %v", err)
	}
	got := slices.SortedFunc(maps.Keys(public), func(a, b route) int { return strings.Compare(a.pattern, b.pattern) })
	want := []route{{"GET", "/healthz"}, {"GET", "/metrics"}, {"GET", "/readyz"}}
	if !slices.Equal(got, want) {
		t.Fatalf("public routes = %v, want %v", got, want)
	}
}

func TestPublicRoutes(t *testing.T) {
	t.Parallel()
	bearer := openapi3.SecurityRequirements{{"bearerAuth": []string{}}}
	none := openapi3.SecurityRequirements{}
	anonymousToo := openapi3.SecurityRequirements{{"bearerAuth": []string{}}, {}}
	doc := func(global openapi3.SecurityRequirements, op *openapi3.SecurityRequirements) *openapi3.T {
		paths := openapi3.NewPaths()
		paths.Set("/api/v1/things/{thing_id}", &openapi3.PathItem{
			Get:  &openapi3.Operation{OperationID: "getThing", Security: op},
			Post: &openapi3.Operation{OperationID: "changeThing"},
		})
		return &openapi3.T{Security: global, Paths: paths}
	}
	tests := []struct {
		name    string
		doc     *openapi3.T
		want    []route
		wantErr string
	}{
		{name: "global bearer, nothing public", doc: doc(bearer, nil)},
		{name: "security: [] on the operation", doc: doc(bearer, &none), want: []route{{"GET", "/api/v1/things/{thing_id}"}}},
		{name: "an anonymous alternative", doc: doc(bearer, &anonymousToo), want: []route{{"GET", "/api/v1/things/{thing_id}"}}},
		{name: "bearer on the operation only", doc: doc(none, &bearer), wantErr: "POST /api/v1/things/{thing_id} is public only because"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			public, err := publicRoutes(tc.doc)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("publicRoutes: %v", err)
			}
			got := slices.Collect(maps.Keys(public))
			if len(got) != len(tc.want) || (len(got) == 1 && got[0] != tc.want[0]) {
				t.Fatalf("public = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAuthenticateOperations: the middleware lets public routes through
// without asking the authenticator and sends every other matched route
// through it; a parameterised route is recognised by its pattern.
func TestAuthenticateOperations(t *testing.T) {
	t.Parallel()
	public := map[route]struct{}{{http.MethodGet, "/healthz"}: {}}
	var asked []string
	authenticate := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			asked = append(asked, r.Method+" "+r.URL.Path)
			if r.Header.Get("Authorization") == "" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	mw := authenticateOperations(public, authenticate)
	r := chi.NewRouter()
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	r.Get("/healthz", mw(ok).ServeHTTP)
	r.Post("/healthz", mw(ok).ServeHTTP)
	r.Get("/api/v1/things/{thing_id}", mw(ok).ServeHTTP)

	tests := []struct {
		method, path, auth string
		status             int
		asked              bool
	}{
		{"GET", "/healthz", "", http.StatusOK, false},
		{"POST", "/healthz", "", http.StatusUnauthorized, true},
		{"GET", "/api/v1/things/0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e77", "", http.StatusUnauthorized, true},
		{"GET", "/api/v1/things/0190b6a4-4f6e-7c1a-9d0e-2f5c3b8a1e77", "Bearer x", http.StatusOK, true},
	}
	for _, tc := range tests {
		asked = nil
		req := httptest.NewRequestWithContext(t.Context(), tc.method, tc.path, nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		if rec.Code != tc.status || (len(asked) > 0) != tc.asked {
			t.Fatalf("%s %s: status %d, authenticator asked %v; want %d, asked %v", tc.method, tc.path, rec.Code, asked, tc.status, tc.asked)
		}
	}
}
