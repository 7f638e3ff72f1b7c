package e2etest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"go.yaml.in/yaml/v3"

	"bothy.example.com/server/internal/wiretest"
)

// registerOp is one entry of api/operations.yaml.
type registerOp struct {
	ID       string `yaml:"id"`
	Module   string `yaml:"module"`
	Action   string `yaml:"action"`
	Resource string `yaml:"resource"`
	Status   string `yaml:"status"`
	Public   bool   `yaml:"public"`
}

// operationRegister is api/operations.yaml.
type operationRegister struct {
	Actions    []string     `yaml:"actions"`
	Resources  []string     `yaml:"resources"`
	Operations []registerOp `yaml:"operations"`
}

// APIOperation is an enabled operation of the register with where the OpenAPI
// document serves it.
type APIOperation struct {
	registerOp
	Method string
	Path   string // the OpenAPI path, e.g. /api/v1/principals/{principal_id}/tokens
	Item   *openapi3.PathItem
	Op     *openapi3.Operation
}

// EnabledOperations reads api/operations.yaml and returns its enabled
// operations, each matched to its method and path in api/openapi.yaml, in
// register order. It fails the test when an enabled operation is missing
// from the document or the document has an operation the register does not
// enable.
func EnabledOperations(t *testing.T) []APIOperation {
	t.Helper()
	root, err := wiretest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "api", "operations.yaml")) //nolint:gosec // a file of the repository.
	if err != nil {
		t.Fatalf("read the operation register: %v", err)
	}
	var reg operationRegister
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&reg); err != nil {
		t.Fatalf("parse api/operations.yaml: %v", err)
	}
	doc, _, err := wiretest.Spec()
	if err != nil {
		t.Fatal(err)
	}
	type located struct {
		method, path string
		item         *openapi3.PathItem
		op           *openapi3.Operation
	}
	inDoc := map[string]located{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			inDoc[op.OperationID] = located{method: method, path: path, item: item, op: op}
		}
	}
	var out []APIOperation
	for _, o := range reg.Operations {
		if o.Status != "enabled" {
			continue
		}
		l, ok := inDoc[o.ID]
		if !ok {
			t.Fatalf("operation %s is enabled in api/operations.yaml but absent from api/openapi.yaml", o.ID)
		}
		delete(inDoc, o.ID)
		out = append(out, APIOperation{registerOp: o, Method: l.method, Path: l.path, Item: l.item, Op: l.op})
	}
	if len(inDoc) > 0 {
		ids := make([]string, 0, len(inDoc))
		for id := range inDoc {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		t.Fatalf("api/openapi.yaml has operations the register does not enable: %v", ids)
	}
	if len(out) == 0 {
		t.Fatal("api/operations.yaml enables no operation")
	}
	return out
}

// pathParam matches a {name} segment of an OpenAPI path.
var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// parameters returns the operation's parameters, the path item's first.
func (o APIOperation) parameters() openapi3.Parameters {
	return append(slices.Clone(o.Item.Parameters), o.Op.Parameters...)
}

// parameter returns the parameter called name in location in.
func (o APIOperation) parameter(in, name string) *openapi3.Parameter {
	for _, p := range o.parameters() {
		if p.Value != nil && p.Value.In == in && p.Value.Name == name {
			return p.Value
		}
	}
	return nil
}

