package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const fixtureDir = "../../testdata/archfixture"

// TestArchGate proves that the generated config makes the real go-arch-lint
// binary fail on each kind of violation, and pass on the clean fixture (which
// also contains a planned module without a directory).
func TestArchGate(t *testing.T) {
	t.Parallel()
	bin := archLintBin(t)
	tests := []struct {
		name string
		// file and body are added to the copied fixture; empty means clean.
		file     string
		body     string
		wantFail bool
		want     []string
	}{
		{
			name:     "clean fixture passes",
			wantFail: false,
		},
		{
			name: "forbidden module edge",
			file: "server/internal/alpha/app/forbidden.go",
			body: "package app\n\nimport _ \"example.com/archfixture/internal/beta\"\n",
			want: []string{"alpha-internal", "example.com/archfixture/internal/beta", "forbidden.go:3"},
		},
		{
			name: "ports may not use a forbidden module either",
			file: "server/internal/alpha/forbidden.go",
			body: "package alpha\n\nimport _ \"example.com/archfixture/internal/beta\"\n",
			want: []string{"Component alpha shouldn't depend on example.com/archfixture/internal/beta"},
		},
		{
			name: "internals of another module",
			file: "server/internal/beta/app/forbidden.go",
			body: "package app\n\nimport _ \"example.com/archfixture/internal/alpha/app\"\n",
			want: []string{"beta-internal", "example.com/archfixture/internal/alpha/app"},
		},
		{
			name: "unlisted vendor",
			file: "server/cmd/fx/yaml.go",
			body: "package main\n\nimport _ \"go.yaml.in/yaml/v3\"\n",
			want: []string{"Component cmd shouldn't depend on go.yaml.in/yaml/v3"},
		},
		{
			name: "unmapped package",
			file: "server/internal/stray/stray.go",
			body: "package stray\n",
			want: []string{"stray.go not attached to any component"},
		},
		{
			name:     "test files are not checked",
			file:     "server/internal/alpha/app/app_test.go",
			body:     "package app\n\nimport _ \"example.com/archfixture/internal/beta/app\"\n",
			wantFail: false,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if len(tc.want) > 0 {
				tc.wantFail = true
			}
			root := copyFixture(t)
			if tc.file != "" {
				path := filepath.Join(root, filepath.FromSlash(tc.file))
				if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			config := filepath.Join(root, ".go-arch-lint.yml")
			var stdout, stderr bytes.Buffer
			code := run([]string{"-register", filepath.Join(root, "modules.yaml"), "-out", config}, &stdout, &stderr)
			if code != 0 {
				t.Fatalf("archgen exit %d: %s", code, stderr.String())
			}

			out, err := runArchLint(t, bin, filepath.Join(root, "server"), config)
			failed := err != nil
			var exitErr *exec.ExitError
			if err != nil && !errors.As(err, &exitErr) {
				t.Fatalf("go-arch-lint did not run: %v\n%s", err, out)
			}
			if failed != tc.wantFail {
				t.Fatalf("go-arch-lint failed = %v, want %v\n%s", failed, tc.wantFail, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("go-arch-lint output lacks %q\n%s", w, out)
				}
			}
		})
	}
}

// TestCheckMode proves archgen -check fails on a stale or missing config and
// passes on a fresh one, which is what keeps .go-arch-lint.yml honest.
func TestCheckMode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		prepare  func(t *testing.T, config string)
		wantCode int
		wantErr  string
	}{
		{
			name:     "fresh config passes",
			prepare:  func(*testing.T, string) {},
			wantCode: 0,
		},
		{
			name: "stale config fails",
			prepare: func(t *testing.T, config string) {
				data, err := os.ReadFile(config) //nolint:gosec // the config this test just generated
				if err != nil {
					t.Fatal(err)
				}
				data = bytes.Replace(data, []byte("      - alpha\n"), []byte("      - alpha\n      - beta\n"), 1)
				if err := os.WriteFile(config, data, 0o600); err != nil { //nolint:gosec // writes inside this test's temporary fixture copy
					t.Fatal(err)
				}
			},
			wantCode: 1,
			wantErr:  "is stale (line ",
		},
		{
			name: "hand edit of the header fails",
			prepare: func(t *testing.T, config string) {
				data, err := os.ReadFile(config) //nolint:gosec // the config this test just generated
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(config, append([]byte("# edited\n"), data...), 0o600); err != nil { //nolint:gosec // writes inside this test's temporary fixture copy
					t.Fatal(err)
				}
			},
			wantCode: 1,
			wantErr:  "is stale (line 1",
		},
		{
			name: "missing config fails",
			prepare: func(t *testing.T, config string) {
				if err := os.Remove(config); err != nil {
					t.Fatal(err)
				}
			},
			wantCode: 1,
			wantErr:  "is missing",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := copyFixture(t)
			reg := filepath.Join(root, "modules.yaml")
			config := filepath.Join(root, ".go-arch-lint.yml")
			var stdout, stderr bytes.Buffer
			if code := run([]string{"-register", reg, "-out", config}, &stdout, &stderr); code != 0 {
				t.Fatalf("generate: exit %d: %s", code, stderr.String())
			}
			tc.prepare(t, config)
			stdout.Reset()
			stderr.Reset()
			code := run([]string{"-register", reg, "-out", config, "-check"}, &stdout, &stderr)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.wantErr) {
				t.Fatalf("stderr %q lacks %q", stderr.String(), tc.wantErr)
			}
		})
	}
}

func TestRunUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown flag", []string{"-nope"}, "flag provided but not defined"},
		{"extra argument", []string{"x"}, "unexpected arguments"},
		{"missing register", []string{"-register", filepath.Join(dir, "none.yaml")}, "none.yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, &stdout, &stderr); code != 2 {
				t.Fatalf("exit %d, want 2", code)
			}
			if !strings.Contains(stderr.String(), tc.wantErr) {
				t.Fatalf("stderr %q lacks %q", stderr.String(), tc.wantErr)
			}
		})
	}
}

// archLintBin finds the go-arch-lint binary: ARCH_LINT_BIN, else
// .bin/go-arch-lint at the repository root (the directory holding go.work).
// A missing binary fails the test: the gate must be proven, never skipped.
func archLintBin(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("ARCH_LINT_BIN"); bin != "" {
		if _, err := os.Stat(bin); err != nil { //nolint:gosec // the operator names the binary to test
			t.Fatalf("ARCH_LINT_BIN=%s: %v (run make tools)", bin, err)
		}
		return bin
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("repository root (go.work) not found above the test directory; set ARCH_LINT_BIN")
		}
		dir = parent
	}
	bin := filepath.Join(dir, ".bin", "go-arch-lint")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("go-arch-lint not found at %s: run make tools (or set ARCH_LINT_BIN)", bin)
	}
	return bin
}

func runArchLint(t *testing.T, bin, project, config string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	//nolint:gosec // bin is the go-arch-lint binary under test, from ARCH_LINT_BIN or the repository
	cmd := exec.CommandContext(ctx, bin, "check", "--project-path", project, "--arch-file", config, "--output-color=false")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// copyFixture copies the fixture tree to a fresh directory so each case can
// add its own violation without touching the others.
func copyFixture(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(fixtureDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(fixtureDir, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o750)
		}
		data, err := os.ReadFile(path) //nolint:gosec // path comes from walking the fixture directory
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o600) //nolint:gosec // writes inside this test's temporary fixture copy
	})
	if err != nil {
		t.Fatalf("copy fixture: %v", err)
	}
	return dst
}
