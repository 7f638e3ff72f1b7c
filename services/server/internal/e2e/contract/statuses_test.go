package contract

import (
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"bothy.example.com/server/internal/wiretest"
)

// noDatabase are the operations that never touch the database, so never answer 503
// unavailable: health (the process is up) and metrics (the process's own counters). Readiness
// answers 503 as its result (components.responses.Unavailable), not as a failure.
var noDatabase = []string{"getHealth", "getMetrics"}

// TestDeclaredStatuses holds api/openapi.yaml to the statuses plan of spec 05 (Statuses), so a
// new operation cannot leave out a status the shared middleware answers, nor declare one it
// cannot: 413 on every operation (http.max_body_bytes applies to every request); 400 where
// there is a body or a parameter; 415 exactly where there is a request body; 401 and 429
// exactly on the authenticated operations; 503 with Retry-After on every operation that
// touches the database; 500 everywhere. A status an operation answers but does not declare
// fails every integration test that sees it (wiretest.Validate; TestValidate pins that).
func TestDeclaredStatuses(t *testing.T) {
	t.Parallel()
	doc, _, err := wiretest.Spec()
	if err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			name := op.OperationID
			secured := op.Security == nil || len(*op.Security) > 0
			body := op.RequestBody != nil
			params := len(op.Parameters)+len(item.Parameters) > 0
			database := op.OperationID != "getReadiness" && !slices.Contains(noDatabase, name)
			want := map[string]bool{
				"400": body || params,
				"401": secured,
				"413": true,
				"415": body,
				"429": secured,
				"500": true,
			}
			if op.OperationID != "getReadiness" {
				want["503"] = database
			}
			for status, declared := range want {
				r := op.Responses.Value(status)
				switch {
				case declared && r == nil:
					t.Errorf("%s %s (%s) does not declare %s", method, path, name, status)
				case !declared && r != nil:
					t.Errorf("%s %s (%s) declares %s, which it cannot answer", method, path, name, status)
				}
			}
			for _, status := range []string{"429", "503"} {
				if r := op.Responses.Value(status); r != nil && !hasHeader(r, "Retry-After") && name != "getReadiness" {
					t.Errorf("%s %s (%s): its %s has no Retry-After header", method, path, name, status)
				}
			}
			for status := range op.Responses.Map() {
				if status == "405" {
					t.Errorf("%s %s (%s) declares 405: a wrong method is no operation (spec 05)", method, path, name)
				}
				if strings.HasPrefix(status, "4") || strings.HasPrefix(status, "5") {
					if r := op.Responses.Value(status); r.Ref == "" && r.Value.Content.Get("application/problem+json") == nil {
						t.Errorf("%s %s (%s): its %s is no problem response", method, path, name, status)
					}
				}
			}
		}
	}
}

func hasHeader(r *openapi3.ResponseRef, name string) bool {
	_, ok := r.Value.Headers[name]
	return ok
}
