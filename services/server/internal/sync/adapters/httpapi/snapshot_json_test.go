package httpapi_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"bothy.example.com/server/internal/apigen"
	syncmod "bothy.example.com/server/internal/sync"
	"bothy.example.com/server/internal/sync/adapters/httpapi"
)

// snapshotCases is how many random snapshots TestAppendSnapshotIsJSONMarshal compares.
const snapshotCases = 2000

// TestAppendSnapshotIsJSONMarshal: over random snapshots, in which every member of every
// schema is set (strings with quotes, control characters, HTML characters, U+2028 and invalid
// UTF-8; nil, empty and filled lists; absent and present optional members; times in other
// zones), AppendSnapshot writes exactly what json.Marshal writes, and fails where it fails. The
// snapshots are filled by reflection, so a member added to the schema is filled too and a
// hand-written encoder that misses it fails here.
func TestAppendSnapshotIsJSONMarshal(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64() //nolint:gosec // G404: a logged seed for reproducible test data, not a secret
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 6)) //nolint:gosec // G404: a reproducible test world, not a secret
	prefix := []byte("prefix:")
	for i := range snapshotCases {
		var s apigen.Snapshot
		fill(rng, reflect.ValueOf(&s).Elem())
		want, wantErr := json.Marshal(s)
		got, err := httpapi.AppendSnapshot(bytes.Clone(prefix), s)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("case %d: AppendSnapshot error %v, json.Marshal error %v", i, err, wantErr)
		}
		if err != nil {
			continue
		}
		if !bytes.HasPrefix(got, prefix) || !bytes.Equal(got[len(prefix):], want) {
			t.Fatalf("case %d differs from json.Marshal:\n got %s\nwant %s", i, got, want)
		}
	}
}

// TestEncodeSnapshotIsJSONMarshalOfTheMapping: over random views filled like the snapshots of
// TestAppendSnapshotIsJSONMarshal, EncodeSnapshot writes exactly json.Marshal(ToAPISnapshot(v)),
// and fails where it fails, although it encodes channels and unread threads straight from the
// view.
func TestEncodeSnapshotIsJSONMarshalOfTheMapping(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64() //nolint:gosec // G404: a logged seed for reproducible test data, not a secret
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7)) //nolint:gosec // G404: a reproducible test world, not a secret
	for i := range snapshotCases {
		var v syncmod.SnapshotView
		fill(rng, reflect.ValueOf(&v).Elem())
		want, wantErr := json.Marshal(httpapi.ToAPISnapshot(v))
		got, err := httpapi.EncodeSnapshot(v)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("case %d: EncodeSnapshot error %v, json.Marshal error %v", i, err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("case %d differs from json.Marshal(ToAPISnapshot(v)):\n got %s\nwant %s", i, got, want)
		}
	}
}

// TestEncodeSnapshotIsTheBody: the encoder's output is the generated response's JSON of the
// mapped view (without its newline).
func TestEncodeSnapshotIsTheBody(t *testing.T) {
	t.Parallel()
	v := snapshotView()
	got, err := httpapi.EncodeSnapshot(v)
	if err != nil {
		t.Fatalf("EncodeSnapshot: %v", err)
	}
	want, err := json.Marshal(httpapi.ToAPISnapshot(v))
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("EncodeSnapshot\n got %s\nwant %s", got, want)
	}
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// rawValues are JSON values a setting may hold, as PostgreSQL's jsonb returns them (spaces
// after colons and commas) and with characters encoding/json escapes, and two that are not
// JSON.
var rawValues = []string{
	`{"a": 1, "b": [true, null]}`, `"dark"`, `42`, `[1, 2, 3]`, `{"html": "<b>&</b>"}`,
	"\"line\u2028separator\"", `{}`, `{`, `nope`,
}

// fill sets v, and everything below it, to random values.
func fill(rng *rand.Rand, v reflect.Value) {
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(randomTime(rng)))
		return
	case v.Type() == rawType:
		v.Set(reflect.ValueOf(json.RawMessage(rawValues[rng.IntN(len(rawValues))])))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(rng, v.Field(i))
			}
		}
	case reflect.Pointer:
		if rng.IntN(3) > 0 {
			p := reflect.New(v.Type().Elem())
			fill(rng, p.Elem())
			v.Set(p)
		}
	case reflect.Slice:
		switch rng.IntN(5) {
		case 0: // nil
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			n := 1 + rng.IntN(4)
			v.Set(reflect.MakeSlice(v.Type(), n, n))
			for i := range n {
				fill(rng, v.Index(i))
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			fill(rng, v.Index(i))
		}
	case reflect.String:
		v.SetString(randomString(rng))
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(rng.Int64() >> rng.IntN(64))
		if rng.IntN(2) == 0 {
			v.SetInt(-v.Int())
		}
	case reflect.Uint8:
		v.SetUint(uint64(rng.IntN(256))) //nolint:gosec // G115: IntN(256) is never negative
	default:
		panic("fill: no rule for " + v.Type().String())
	}
}

// randomString mixes plain text with every kind of character encoding/json treats specially.
func randomString(rng *rand.Rand) string {
	pieces := []string{
		"Alex", "Sam", "Robin", " ", "\"", "\\", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
		"<", ">", "&", "\u2028", "\u2029", "é", "日本", "😀", "\xff", "\xe2\x80", "support", "/",
	}
	var b []byte
	for range rng.IntN(8) {
		b = append(b, pieces[rng.IntN(len(pieces))]...)
	}
	return string(b)
}

// randomTime is an instant between the years 0 and 10100 (some beyond what RFC 3339 and so
// encoding/json accept) with nanoseconds, in UTC or a fixed zone.
func randomTime(rng *rand.Rand) time.Time {
	if rng.IntN(10) == 0 {
		return time.Time{}
	}
	t := time.Date(rng.IntN(10100), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), rng.IntN(24), rng.IntN(60), rng.IntN(60), rng.IntN(1_000_000_000), time.UTC)
	if rng.IntN(2) == 0 {
		t = t.In(time.FixedZone("", (rng.IntN(48)-24)*30*60))
	}
	if rng.IntN(3) == 0 {
		t = t.Truncate(time.Second)
	}
	return t
}
