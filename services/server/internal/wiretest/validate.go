package wiretest

import (
	"context"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"

	"bothy.example.com/server/internal/apitest"
)

// The validation of responses lives in apitest, shared with the modules' handler tests; these
// names keep the end-to-end tests' calls as they are.

// RepoRoot returns the repository root (apitest.RepoRoot).
func RepoRoot() (string, error) { return apitest.RepoRoot() }

// SpecPath returns the path of the OpenAPI document under root (apitest.SpecPath).
func SpecPath(root string) string { return apitest.SpecPath(root) }

// Spec returns api/openapi.yaml, loaded once per test binary, and its router (apitest.Spec).
func Spec() (*openapi3.T, routers.Router, error) { return apitest.Spec() }

// Validate checks one response of the whole server against the API contract (apitest.Validate).
func Validate(ctx context.Context, req *http.Request, status int, header http.Header, body []byte) error {
	return apitest.Validate(ctx, req, status, header, body)
}

// ValidateSchema checks a JSON document against the schema of components.schemas named name
// (apitest.ValidateSchema).
func ValidateSchema(name string, data []byte) error { return apitest.ValidateSchema(name, data) }
