package httpapi_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/chat/adapters/httpapi"
	"bothy.example.com/server/internal/kernel/jsontext/jsontexttest"
)

// threadPageCases is how many random pages TestAppendThreadSummaryListIsJSONMarshal compares.
const threadPageCases = 2000

// TestAppendThreadSummaryListIsJSONMarshal: over random pages, in which every member of the
// schema is set (strings with quotes, control characters, HTML characters, U+2028 and invalid
// UTF-8; nil, empty and filled lists; absent and present optional members; times in other
// zones and beyond RFC 3339's years), AppendThreadSummaryList writes exactly what json.Marshal
// writes after whatever dst held, and fails where it fails. The pages are filled by
// reflection, so a member added to ThreadSummary is filled too and fails here until the
// encoder writes it.
func TestAppendThreadSummaryListIsJSONMarshal(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64() //nolint:gosec // G404: a logged seed for reproducible test data, not a secret
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 13)) //nolint:gosec // G404: a reproducible test world, not a secret
	prefix := []byte("prefix:")
	for i := range threadPageCases {
		var l apigen.ThreadSummaryList
		jsontexttest.Fill(rng, reflect.ValueOf(&l).Elem())
		want, wantErr := json.Marshal(l)
		got, err := httpapi.AppendThreadSummaryList(bytes.Clone(prefix), l)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("case %d: AppendThreadSummaryList error %v, json.Marshal error %v", i, err, wantErr)
		}
		if err != nil {
			continue
		}
		if !bytes.HasPrefix(got, prefix) || !bytes.Equal(got[len(prefix):], want) {
			t.Fatalf("case %d differs from json.Marshal:\n got %s\nwant %s", i, got, want)
		}
	}
}
