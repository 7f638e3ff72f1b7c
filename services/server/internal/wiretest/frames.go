package wiretest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"

	"bothy.example.com/server/internal/apitest"
)

// FramesPath returns the path of the gateway's AsyncAPI document under the repository root.
func FramesPath(root string) string {
	return filepath.Join(root, "api", "gateway.asyncapi.yaml")
}

// Frames are the message payload schemas of api/gateway.asyncapi.yaml, by direction and op.
type Frames struct {
	// Server maps the op of every frame the server sends to its payload schema.
	Server map[string]*openapi3.Schema
	// Client maps the op of every frame the server receives to its payload schema.
	Client map[string]*openapi3.Schema
}

// asyncDoc is what FrameSchemas reads of the AsyncAPI document.
type asyncDoc struct {
	Operations map[string]struct {
		Action   string `yaml:"action"`
		Messages []struct {
			Ref string `yaml:"$ref"`
		} `yaml:"messages"`
	} `yaml:"operations"`
	Components struct {
		Messages map[string]struct {
			Name    string `yaml:"name"`
			Payload struct {
				SchemaFormat string `yaml:"schemaFormat"`
				Schema       any    `yaml:"schema"`
			} `yaml:"payload"`
		} `yaml:"messages"`
	} `yaml:"components"`
}

var frames struct {
	once sync.Once
	f    Frames
	err  error
}

// FrameSchemas returns the payload schemas of the gateway's frames from
// api/gateway.asyncapi.yaml, loaded once per test binary. The payloads are OpenAPI 3.0 schemas
// that refer to ./openapi.yaml; they are loaded with kin-openapi as components of a document
// beside it, so the references resolve to the schemas the HTTP responses are checked against.
func FrameSchemas() (Frames, error) {
	frames.once.Do(func() {
		root, err := RepoRoot()
		if err != nil {
			frames.err = err
			return
		}
		frames.f, frames.err = loadFrames(FramesPath(root))
	})
	return frames.f, frames.err
}

func loadFrames(path string) (Frames, error) {
	data, err := os.ReadFile(path) //nolint:gosec // the repository's own document
	if err != nil {
		return Frames{}, fmt.Errorf("asyncapi: %w", err)
	}
	var doc asyncDoc
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Frames{}, fmt.Errorf("asyncapi: %w", err)
	}
	// The direction of each message: what the server sends or receives (its operations).
	direction := map[string]string{}
	for name, op := range doc.Operations {
		for _, m := range op.Messages {
			msg := m.Ref[strings.LastIndex(m.Ref, "/")+1:]
			if d, ok := direction[msg]; ok && d != op.Action {
				return Frames{}, fmt.Errorf("asyncapi: message %s is both sent and received", msg)
			}
			if op.Action != "send" && op.Action != "receive" {
				return Frames{}, fmt.Errorf("asyncapi: operation %s has action %q", name, op.Action)
			}
			direction[msg] = op.Action
		}
	}
	schemas := map[string]any{}
	for key, m := range doc.Components.Messages {
		if m.Payload.SchemaFormat != "application/vnd.oai.openapi;version=3.0.0" {
			return Frames{}, fmt.Errorf("asyncapi: message %s: payload schema format %q, want OpenAPI 3.0", key, m.Payload.SchemaFormat)
		}
		if direction[key] == "" {
			return Frames{}, fmt.Errorf("asyncapi: message %s is in no operation", key)
		}
		schemas[key] = m.Payload.Schema
	}
	// A document beside openapi.yaml holding the payloads as its components.
	beside, err := json.Marshal(map[string]any{
		"openapi":    "3.0.3",
		"info":       map[string]any{"title": "gateway frames", "version": "0"},
		"paths":      map[string]any{},
		"components": map[string]any{"schemas": schemas},
	})
	if err != nil {
		return Frames{}, fmt.Errorf("asyncapi: %w", err)
	}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = true
	loaded, err := loader.LoadFromDataWithPath(beside, &url.URL{Path: filepath.Join(filepath.Dir(path), "gateway-frames.json")})
	if err != nil {
		return Frames{}, fmt.Errorf("asyncapi: load the payload schemas: %w", err)
	}
	if err := loaded.Validate(context.Background()); err != nil {
		return Frames{}, fmt.Errorf("asyncapi: the payload schemas: %w", err)
	}
	f := Frames{Server: map[string]*openapi3.Schema{}, Client: map[string]*openapi3.Schema{}}
	for key, m := range doc.Components.Messages {
		s := loaded.Components.Schemas[key].Value
		if direction[key] == "send" {
			f.Server[m.Name] = s
		} else {
			f.Client[m.Name] = s
		}
	}
	return f, nil
}

// Ops returns the ops of a direction's frames, sorted.
func Ops(schemas map[string]*openapi3.Schema) []string {
	ops := make([]string, 0, len(schemas))
	for op := range schemas {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	return ops
}

// ValidateServerFrame checks one frame the gateway sent against api/gateway.asyncapi.yaml: a
// JSON object without null whose op names a server frame, and which its payload schema
// accepts (the event, snapshot and problem members through the schemas of api/openapi.yaml).
func ValidateServerFrame(data []byte) error {
	f, err := FrameSchemas()
	if err != nil {
		return err
	}
	return validateFrame(f.Server, data)
}

// ValidateClientFrame is ValidateServerFrame for a frame a client sends.
func ValidateClientFrame(data []byte) error {
	f, err := FrameSchemas()
	if err != nil {
		return err
	}
	return validateFrame(f.Client, data)
}

func validateFrame(schemas map[string]*openapi3.Schema, data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var value any
	if err := dec.Decode(&value); err != nil {
		return fmt.Errorf("frame: not json: %w", err)
	}
	if path, found := apitest.FindNull(value, "$"); found {
		return fmt.Errorf("frame: null at %s", path)
	}
	obj, ok := value.(map[string]any)
	if !ok {
		return errors.New("frame: not a JSON object")
	}
	op, _ := obj["op"].(string)
	schema := schemas[op]
	if schema == nil {
		return fmt.Errorf("frame: op %q is none of %v", op, Ops(schemas))
	}
	if err := schema.VisitJSON(apitest.Plain(value), openapi3.MultiErrors()); err != nil {
		return fmt.Errorf("asyncapi: %s frame: %w", op, err)
	}
	return nil
}
