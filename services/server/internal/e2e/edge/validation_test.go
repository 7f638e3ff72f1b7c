package edge

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/e2e/e2etest"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/wiretest"
)

// The tests of the one request validation place (ADR 0022, spec 05 "Validation") walk
// api/openapi.yaml: every operation with a request body, every string member of it (nested
// objects and array elements included), every required member and every declared string
// parameter, so a new operation is covered without a new test.

// specOperation is one operation of the document with what the tests need of it.
type specOperation struct {
	id, method, path string
	op               *openapi3.Operation
	params           []*openapi3.Parameter
	body             *openapi3.RequestBody
	schema           *openapi3.Schema // the application/json schema of the body
}

// specOperations returns the document's operations, sorted by id.
func specOperations(t testing.TB) []specOperation {
	t.Helper()
	doc, _, err := wiretest.Spec()
	if err != nil {
		t.Fatal(err)
	}
	var ops []specOperation
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			o := specOperation{id: op.OperationID, method: method, path: path, op: op}
			for _, ref := range append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...) {
				o.params = append(o.params, ref.Value)
			}
			if op.RequestBody != nil {
				o.body = op.RequestBody.Value
				o.schema = o.body.Content.Get("application/json").Schema.Value
			}
			ops = append(ops, o)
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].id < ops[j].id })
	return ops
}

// idFor names a uuid for a member or parameter; the validation tests use random ones (a
// refused request never reaches the lookup), the fuzz test real ones.
type idFor func(name string) string

// sampler makes values that pass a schema.
type sampler struct {
	rnd *rand.Rand
	id  idFor
}

// value returns a value of s (every property of an object, one element of an array), name
// being the member or parameter it is for.
func (g sampler) value(s *openapi3.Schema, name string) any {
	if len(s.Enum) > 0 {
		return s.Enum[g.rnd.IntN(len(s.Enum))]
	}
	switch {
	case s.Type.Is(openapi3.TypeObject):
		obj := map[string]any{}
		for k, p := range s.Properties {
			obj[k] = g.value(p.Value, k)
		}
		return obj
	case s.Type.Is(openapi3.TypeArray):
		item := strings.TrimSuffix(name, "s")
		return []any{g.value(s.Items.Value, item)}
	case s.Type.Is(openapi3.TypeInteger), s.Type.Is(openapi3.TypeNumber):
		if s.Min != nil {
			return int64(*s.Min)
		}
		return 0
	case s.Type.Is(openapi3.TypeBoolean):
		return g.rnd.IntN(2) == 0
	case s.Type.Is(openapi3.TypeString):
		return g.text(s, name)
	}
	// An untyped schema (a setting's value): any JSON value, a string here.
	return "any value"
}

// text returns a string of s.
func (g sampler) text(s *openapi3.Schema, name string) string {
	switch {
	case s.Format == "uuid":
		return g.id(name)
	case s.Pattern != "":
		// Handles and setting keys: lower-case letters and digits fit both.
		return fmt.Sprintf("k%06d", g.rnd.IntN(1000000))
	case strings.Contains(name, "email"):
		return fmt.Sprintf("robin%d@example.com", g.rnd.IntN(1000000))
	}
	return "Hello Sam"
}

// location is where a value sits in a body: its path segments (string member names and int
// array indexes) and the problem's field for it.
type location struct {
	segments []any
	field    string
}

// stringMembers returns every string in the sample body v of schema s, member names and
// array elements included, in a stable order.
func stringMembers(s *openapi3.Schema, v any, segs []any, field string) []location {
	var out []location
	switch t := v.(type) {
	case string:
		out = append(out, location{segments: slices.Clone(segs), field: field})
	case map[string]any:
		for _, k := range slices.Sorted(mapKeys(t)) {
			sub := &openapi3.Schema{}
			if p := s.Properties[k]; p != nil {
				sub = p.Value
			}
			out = append(out, stringMembers(sub, t[k], append(segs, k), join(field, k))...)
		}
	case []any:
		for i, e := range t {
			out = append(out, stringMembers(itemsOf(s), e, append(segs, i), fmt.Sprintf("%s[%d]", field, i))...)
		}
	}
	return out
}

