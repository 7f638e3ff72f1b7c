// Command eventschemas writes the event schemas of api/openapi.yaml from the event type register
// (internal/sync/domain), so that the two cannot drift: one payload schema per registered type,
// its envelope whole and redacted, and Event, the oneOf of them discriminated by type (ADR 0023).
// make codegen runs it before oapi-codegen; make codegen-check runs it with -check, which fails
// when the document's generated section differs from what the register gives.
//
// It rewrites only the lines between the BEGIN and END markers under components/schemas; the
// rest of the document (EventEnvelope, the component schemas a field names) is written by hand.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"bothy.example.com/server/internal/kernel"
	"bothy.example.com/server/internal/sync/domain"
)

// The markers around the generated section, each a whole line of the document.
const (
	beginMarker = "    # BEGIN GENERATED event schemas: make codegen writes them from the event type register" +
		" (services/server/internal/sync/domain/eventtypes.go); edit the register, not these lines."
	endMarker = "    # END GENERATED event schemas"
)

// errStale is what -check reports when the document differs from the register.
var errStale = errors.New("stale")

func main() {
	file := flag.String("openapi", "api/openapi.yaml", "the OpenAPI document to update (or check)")
	check := flag.Bool("check", false, "fail when the document's event schemas differ from the register, instead of writing them")
	flag.Parse()
	if err := run(*file, *check); err != nil {
		fmt.Fprintf(os.Stderr, "eventschemas: %v\n", err)
		os.Exit(1)
	}
}

// run updates (or with check, only compares) the generated section of the document at path.
func run(path string, check bool) error {
	doc, err := os.ReadFile(path) //nolint:gosec // the document make codegen names, a file of the repository
	if err != nil {
		return err
	}
	out, err := splice(doc, render(domain.Types()))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if bytes.Equal(out, doc) {
		if check {
			fmt.Printf("eventschemas: %s matches the event type register\n", path)
		}
		return nil
	}
	if check {
		return fmt.Errorf("%w: the event schemas of %s differ from the event type register; run make codegen and commit the result", errStale, path)
	}
	return os.WriteFile(path, out, 0o644) //nolint:gosec // a document of the repository, readable by all
}

// splice replaces the lines between the markers of doc with section.
func splice(doc []byte, section string) ([]byte, error) {
	begin := bytes.Index(doc, []byte("\n"+beginMarker+"\n"))
	end := bytes.Index(doc, []byte("\n"+endMarker+"\n"))
	if begin < 0 || end < 0 || end < begin || bytes.Count(doc, []byte(beginMarker)) != 1 || bytes.Count(doc, []byte(endMarker)) != 1 {
		return nil, errors.New("want exactly one BEGIN GENERATED event schemas line followed by one END line under components/schemas")
	}
	var b bytes.Buffer
	b.Write(doc[:begin+1+len(beginMarker)+1])
	b.WriteString(section)
	b.Write(doc[end+1:])
	return b.Bytes(), nil
}

