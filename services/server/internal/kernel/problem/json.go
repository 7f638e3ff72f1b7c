package problem

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
)

// standard lists the members a Problem writes itself; extensions with these
// names are dropped so they cannot overwrite them.
var standard = map[string]bool{
	"type": true, "title": true, "status": true, "code": true, "detail": true,
	"request_id": true, "errors": true, "instance": true,
}

// MarshalJSON writes the standard members in a fixed order, then the
// extensions sorted by name. It never writes null: nil extensions are
// dropped, nil lists become [] and nil maps {}, and null members nested in
// extension values are removed.
func (p Problem) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	member := func(name string, v any) error {
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("marshal problem member %s: %w", name, err)
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(name)
		b.Write(key)
		b.WriteByte(':')
		b.Write(raw)
		return nil
	}
	// Standard members are strings, ints and FieldError lists: they cannot fail.
	_ = member("type", p.Type)
	_ = member("title", p.Title)
	_ = member("status", p.Status)
	_ = member("code", p.Code)
	_ = member("detail", p.Detail)
	if p.RequestID != "" {
		_ = member("request_id", p.RequestID)
	}
	if p.Errors != nil {
		_ = member("errors", p.Errors)
	}
	names := make([]string, 0, len(p.Extensions))
	for k := range p.Extensions {
		if !standard[k] {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	for _, k := range names {
		v, ok, err := noNull(p.Extensions[k])
		if err != nil {
			return nil, fmt.Errorf("marshal problem extension %s: %w", k, err)
		}
		if !ok {
			continue
		}
		if err := member(k, v); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// noNull returns a JSON-ready form of v without null anywhere, or ok false
// when v itself is nil.
func noNull(v any) (out any, ok bool, err error) {
	if v == nil {
		return nil, false, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return nil, false, nil
		}
	case reflect.Slice:
		if rv.IsNil() {
			return []any{}, true, nil
		}
	case reflect.Map:
		if rv.IsNil() {
			return map[string]any{}, true, nil
		}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, false, err
	}
	if !bytes.Contains(raw, []byte("null")) {
		return json.RawMessage(raw), true, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, false, err
	}
	return dropNulls(tree), true, nil
}

// dropNulls removes null object members and null array elements.
func dropNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if e == nil {
				delete(t, k)
				continue
			}
			t[k] = dropNulls(e)
		}
	case []any:
		out := t[:0]
		for _, e := range t {
			if e != nil {
				out = append(out, dropNulls(e))
			}
		}
		return out
	}
	return v
}

// UnmarshalJSON reads a problem body, keeping unknown members as
// Extensions, so Go clients and tests can inspect responses.
func (p *Problem) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("unmarshal problem: %w", err)
	}
	type plain Problem
	var q plain
	if err := json.Unmarshal(data, &q); err != nil {
		return fmt.Errorf("unmarshal problem: %w", err)
	}
	*p = Problem(q)
	for k, v := range raw {
		if standard[k] {
			continue
		}
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			return fmt.Errorf("unmarshal problem extension %s: %w", k, err)
		}
		if p.Extensions == nil {
			p.Extensions = map[string]any{}
		}
		p.Extensions[k] = x
	}
	return nil
}
