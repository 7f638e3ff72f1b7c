package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"bothy.example.com/server/internal/kernel/logging"
	"bothy.example.com/server/internal/wire"
)

// TestProgressLines: off a terminal, the progress of a backup or a restore is a JSON log line at
// every tenth of the way, per step, and nothing for an unknown total.
func TestProgressLines(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := newProgress(&buf, logging.New(&buf, slog.LevelInfo))
	if p.bar != nil {
		t.Fatal("a buffer got a progress bar")
	}
	p.update(wire.BackupProgress{Step: "dump", Done: 1, Total: 0})
	for done := 0; done <= 20; done++ {
		p.update(wire.BackupProgress{Step: "dump", Done: done, Total: 20})
	}
	p.update(wire.BackupProgress{Step: "restore", Done: 1, Total: 3})
	p.finish()
	var got []string
	for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		var m struct {
			Msg     string `json:"msg"`
			Percent int    `json:"percent"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q is no JSON: %v", line, err)
		}
		got = append(got, m.Msg+" "+strings.Repeat("#", m.Percent/10))
	}
	want := []string{"dump progress "}
	for i := 1; i <= 10; i++ {
		want = append(want, "dump progress "+strings.Repeat("#", i))
	}
	want = append(want, "restore progress ###")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestBackupProgressBar: on a terminal the bar is redrawn in place, only when it changes, and its
// line ends once.
func TestBackupProgressBar(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := &progress{bar: &progressBar{w: &buf}}
	p.update(wire.BackupProgress{Step: "restore", Done: 0, Total: 4})
	p.update(wire.BackupProgress{Step: "restore", Done: 0, Total: 4})
	p.update(wire.BackupProgress{Step: "restore", Done: 2, Total: 4})
	p.update(wire.BackupProgress{Step: "restore", Done: 4, Total: 4})
	p.finish()
	want := progressLine("restore", 0, 4) + progressLine("restore", 2, 4) + progressLine("restore", 4, 4) + "\n"
	if buf.String() != want {
		t.Errorf("bar %q, want %q", buf.String(), want)
	}
	if got := progressLine("dump", 2, 4); got != "\rdump     [###############...............] 2/4" {
		t.Errorf("progressLine = %q", got)
	}
}
