package registercheck

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"bothy.example.com/architecture/internal/register"
)

// Operation statuses of api/operations.yaml.
const (
	statusEnabled = "enabled"
	statusPlanned = "planned"
	// none is the action and resource of the public operational endpoints.
	none = "none"
)

// operationsFile is the shape of api/operations.yaml (documented at its top).
type operationsFile struct {
	Actions    []string    `yaml:"actions"`
	Resources  []string    `yaml:"resources"`
	Operations []operation `yaml:"operations"`
}

type operation struct {
	ID       string `yaml:"id"`
	Module   string `yaml:"module"`
	Action   string `yaml:"action"`
	Resource string `yaml:"resource"`
	Status   string `yaml:"status"`
	Public   bool   `yaml:"public"`

	line int
}

// apiOperation is one operation of the OpenAPI document.
type apiOperation struct {
	id     string
	method string
	path   string
	line   int
}

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func checkOperations(reg *register.Register, opts Options) ([]Violation, error) {
	opsData, err := os.ReadFile(join(opts.Root, opts.Operations))
	if err != nil {
		return nil, fmt.Errorf("operation register: %w", err)
	}
	file, err := parseOperations(opsData)
	if err != nil {
		return nil, fmt.Errorf("operation register %s: %w", opts.Operations, err)
	}
	apiData, err := os.ReadFile(join(opts.Root, opts.OpenAPI))
	if err != nil {
		return nil, fmt.Errorf("openapi document: %w", err)
	}
	apiOps, apiViolations, err := parseOpenAPI(apiData, opts.OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("openapi document %s: %w", opts.OpenAPI, err)
	}

	out := apiViolations
	add := func(line int, format string, args ...any) {
		out = append(out, Violation{File: opts.Operations, Line: line, Message: fmt.Sprintf(format, args...)})
	}
	inAPI := map[string]apiOperation{}
	for _, op := range apiOps {
		inAPI[op.id] = op
	}
	firstLine := map[string]int{}
	for _, op := range file.Operations {
		if op.ID == "" {
			add(op.line, "operation without id")
			continue
		}
		if first, ok := firstLine[op.ID]; ok {
			add(op.line, "operation %s is listed twice (first at line %d)", op.ID, first)
			continue
		}
		firstLine[op.ID] = op.line

		switch op.Status {
		case statusEnabled:
			if _, ok := inAPI[op.ID]; !ok {
				add(op.line, "operation %s is enabled but not in %s", op.ID, opts.OpenAPI)
			}
		case statusPlanned:
			if _, ok := inAPI[op.ID]; ok {
				add(op.line, "operation %s is in %s but has status planned", op.ID, opts.OpenAPI)
			}
		default:
			add(op.line, "operation %s: status %s is not %s or %s", op.ID, op.Status, statusEnabled, statusPlanned)
		}

		c, ok := reg.Component(op.Module)
		switch {
		case !ok || (!c.Business && !c.ServesOperations):
			add(op.line, "operation %s: unknown module %s", op.ID, op.Module)
		case op.Status == statusEnabled && c.Status == register.StatusPlanned:
			add(op.line, "operation %s is enabled but module %s is planned", op.ID, op.Module)
		}

		switch {
		case op.Public && op.Action != none:
			add(op.line, "operation %s: a public operation takes action none", op.ID)
		case !op.Public && op.Action == none:
			add(op.line, "operation %s: action none is only for public operations", op.ID)
		case op.Action != none && !slices.Contains(file.Actions, op.Action):
			add(op.line, "operation %s: unknown action %s", op.ID, op.Action)
		}
		switch {
		case op.Public && op.Resource != none:
			add(op.line, "operation %s: a public operation takes resource none", op.ID)
		case !op.Public && op.Resource == none:
			add(op.line, "operation %s: resource none is only for public operations", op.ID)
		case op.Resource != none && !slices.Contains(file.Resources, op.Resource):
			add(op.line, "operation %s: unknown resource %s", op.ID, op.Resource)
		}
	}
	for _, op := range apiOps {
		if _, ok := firstLine[op.id]; !ok {
			out = append(out, Violation{
				File:    opts.OpenAPI,
				Line:    op.line,
				Message: fmt.Sprintf("operation %s (%s %s) is not in %s", op.id, strings.ToUpper(op.method), op.path, opts.Operations),
			})
		}
	}
	for _, list := range []struct {
		name  string
		items []string
	}{{"actions", file.Actions}, {"resources", file.Resources}} {
		seen := map[string]bool{}
		for _, item := range list.items {
			if seen[item] {
				out = append(out, Violation{File: opts.Operations, Message: fmt.Sprintf("%s lists %s twice", list.name, item)})
			}
			seen[item] = true
		}
	}
	return out, nil
}

// parseOperations decodes strictly (a misspelt key such as "pubilc" must not
// silently make an operation non-public) and then walks the node tree again
// to learn each operation's line for the report.
func parseOperations(data []byte) (operationsFile, error) {
	var file operationsFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&file); err != nil {
		return file, fmt.Errorf("decode: %w", err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return file, fmt.Errorf("decode: %w", err)
	}
	if seq := mappingValue(documentRoot(&root), "operations"); seq != nil && seq.Kind == yaml.SequenceNode {
		for i, item := range seq.Content {
			if i < len(file.Operations) {
				file.Operations[i].line = item.Line
			}
		}
	}
	return file, nil
}

// parseOpenAPI lists the operations of an OpenAPI 3 document with their
// lines. Methods without an operationId are violations of their own: the
// register could never name them.
func parseOpenAPI(data []byte, name string) ([]apiOperation, []Violation, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, nil, fmt.Errorf("decode: %w", err)
	}
	paths := mappingValue(documentRoot(&root), "paths")
	if paths == nil || paths.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("no paths object")
	}
	var ops []apiOperation
	var violations []Violation
	seen := map[string]apiOperation{}
	for i := 0; i+1 < len(paths.Content); i += 2 {
		p, item := paths.Content[i].Value, paths.Content[i+1]
		if item.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(item.Content); j += 2 {
			method, body := item.Content[j].Value, item.Content[j+1]
			if !slices.Contains(httpMethods, method) {
				continue
			}
			idNode := mappingValue(body, "operationId")
			if idNode == nil || idNode.Value == "" {
				violations = append(violations, Violation{File: name, Line: item.Content[j].Line, Message: fmt.Sprintf("%s %s has no operationId", strings.ToUpper(method), p)})
				continue
			}
			op := apiOperation{id: idNode.Value, method: method, path: p, line: idNode.Line}
			if first, ok := seen[op.id]; ok {
				violations = append(violations, Violation{File: name, Line: op.line, Message: fmt.Sprintf("operationId %s is used twice (first at line %d)", op.id, first.line)})
				continue
			}
			seen[op.id] = op
			ops = append(ops, op)
		}
	}
	return ops, violations, nil
}

func documentRoot(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return n.Content[0]
	}
	return n
}

func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
