package httpapi_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/jsontext/jsontexttest"
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
		jsontexttest.Fill(rng, reflect.ValueOf(&s).Elem())
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
		jsontexttest.Fill(rng, reflect.ValueOf(&v).Elem())
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