// objects returns every object in the sample body v of schema s with its schema.
func objects(s *openapi3.Schema, v any, segs []any, field string) []struct {
	at     location
	schema *openapi3.Schema
} {
	type entry = struct {
		at     location
		schema *openapi3.Schema
	}
	var out []entry
	switch t := v.(type) {
	case map[string]any:
		if len(s.Properties) > 0 {
			out = append(out, entry{at: location{segments: slices.Clone(segs), field: field}, schema: s})
		}
		for _, k := range slices.Sorted(mapKeys(t)) {
			if p := s.Properties[k]; p != nil {
				out = append(out, objects(p.Value, t[k], append(segs, k), join(field, k))...)
			}
		}
	case []any:
		for i, e := range t {
			out = append(out, objects(itemsOf(s), e, append(segs, i), fmt.Sprintf("%s[%d]", field, i))...)
		}
	}
	return out
}

// itemsOf is the schema of s's array elements, an empty schema when s is no
// array (a fuzzed body may hold an array where its schema wants a string).
func itemsOf(s *openapi3.Schema) *openapi3.Schema {
	if s.Items == nil || s.Items.Value == nil {
		return &openapi3.Schema{}
	}
	return s.Items.Value
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func join(field, name string) string {
	if field == "" {
		return name
	}
	return field + "." + name
}

// deepCopy copies a sample body.
func deepCopy(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(err)
	}
	return out
}

// set replaces the value at segs in v (which must not be the root); del removes it (a member
// only); both return v.
func set(v any, segs []any, value any, del bool) any {
	parent := v
	for _, s := range segs[:len(segs)-1] {
		switch k := s.(type) {
		case string:
			parent = parent.(map[string]any)[k]
		case int:
			parent = parent.([]any)[k]
		}
	}
	switch k := segs[len(segs)-1].(type) {
	case string:
		if del {
			delete(parent.(map[string]any), k)
		} else {
			parent.(map[string]any)[k] = value
		}
	case int:
		parent.([]any)[k] = value
	}
	return v
}

// badPlaceholder marks the string a test replaces by raw invalid text after encoding.
const badPlaceholder = "\u2063BAD\u2063"

// badTexts are the raw JSON string contents every string member must refuse (spec 05):
// NUL escaped and raw, raw invalid bytes, an overlong form, lone surrogate escapes and a raw
// encoded surrogate.
var badTexts = []struct{ name, raw string }{
	{"nul escape", `a\u0000b`},
	{"raw nul", "a\x00b"},
	{"invalid byte", "a\xffb"},
	{"overlong", "a\xc0\xafb"},
	{"lone high surrogate escape", `a\ud800b`},
	{"lone low surrogate escape", `a\udc00b`},
	{"encoded surrogate", "a\xed\xa0\x80b"},
}

// badParamTexts are the invalid texts of a parameter: percent-encoded in paths and queries,
// raw in headers (where Go's client refuses control characters, so no NUL there).
var badParamTexts = []struct {
	name, raw string
	header    bool
}{
	{"nul", "a\x00b", false},
	{"invalid byte", "a\xffb", true},
	{"overlong", "a\xc0\xafb", true},
	{"encoded surrogate", "a\xed\xa0\x80b", true},
}

// encode writes v as JSON with the placeholder replaced by raw.
func encode(t testing.TB, v any, raw string) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(badPlaceholder)
	return strings.Replace(string(b), string(quoted), `"`+raw+`"`, 1)
}

// validationCase is one request of the validation tests and the fields its 400 must name.
type validationCase struct {
	name, method, path string
	header             http.Header
	body               string
	status             int
	fields             []string // with status 400: the fields errors must include
}

// check sends c with the bearer token and checks the answer.
func (c validationCase) check(t *testing.T, env *wiretest.Env, token string) {
	t.Helper()
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req := env.Client.NewRequest(c.method, c.path, body)
	for k, v := range c.header {
		req.Header[k] = v
	}
	if _, given := c.header["Content-Type"]; !given && c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	r := env.Client.Do(req)
	if r.Status != c.status {
		t.Fatalf("%s: %s %s = %d, want %d; body %s\nrequest body %q", c.name, c.method, c.path, r.Status, c.status, r.Body, c.body)
	}
	if c.status < 400 {
		return
	}
	p := r.Problem(t)
	if c.status != http.StatusBadRequest {
		return
	}
	if p.Code != "validation_failed" {
		t.Fatalf("%s: code %q, want validation_failed; body %s", c.name, p.Code, r.Body)
	}
	for _, want := range c.fields {
		if !slices.ContainsFunc(p.Errors, func(f problem.FieldError) bool { return f.Field == want }) {
			t.Fatalf("%s: the problem does not name %q; body %s\nrequest body %q", c.name, want, r.Body, c.body)
		}
	}
}

