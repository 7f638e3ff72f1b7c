package httpapi_test

import (
	"bytes"
	"encoding/json"
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
	jsontexttest.Compare(t, snapshotCases, 6, httpapi.AppendSnapshot, func(s apigen.Snapshot) any { return s })
}

// TestEncodeSnapshotIsJSONMarshalOfTheMapping: over random views filled like the snapshots of
// TestAppendSnapshotIsJSONMarshal, EncodeSnapshot writes exactly json.Marshal(ToAPISnapshot(v)),
// and fails where it fails, although it encodes channels and unread threads straight from the
// view.
func TestEncodeSnapshotIsJSONMarshalOfTheMapping(t *testing.T) {
	t.Parallel()
	jsontexttest.Compare(t, snapshotCases, 7,
		func(dst []byte, v syncmod.SnapshotView) ([]byte, error) {
			b, err := httpapi.EncodeSnapshot(v)
			return append(dst, b...), err
		},
		func(v syncmod.SnapshotView) any { return httpapi.ToAPISnapshot(v) })
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