// Target builds a concrete request target for the operation: every path
// parameter filled from its schema (a fresh random UUID for a uuid) and every
// required query parameter given a valid value. ids receives the UUIDs put in
// the path, by parameter name.
func (o APIOperation) Target(t *testing.T, ids map[string]uuid.UUID) string {
	t.Helper()
	path := pathParam.ReplaceAllStringFunc(o.Path, func(seg string) string {
		name := seg[1 : len(seg)-1]
		p := o.parameter(openapi3.ParameterInPath, name)
		if p == nil {
			t.Fatalf("%s: path parameter %s is not declared", o.ID, name)
		}
		if id, ok := ids[name]; ok && id != uuid.Nil {
			return id.String()
		}
		v := sampleScalar(p.Schema)
		if id, err := uuid.Parse(v); err == nil && ids != nil {
			ids[name] = id
		}
		return url.PathEscape(v)
	})
	q := url.Values{}
	for _, p := range o.parameters() {
		if p.Value != nil && p.Value.In == openapi3.ParameterInQuery && p.Value.Required {
			q.Set(p.Value.Name, sampleScalar(p.Value.Schema))
		}
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return path
}

// sampleScalar returns a valid value of a scalar schema as text: its
// example or first enum value when it has one, a random UUID for format
// uuid, the minimum (or 0) for numbers.
func sampleScalar(ref *openapi3.SchemaRef) string {
	if ref == nil || ref.Value == nil {
		return "alex"
	}
	s := ref.Value
	if len(s.Enum) > 0 {
		return fmt.Sprint(s.Enum[0])
	}
	if s.Format == "uuid" {
		return uuid.NewString()
	}
	if s.Example != nil {
		return fmt.Sprint(s.Example)
	}
	switch {
	case s.Type.Is(openapi3.TypeInteger), s.Type.Is(openapi3.TypeNumber):
		if s.Min != nil {
			return fmt.Sprint(int64(*s.Min))
		}
		return "0"
	case s.Type.Is(openapi3.TypeBoolean):
		return "false"
	}
	return "alex"
}

// sampleValue builds a JSON value of a schema: every property filled (so a
// handler finds a resource to authorize against), arrays empty.
func sampleValue(ref *openapi3.SchemaRef, depth int) any {
	if ref == nil || ref.Value == nil || depth > 8 {
		return map[string]any{}
	}
	s := ref.Value
	if len(s.AllOf) > 0 {
		merged := map[string]any{}
		for _, part := range s.AllOf {
			if m, ok := sampleValue(part, depth+1).(map[string]any); ok {
				for k, v := range m {
					merged[k] = v
				}
			}
		}
		return merged
	}
	if len(s.OneOf) > 0 {
		return sampleValue(s.OneOf[0], depth+1)
	}
	if len(s.AnyOf) > 0 {
		return sampleValue(s.AnyOf[0], depth+1)
	}
	switch {
	case s.Type.Is(openapi3.TypeObject) || len(s.Properties) > 0:
		out := map[string]any{}
		for name, p := range s.Properties {
			if p.Value != nil && p.Value.ReadOnly {
				continue
			}
			out[name] = sampleValue(p, depth+1)
		}
		return out
	case s.Type.Is(openapi3.TypeArray):
		// As many elements as the schema needs: a body must pass its
		// schema to reach the handler (request validation, ADR 0022).
		out := []any{}
		for range s.MinItems {
			out = append(out, sampleValue(s.Items, depth+1))
		}
		return out
	case s.Type.Is(openapi3.TypeInteger), s.Type.Is(openapi3.TypeNumber):
		if len(s.Enum) > 0 {
			return s.Enum[0]
		}
		if s.Min != nil {
			return int64(*s.Min)
		}
		return 0
	case s.Type.Is(openapi3.TypeBoolean):
		return false
	}
	return sampleScalar(ref)
}

// body returns a JSON request body for the operation (nil when it takes
// none), built from its schema with override's members on top.
func (o APIOperation) body(t *testing.T, override map[string]any) io.Reader {
	t.Helper()
	if o.Op.RequestBody == nil || o.Op.RequestBody.Value == nil {
		return nil
	}
	mt := o.Op.RequestBody.Value.Content.Get("application/json")
	if mt == nil {
		t.Fatalf("%s: request body is not application/json", o.ID)
	}
	v := sampleValue(mt.Schema, 0)
	if m, ok := v.(map[string]any); ok {
		for k, x := range override {
			m[k] = x
		}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: encode body: %v", o.ID, err)
	}
	return bytes.NewReader(raw)
}

// Request builds a request for the operation with a bearer token
// (authorization is the whole header value; "" sends none).
func (o APIOperation) Request(t *testing.T, c *wiretest.Client, authorization string, ids map[string]uuid.UUID, override map[string]any) *http.Request {
	t.Helper()
	req := c.NewRequest(strings.ToUpper(o.Method), o.Target(t, ids), o.body(t, override))
	if req.Body != nil && req.Body != http.NoBody {
		req.Header.Set("Content-Type", "application/json")
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	return req
}