// requestPath fills the operation's path parameters from values (by name), escaping them.
func requestPath(o specOperation, values map[string]string) string {
	p := o.path
	for _, prm := range o.params {
		if prm.In == openapi3.ParameterInPath {
			p = strings.ReplaceAll(p, "{"+prm.Name+"}", url.PathEscape(values[prm.Name]))
		}
	}
	return p
}

// requiredQuery samples every required query parameter of o but skip, as a query string
// starting with "?" ("" when there is none).
func requiredQuery(g sampler, o specOperation, skip string) string {
	q := url.Values{}
	for _, prm := range o.params {
		if prm.In == openapi3.ParameterInQuery && prm.Required && prm.Name != skip {
			q.Set(prm.Name, fmt.Sprint(g.value(prm.Schema.Value, prm.Name)))
		}
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// pathValues samples every path parameter of o.
func pathValues(g sampler, o specOperation) map[string]string {
	values := map[string]string{}
	for _, prm := range o.params {
		if prm.In == openapi3.ParameterInPath {
			values[prm.Name] = g.text(prm.Schema.Value, prm.Name)
		}
	}
	return values
}

// validationCases are the requests every operation of the document must refuse with 400
// naming the field: invalid text in each string member and each string parameter, each
// required member missing and null, each optional member null, an unknown member in each
// object, and a missing required body.
func validationCases(t *testing.T) []validationCase {
	g := sampler{rnd: rand.New(rand.NewPCG(1, 2)), id: func(string) string { return uuid.NewString() }} //nolint:gosec // G404: reproducible samples, not secrets
	var cases []validationCase
	for _, o := range specOperations(t) {
		method := strings.ToUpper(o.method)
		path := requestPath(o, pathValues(g, o))
		query := requiredQuery(g, o, "")
		var base any
		valid := ""
		if o.body != nil {
			base = g.value(o.schema, "")
			if err := o.schema.VisitJSON(deepCopy(base), openapi3.MultiErrors()); err != nil {
				t.Fatalf("%s: the sample body does not pass its own schema: %v", o.id, err)
			}
			valid = encode(t, base, "")
			for _, loc := range stringMembers(o.schema, base, nil, "") {
				for _, bad := range badTexts {
					cases = append(cases, validationCase{
						name: fmt.Sprintf("%s %s: %s", o.id, loc.field, bad.name), method: method, path: path,
						body:   encode(t, set(deepCopy(base), loc.segments, badPlaceholder, false), bad.raw),
						status: http.StatusBadRequest, fields: []string{loc.field},
					})
				}
			}
			for _, obj := range objects(o.schema, base, nil, "") {
				for _, name := range slices.Sorted(slices.Values(slices.Collect(func(yield func(string) bool) {
					for k := range obj.schema.Properties {
						if !yield(k) {
							return
						}
					}
				}))) {
					field := join(obj.at.field, name)
					segs := append(slices.Clone(obj.at.segments), name)
					if slices.Contains(obj.schema.Required, name) {
						cases = append(cases, validationCase{
							name: o.id + " " + field + ": required member missing", method: method, path: path,
							body: encode(t, set(deepCopy(base), segs, nil, true), ""), status: http.StatusBadRequest, fields: []string{field},
						})
					}
					cases = append(cases, validationCase{
						name: o.id + " " + field + ": null", method: method, path: path,
						body: encode(t, set(deepCopy(base), segs, nil, false), ""), status: http.StatusBadRequest, fields: []string{field},
					})
				}
				if obj.schema.AdditionalProperties.Has == nil && obj.schema.AdditionalProperties.Schema == nil {
					field := join(obj.at.field, "unknown_member")
					segs := append(slices.Clone(obj.at.segments), "unknown_member")
					var body any
					if len(segs) == 1 {
						body = deepCopy(base)
						body.(map[string]any)["unknown_member"] = "x"
					} else {
						body = set(deepCopy(base), segs, "x", false)
					}
					cases = append(cases, validationCase{
						name: o.id + " " + field + ": unknown member", method: method, path: path,
						body: encode(t, body, ""), status: http.StatusBadRequest, fields: []string{field},
					})
				}
			}
			if o.body.Required {
				cases = append(cases, validationCase{
					name: o.id + ": no body", method: method, path: path, status: http.StatusBadRequest, fields: []string{"body"},
				})
			}
			cases = append(cases, validationCase{
				name: o.id + ": trailing data", method: method, path: path, body: valid + ` {}`,
				status: http.StatusBadRequest, fields: []string{"body"},
			})
		}
		for _, prm := range o.params {
			if !prm.Schema.Value.Type.Is(openapi3.TypeString) {
				continue
			}
			for _, bad := range badParamTexts {
				c := validationCase{
					name: fmt.Sprintf("%s %s %s: %s", o.id, prm.In, prm.Name, bad.name), method: method, path: path + query,
					body: valid, header: http.Header{}, status: http.StatusBadRequest, fields: []string{prm.Name},
				}
				switch prm.In {
				case openapi3.ParameterInPath:
					values := pathValues(g, o)
					values[prm.Name] = bad.raw
					c.path = requestPath(o, values) + query
				case openapi3.ParameterInQuery:
					q := requiredQuery(g, o, prm.Name)
					if q == "" {
						q = "?"
					} else {
						q += "&"
					}
					c.path = path + q + url.Values{prm.Name: {bad.raw}}.Encode()
				case openapi3.ParameterInHeader:
					if !bad.header {
						continue
					}
					c.header[http.CanonicalHeaderKey(prm.Name)] = []string{bad.raw}
				}
				cases = append(cases, c)
			}
		}
	}
	return cases
}

// TestRequestValidation sends every validation case of the document to a wired server as
// its owner and checks each is a 400 naming the field.
func TestRequestValidation(t *testing.T) {
	w := e2etest.NewPeople(t, false)
	cases := validationCases(t)
	if len(cases) < 200 {
		t.Fatalf("only %d validation cases: the walk over the document misses operations", len(cases))
	}
	for _, c := range cases {
		c.check(t, w.Env, w.Alex.Token)
	}
	t.Logf("%d validation cases", len(cases))
}

// TestUnsupportedMediaType checks spec 05's media types on every operation with a body: a
// body that is not JSON is a 415 (spec 05), application/json with charset=utf-8 and +json
// types pass the check (and fail later only as the sample body does).
func TestUnsupportedMediaType(t *testing.T) {
	w := e2etest.NewPeople(t, false)
	g := sampler{rnd: rand.New(rand.NewPCG(3, 4)), id: func(string) string { return uuid.NewString() }} //nolint:gosec // G404: reproducible samples, not secrets
	for _, o := range specOperations(t) {
		if o.body == nil {
			continue
		}
		path := requestPath(o, pathValues(g, o))
		body := encode(t, g.value(o.schema, ""), "")
		method := strings.ToUpper(o.method)
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/xml", "application/json; charset=iso-8859-1", "application/jsonx", "not a media type", ""} {
			c := validationCase{
				name: fmt.Sprintf("%s with Content-Type %q", o.id, ct), method: method, path: path, body: body,
				header: http.Header{"Content-Type": {ct}}, status: http.StatusUnsupportedMediaType,
			}
			if ct == "" {
				c.header = http.Header{"Content-Type": nil}
			}
			c.check(t, w.Env, w.Alex.Token)
		}
		// Accepted media types get past the check: a bad member then names the field.
		for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON; Charset=UTF-8", "application/merge-patch+json"} {
			validationCase{
				name: fmt.Sprintf("%s with Content-Type %q", o.id, ct), method: method, path: path,
				body: `{"unknown_member":1}`, header: http.Header{"Content-Type": {ct}},
				status: http.StatusBadRequest, fields: []string{"unknown_member"},
			}.check(t, w.Env, w.Alex.Token)
		}
	}
}