// SchemaName is the component name of a type's schemas: message.created gives MessageCreated,
// read_state.updated ReadStateUpdated.
func schemaName(typ string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(typ, func(r rune) bool { return r == '.' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

func ref(name string) string { return `$ref: "#/components/schemas/` + name + `"` }

// writer writes YAML lines at an indentation.
type writer struct{ b strings.Builder }

func (w *writer) line(indent int, s string) {
	w.b.WriteString(strings.Repeat(" ", indent))
	w.b.WriteString(s)
	w.b.WriteByte('\n')
}

// render returns the generated section: Event, then per type its envelope and payloads.
func render(types []domain.EventType) string {
	var w writer
	w.line(4, "Event:")
	w.line(6, "description: |")
	w.line(8, "One durable event (spec 03), the same on REST and the gateway: the")
	w.line(8, "envelope (`EventEnvelope`) with the `type` and the payload of that")
	w.line(8, "type. Switch on `type`, then on `redacted`: a redacted event keeps only")
	w.line(8, "the id fields of its payload. Generated from the event type register.")
	w.line(6, "x-go-type: json.RawMessage")
	w.line(6, "oneOf:")
	for _, t := range types {
		w.line(8, "- "+ref(schemaName(t.Name)+"Event"))
	}
	w.line(6, "discriminator:")
	w.line(8, "propertyName: type")
	w.line(8, "mapping:")
	for _, t := range types {
		w.line(10, t.Name+": "+strings.TrimPrefix(ref(schemaName(t.Name)+"Event"), "$ref: "))
	}
	for _, t := range types {
		renderType(&w, t)
	}
	return w.b.String()
}

// receivers says who receives events of t (spec 02).
func receivers(t domain.EventType) string {
	if t.Personal && t.AudienceAction != "" {
		return fmt.Sprintf("Addressed: only its audience receives it, and only while allowed `%s` on the %s.", t.AudienceAction, resourceNoun(t.Resource))
	}
	if t.Personal {
		return "Personal: only its audience receives it."
	}
	return fmt.Sprintf("Every principal allowed `%s` on the %s receives it.", t.ReceiveAction, resourceNoun(t.Resource))
}

func resourceNoun(k kernel.ResourceKind) string {
	if k == kernel.ResourceInstance {
		return "instance"
	}
	return string(k) + " it changes"
}

func renderType(w *writer, t domain.EventType) {
	name := schemaName(t.Name)
	w.line(4, name+"Event:")
	w.line(6, "description: |")
	w.line(8, fmt.Sprintf("A `%s` event, whole or redacted. %s", t.Name, receivers(t)))
	// The server writes envelopes as bytes (AppendEnvelope); Go needs no union type for them.
	w.line(6, "x-go-type: json.RawMessage")
	// allOf, not oneOf at the top: generators (openapi-typescript) take a discriminator's
	// mapped schema as an object or an allOf. The whole and the redacted form are an anyOf
	// inside, which TypeScript distributes into a union it narrows on redacted: they exclude
	// each other (redacted true is required in one, false or absent in the other), but a
	// linter cannot see that through an optional member, so oneOf would be reported.
	w.line(6, "allOf:")
	w.line(8, "- "+ref("EventEnvelope"))
	w.line(8, "- type: object")
	w.line(10, "required: [type]")
	w.line(10, "properties:")
	w.line(12, "type:")
	w.line(14, "type: string")
	w.line(14, "enum: ["+t.Name+"]")
	w.line(8, "- anyOf:")
	for _, redacted := range []bool{false, true} {
		w.line(12, "- type: object")
		if redacted {
			w.line(14, "required: [payload, redacted]")
		} else {
			w.line(14, "required: [payload]")
		}
		w.line(14, "properties:")
		w.line(16, "payload:")
		if redacted {
			w.line(18, ref(name+"RedactedPayload"))
		} else {
			w.line(18, ref(name+"Payload"))
		}
		w.line(16, "redacted:")
		w.line(18, "type: boolean")
		if redacted {
			w.line(18, "enum: [true]")
			w.line(18, "description: The event was redacted; its payload keeps only its ids.")
		} else {
			w.line(18, "enum: [false]")
			w.line(18, "description: Absent from a whole event (never sent as false).")
		}
	}
	renderPayload(w, name+"Payload", fmt.Sprintf("The payload of `%s`.", t.Name), t.Fields())
	var ids []domain.Field
	for _, f := range t.Fields() {
		if f.Kind == domain.KindID {
			ids = append(ids, f)
		}
	}
	renderPayload(w, name+"RedactedPayload", fmt.Sprintf("The payload of a redacted `%s`: its id fields.", t.Name), ids)
}

func renderPayload(w *writer, name, description string, fields []domain.Field) {
	w.line(4, name+":")
	w.line(6, "type: object")
	w.line(6, "description: "+strconv.Quote(description))
	var required []string
	for _, f := range fields {
		if f.Required {
			required = append(required, f.Name)
		}
	}
	if len(required) > 0 {
		w.line(6, "required: ["+strings.Join(required, ", ")+"]")
	}
	w.line(6, "additionalProperties: false")
	if len(fields) == 0 {
		w.line(6, "properties: {}")
		return
	}
	w.line(6, "properties:")
	for _, f := range fields {
		w.line(8, f.Name+":")
		for _, l := range fieldSchema(f) {
			w.line(10, l)
		}
	}
}

// fieldSchema is the schema of one payload field, as the lines below its name.
func fieldSchema(f domain.Field) []string {
	switch f.Kind {
	case domain.KindID:
		return []string{"type: string", "format: uuid"}
	case domain.KindIDs:
		return []string{"type: array", "items:", "  type: string", "  format: uuid"}
	case domain.KindString:
		return []string{"type: string"}
	case domain.KindInt:
		return []string{"type: integer", "format: int64"}
	case domain.KindBool:
		return []string{"type: boolean"}
	case domain.KindTime:
		return []string{"type: string", "format: date-time"}
	case domain.KindObject:
		return []string{ref(f.Schema)}
	case domain.KindList:
		return []string{"type: array", "items:", "  " + ref(f.Schema)}
	case domain.KindStrings:
		return []string{"type: array", "items:", "  type: string"}
	case domain.KindValue:
		return []string{"description: Any JSON value but `null`.", "x-go-type: json.RawMessage"}
	}
	panic(fmt.Sprintf("eventschemas: field %s has kind %q, which has no schema here", f.Name, f.Kind))
}
