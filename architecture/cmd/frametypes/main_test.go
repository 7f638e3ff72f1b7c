package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// doc is a miniature AsyncAPI document: one client frame and one server frame; extra is
// spliced into the server frame's properties.
func doc(extra string) string {
	return `asyncapi: 3.0.0
operations:
  receiveResume:
    action: receive
    messages:
      - $ref: "#/channels/gateway/messages/resume"
  sendEvent:
    action: send
    messages:
      - $ref: "#/channels/gateway/messages/event"
components:
  messages:
    resume:
      title: resume (client)
      summary: Continue from a cursor.
      payload:
        schema:
          type: object
          required: [op]
          anyOf:
            - required: [after]
            - required: [consumer]
          properties:
            op:
              type: string
              enum: [resume]
            after:
              type: integer
              minimum: 0
              description: The client's cursor.
            consumer:
              type: string
              minLength: 1
    event:
      title: event (server)
      summary: One event.
      payload:
        schema:
          type: object
          required: [op, event]
          properties:
            op:
              type: string
              enum: [event]
            event:
              $ref: "./openapi.yaml#/components/schemas/Event"
            tags:
              type: array
              items:
                type: string
` + extra
}

func TestGenerate(t *testing.T) {
	t.Parallel()
	out, err := generate([]byte(doc("")))
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	got := string(out)
	for _, want := range []string{
		`import type { components } from "./openapi.js";`,
		"/** resume (client): Continue from a cursor. */\nexport type ResumeFrame = {\n  op: \"resume\";\n  /** The client's cursor. */\n  after?: number;\n  consumer?: string;\n} & ({ after: number } | { consumer: string });",
		"export type EventFrame = {\n  op: \"event\";\n  event: components[\"schemas\"][\"Event\"];\n  tags?: string[];\n};",
		"export type ClientFrame =\n  | ResumeFrame;",
		"export type ServerFrame =\n  | EventFrame;",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks\n%s\n---- in ----\n%s", want, got)
		}
	}
}

// oneOfDoc is doc with the resume frame's anyOf turned into a oneOf whose second alternative
// forbids after.
var oneOfDoc = strings.Replace(doc(""), `          anyOf:
            - required: [after]
            - required: [consumer]
`, `          oneOf:
            - required: [after]
            - required: [consumer]
              not:
                required: [after]
`, 1)

// TestGenerateOneOf: a oneOf of required-only alternatives is a union in which each
// alternative's members are required and the others' (and those its not names) are absent.
func TestGenerateOneOf(t *testing.T) {
	t.Parallel()
	if oneOfDoc == doc("") {
		t.Fatal("the fixture's replacement matched nothing")
	}
	out, err := generate([]byte(oneOfDoc))
	if err != nil {
		t.Fatalf("generate: %v", err)
	}
	want := "} & ({ after: number; consumer?: never } | { consumer: string; after?: never });"
	if !strings.Contains(string(out), want) {
		t.Fatalf("generated:\n%s\nwant it to contain %q", out, want)
	}
}

func TestGenerateRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"unknown keyword", strings.Replace(doc(""), "              minLength: 1\n", "              pattern: \"^x\"\n", 1), "pattern"},
		{"oneOf outside an object", strings.Replace(doc(""), "              type: array\n", "              oneOf:\n                - required: [op]\n              type: array\n", 1), "oneOf outside an object"},
		{"not outside oneOf", strings.Replace(doc(""), "              minLength: 1\n", "              not:\n                required: [op]\n", 1), "not outside an alternative"},
		{"oneOf with a type", strings.Replace(oneOfDoc, "            - required: [after]\n", "            - type: object\n", 1), "only members that list required"},
		{"oneOf's not of a type", strings.Replace(oneOfDoc, "                required: [after]\n", "                type: object\n", 1), "only a list of required"},
		{"oneOf naming no property", strings.Replace(oneOfDoc, "                required: [after]\n", "                required: [seq]\n", 1), `"seq" is no property`},
		{"ref outside openapi.yaml", strings.Replace(doc(""), "./openapi.yaml#/components/schemas/Event", "#/components/schemas/Event", 1), "only ./openapi.yaml"},
		{"required without property", strings.Replace(doc(""), "required: [op, event]", "required: [op, event, seq]", 1), `required "seq" is no property`},
		{"anyOf with a type", strings.Replace(doc(""), "            - required: [consumer]\n", "            - type: object\n", 1), "only members that list required"},
		{"frame in no operation", doc("    pong:\n      payload:\n        schema:\n          type: object\n          properties:\n            op:\n              type: string\n"), "in no operation"},
		{"enum of integers", strings.Replace(doc(""), "              minimum: 0\n", "              enum: [1, 2]\n", 1), "enum of type"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.doc == doc("") {
				t.Fatal("the fixture's replacement matched nothing")
			}
			_, err := generate([]byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("generate = %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

// TestRunWritesTheRepositoryFile generates from the repository's document: the file the SDK
// commits must be what run writes (make sdk-check checks the same with the committed file).
func TestRunWritesTheRepositoryFile(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "frames.ts")
	if err := run("../../../api/gateway.asyncapi.yaml", out); err != nil {
		t.Fatalf("run: %v", err)
	}
	got, err := os.ReadFile(out) //nolint:gosec // the test's own temporary file
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../../clients/typescript/src/gen/frames.ts")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("clients/typescript/src/gen/frames.ts differs from what api/gateway.asyncapi.yaml generates: run make sdk-generate")
	}
}