// TestBadInputFindings replays the bad input ADR 0022 was written for on a world
// with data: each is refused with the status and field spec 05 names and writes nothing; a
// read state survives an empty body.
func TestBadInputFindings(t *testing.T) {
	t.Parallel()
	w := e2etest.NewChatWorld(t, false)
	w.Post(t, w.Alex, w.CampaignThread, "Second")
	thread := "/api/v1/threads/" + w.CampaignThread.String()
	readState := thread + "/read-state"
	var rs apigen.ReadState
	w.Must(t, w.Sam, http.MethodPut, readState, `{"last_read_seq":2}`, http.StatusOK, &rs)
	if rs.LastReadSeq != 2 || rs.Version != 1 {
		t.Fatalf("updateReadState = %+v, want last_read_seq 2 at version 1", rs)
	}
	message := "/api/v1/messages/" + w.CampaignFirstMsg.String()
	w.Refuse(t,
		e2etest.Refusal{Name: "postMessage with NUL", As: w.Alex, Method: http.MethodPost, Path: thread + "/messages", Body: `{"content_md":"a\u0000b"}`, Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"content_md"}},
		e2etest.Refusal{Name: "createThread with NUL in the title", As: w.Alex, Method: http.MethodPost, Path: "/api/v1/channels/" + w.Campaigns.String() + "/threads", Body: `{"title":"a\u0000","content_md":"b"}`, Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"title"}},
		e2etest.Refusal{Name: "editMessage with a lone surrogate", As: w.Alex, Method: http.MethodPatch, Path: message, Body: `{"content_md":"\ud800"}`, Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"content_md"}},
		e2etest.Refusal{Name: "createSpace with an overlong form", As: w.Alex, Method: http.MethodPost, Path: "/api/v1/spaces", Body: "{\"name\":\"\xc0\xaf\"}", Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"name"}},
		e2etest.Refusal{Name: "saveDraft with an encoded surrogate", As: w.Sam, Method: http.MethodPut, Path: "/api/v1/channels/" + w.Campaigns.String() + "/draft", Body: "{\"content_md\":\"\xed\xa0\x80\"}", Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"content_md"}},
		e2etest.Refusal{Name: "putSetting with NUL in a nested member name", As: w.Sam, Method: http.MethodPut, Path: "/api/v1/me/settings/theme", Body: `{"value":{"a\u0000":1}}`, Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"value"}},
		e2etest.Refusal{Name: "read state from {}", As: w.Sam, Method: http.MethodPut, Path: readState, Body: `{}`, Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"last_read_seq"}},
		e2etest.Refusal{Name: "read state from null", As: w.Sam, Method: http.MethodPut, Path: readState, Body: `{"last_read_seq":null}`, Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"last_read_seq"}},
		e2etest.Refusal{Name: "read state from a string", As: w.Sam, Method: http.MethodPut, Path: readState, Body: `{"last_read_seq":"2"}`, Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"last_read_seq"}},
		e2etest.Refusal{Name: "read state with an unknown member", As: w.Sam, Method: http.MethodPut, Path: readState, Body: `{"last_read_seq":2,"last_read":1}`, Status: http.StatusBadRequest, Code: e2etest.Invalid, Fields: []string{"last_read"}},
		e2etest.Refusal{Name: "postMessage as text/plain", As: w.Alex, Method: http.MethodPost, Path: thread + "/messages", Body: `{"content_md":"hi"}`, Header: []string{"Content-Type", "text/plain"}, Status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type"},
	)
	// The read state is where it was: the next write is its version 2.
	w.Must(t, w.Sam, http.MethodPut, readState, `{"last_read_seq":2}`, http.StatusOK, &rs)
	if rs.LastReadSeq != 2 || rs.Version != 2 {
		t.Fatalf("updateReadState after the refusals = %+v, want last_read_seq 2 at version 2", rs)
	}
	// A charset and a +json type are JSON.
	w.Must(t, w.Alex, http.MethodPost, thread+"/messages", `{"content_md":"hi"}`, http.StatusCreated, nil, "Content-Type", "application/json; charset=UTF-8")
	w.Must(t, w.Alex, http.MethodPost, thread+"/messages", `{"content_md":"hi"}`, http.StatusCreated, nil, "Content-Type", "application/vnd.bothy+json")
}
