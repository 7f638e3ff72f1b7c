package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const fixtureDir = "../../testdata/archfixture"

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
