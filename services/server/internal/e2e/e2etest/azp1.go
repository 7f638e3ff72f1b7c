package e2etest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"bothy.example.com/server/internal/wiretest"
)

// LogBuffer collects the JSON log lines of an App, safe for concurrent use.
type LogBuffer struct {
	Mu  sync.Mutex
	Buf bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	return b.Buf.Write(p)
}

func (b *LogBuffer) String() string {
	b.Mu.Lock()
	defer b.Mu.Unlock()
	return b.Buf.String()
}

// Records returns the log lines whose request_id is id, decoded.
func (b *LogBuffer) Records(t *testing.T, id string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		if m["request_id"] == id {
			out = append(out, m)
		}
	}
	return out
}

// ProblemBody is a problem response without its request id, which differs
// between requests by design.
func ProblemBody(t *testing.T, r *wiretest.Response) string {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	delete(m, "request_id")
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
