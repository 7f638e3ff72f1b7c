package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"path/filepath"
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

// TestAdminRestoreOfAnotherInstance: bothy admin backup of one instance, restored with bothy
// admin restore into another instance's database, is refused (exit 1) with a message naming
// --allow-other-instance, and restored with that flag (spec 06).
func TestAdminRestoreOfAnotherInstance(t *testing.T) {
	t.Parallel()
	other, this := migrated(t), migrated(t)
	file := filepath.Join(t.TempDir(), "other.dump")
	out, stderr, code := runOut(t, environ("BOTHY_DATABASE_URL="+other), "admin", "backup", "--file", file)
	if code != 0 {
		t.Fatalf("admin backup exited %d; stderr: %s", code, stderr)
	}
	var backup struct {
		InstanceID string `json:"instance_id"`
	}
	if err := json.Unmarshal([]byte(out), &backup); err != nil || backup.InstanceID == "" {
		t.Fatalf("admin backup printed %q: %v", out, err)
	}

	env := environ("BOTHY_DATABASE_URL=" + this)
	out, stderr, code = runOut(t, env, "admin", "restore", "--file", file)
	if code != 1 || out != "" || !strings.Contains(stderr, "--allow-other-instance") || !strings.Contains(stderr, backup.InstanceID) {
		t.Fatalf("admin restore of another instance's backup exited %d with %q; stderr: %s\nwant exit 1 naming the instance and --allow-other-instance",
			code, out, stderr)
	}
	_, stderr, code = runOut(t, env, "admin", "restore", "--file", file, "--allow-other-instance")
	if code != 0 {
		t.Fatalf("admin restore --allow-other-instance exited %d; stderr: %s", code, stderr)
	}
	out, stderr, code = runOut(t, env, "admin", "backup", "--file", filepath.Join(t.TempDir(), "this.dump"))
	if code != 0 || !strings.Contains(out, backup.InstanceID) {
		t.Fatalf("after the restore, admin backup exited %d with %q, want instance %s; stderr: %s", code, out, backup.InstanceID, stderr)
	}
}
