package jsontext_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"

	"bothy.example.com/server/internal/kernel/jsontext"
)

// marshalString is encoding/json's encoding of s, with or without HTML escaping.
func marshalString(t *testing.T, s string, escapeHTML bool) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(s); err != nil {
		t.Fatalf("encode %q: %v", s, err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// TestAppendStringIsEncodingJSON: for chosen and random strings (control characters,
// quotes, HTML characters, U+2028, invalid UTF-8), AppendString writes exactly what
// encoding/json writes, with and without HTML escaping, after whatever dst held.
func TestAppendStringIsEncodingJSON(t *testing.T) {
	t.Parallel()
	cases := []string{"", "Sam", `say "hi" \ bye`, "a\x00b\x01\x08\x0c\n\r\t\x1f", "<b>&amp;</b>", "line\u2028sep\u2029", "bad \xff\xfe utf8", "caf\u00e9 \U0001F600"}
	seed := rand.Uint64() //nolint:gosec // G404: a logged seed for reproducible test data, not a secret
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 11)) //nolint:gosec // G404: a reproducible test world, not a secret
	alphabet := []string{"a", "\"", "\\", "<", ">", "&", "\x00", "\x07", "\b", "\f", "\n", "\x7f", "\u00e9", "\u2028", "\u2029", "\xff", "\xe2\x80", "\U0001F600"}
	for range 2000 {
		var b bytes.Buffer
		for range rng.IntN(12) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		for _, html := range []bool{false, true} {
			got := string(jsontext.AppendString([]byte("x:"), s, html))
			if want := "x:" + marshalString(t, s, html); got != want {
				t.Fatalf("AppendString(%q, html %v) = %s, want %s", s, html, got, want)
			}
		}
	}
}

// TestAppendUUIDIsMarshalText: the quoted canonical form, after whatever dst held.
func TestAppendUUIDIsMarshalText(t *testing.T) {
	t.Parallel()
	for range 100 {
		u := uuid.New()
		want, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(jsontext.AppendUUID([]byte("x:"), u)); got != "x:"+string(want) {
			t.Fatalf("AppendUUID = %s, want x:%s", got, want)
		}
	}
}
