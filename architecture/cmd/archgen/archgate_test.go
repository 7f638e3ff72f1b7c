//go:build archgate

// The proof of the architecture gate runs the real go-arch-lint binary, so it is built only
// with the archgate tag: `make arch` builds go-arch-lint and runs it (before `make test` in
// `make check`), and `make test` needs no lint tool.

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

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
			name: "a module importing the composition root",
			file: "server/internal/alpha/app/root.go",
			body: "package app\n\nimport _ \"example.com/archfixture/internal/wire\"\n",
			want: []string{"alpha-internal", "example.com/archfixture/internal/wire"},
		},
		{
			name: "the composition root importing a program",
			file: "server/internal/wire/program.go",
			body: "package wire\n\nimport _ \"example.com/archfixture/cmd/fx\"\n",
			want: []string{"Component wire shouldn't depend on example.com/archfixture/cmd/fx"},
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
