// Package jsontexttest compares a hand-written encoder (kernel/jsontext's users: the
// snapshot's, the thread list's) with encoding/json over values of the generated API types
// filled at random: one filler and one comparison, so every such test probes the same awkward
// strings, times and absent members alike.
package jsontexttest

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

// RawValues are JSON values a setting may hold, as PostgreSQL's jsonb returns them (spaces
// after colons and commas) and with characters encoding/json escapes, and two that are not
// JSON.
var RawValues = []string{
	`{"a": 1, "b": [true, null]}`, `"dark"`, `42`, `[1, 2, 3]`, `{"html": "<b>&</b>"}`,
	"\"line\u2028separator\"", `{}`, `{`, `nope`,
}

// Fill sets v, and everything below it, to random values: every member of a struct (so one
// added to a schema is filled too and an encoder that misses it fails its comparison), nil,
// empty and filled lists, absent and present pointers, strings from Pieces, times from Time,
// json.RawMessage from RawValues. It panics for a kind it has no rule for.
func Fill(rng *rand.Rand, v reflect.Value) {
	switch {
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(Time(rng)))
		return
	case v.Type() == rawType:
		v.Set(reflect.ValueOf(json.RawMessage(RawValues[rng.IntN(len(RawValues))])))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				Fill(rng, v.Field(i))
			}
		}
	case reflect.Pointer:
		if rng.IntN(3) > 0 {
			p := reflect.New(v.Type().Elem())
			Fill(rng, p.Elem())
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
				Fill(rng, v.Index(i))
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			Fill(rng, v.Index(i))
		}
	case reflect.String:
		v.SetString(String(rng))
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
		panic("jsontexttest: Fill: no rule for " + v.Type().String())
	}
}

// String mixes plain text with every kind of character encoding/json treats specially.
func String(rng *rand.Rand) string {
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

// Time is an instant between the years 0 and 10100 (some beyond what RFC 3339 and so
// encoding/json accept) with nanoseconds, in UTC or a fixed zone.
func Time(rng *rand.Rand) time.Time {
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

// Compare fills n values of T at random (Fill, from a logged seed and the stream given) and
// fails t at the first where encode, appending to a prefix, does not keep the prefix and then
// write exactly what json.Marshal writes for marshal(v), or fails where json.Marshal does not
// fail or the other way round. It is the one shape of every hand-written encoder's test.
func Compare[T any](t testing.TB, n int, stream uint64, encode func(dst []byte, v T) ([]byte, error), marshal func(v T) any) {
	t.Helper()
	seed := rand.Uint64() //nolint:gosec // G404: a logged seed for reproducible test data, not a secret
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, stream)) //nolint:gosec // G404: a reproducible test world, not a secret
	prefix := []byte("prefix:")
	for i := range n {
		var v T
		Fill(rng, reflect.ValueOf(&v).Elem())
		want, wantErr := json.Marshal(marshal(v))
		got, err := encode(bytes.Clone(prefix), v)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("case %d: the encoder's error %v, json.Marshal's %v", i, err, wantErr)
		}
		if err != nil {
			continue
		}
		if !bytes.HasPrefix(got, prefix) || !bytes.Equal(got[len(prefix):], want) {
			t.Fatalf("case %d differs from json.Marshal:\n got %s\nwant %s", i, got, want)
		}
	}
}
