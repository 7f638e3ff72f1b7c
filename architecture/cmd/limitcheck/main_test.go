package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture is a miniature repository: one module with two keys, a key table, an allowlist.
var fixture = map[string]string{
	"services/server/internal/alpha/app/keys.go": `package app

import "example.com/config"

// KeyPageSize is a key.
var KeyPageSize = config.Define("alpha.page_size", config.KindInt, "50", "page")

// KeyTimeout is a key.
var KeyTimeout = config.Define("alpha.timeout", config.KindDuration, "15s", "wait")
`,
	"services/server/internal/alpha/app/app.go": `package app

// A format width, not a limit: its name says so in the allowlist.
const maxHexLen = 64

// Not limit-named: ignored whatever its value.
const answer = 50

func fits(n int) bool { return n == 50 }
`,
	"services/server/internal/alpha/app/app_test.go": `package app

// Tests may use the default: maxItems = 50 here is a test's choice.
const maxItems = 50
`,
	"services/server/internal/alphatest/alphatest.go": `package alphatest

// Test support: not checked.
const startTimeout = 60
`,
	"docs/operations/configuration.md": "| key | type | default | meaning |\n| --- | --- | --- | --- |\n| `alpha.page_size` | int | `50` | page |\n| `alpha.timeout` | duration | `15s` | wait |\n",
	"docs/guide.md":                    "Pages hold `alpha.page_size` items; the wait is alpha.timeout at most.\n",
	"architecture/limitcheck.yaml":     "not_limits:\n  - {path: services/server/internal/alpha/app/app.go, name: maxHexLen, why: a format width}\n",
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestLimitCheck proves the gate passes the clean fixture and rejects each violation with
// exactly the one line naming it.
func TestLimitCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string // added or replaced; empty for the clean fixture
		body string
		want string // the one violation expected; empty for none
	}{
		{name: "clean fixture passes"},
		{
			name: "a limit-named constant without a key",
			file: "services/server/internal/alpha/domain/rules.go",
			body: "package domain\n\nconst MaxSections = 20\n",
			want: "services/server/internal/alpha/domain/rules.go:3: limit-const: MaxSections = 20 reads as a limit",
		},
		{
			name: "a limit-named duration without a key",
			file: "services/server/internal/beta/beta.go",
			body: "package beta\n\nimport \"time\"\n\nvar flushTimeout = 5 * time.Second\n",
			want: "services/server/internal/beta/beta.go:5: limit-const: flushTimeout = 5s reads as a limit",
		},
		{
			name: "a constant holding a key's default in the key's package",
			file: "services/server/internal/alpha/app/page.go",
			body: "package app\n\nconst maxPage = 50\n",
			want: "services/server/internal/alpha/app/page.go:3: key-default: maxPage holds 50, the default of key alpha.page_size",
		},
		{
			name: "a duration holding a key's default",
			file: "services/server/internal/alpha/app/wait.go",
			body: "package app\n\nimport \"time\"\n\nconst waitTimeout = 15 * time.Second\n",
			want: "services/server/internal/alpha/app/wait.go:5: key-default: waitTimeout holds 15s, the default of key alpha.timeout",
		},
		{
			name: "a comparison with a key's default",
			file: "services/server/internal/alpha/app/check.go",
			body: "package app\n\nfunc tooMany(n int) bool { return n > 50 }\n",
			want: "services/server/internal/alpha/app/check.go:3: key-default: compares with 50, the default of key alpha.page_size",
		},
		{
			name: "a number beside a key in a doc",
			file: "docs/guide.md",
			body: "Pages hold `alpha.page_size` (50) items.\n",
			want: "docs/guide.md:1: key-number:",
		},
		{
			name: "a default beside a key, comma form",
			file: "docs/guide.md",
			body: "The wait is alpha.timeout, default 15 s.\n",
			want: "docs/guide.md:1: key-number:",
		},
		{
			name: "a number, then the key in parentheses",
			file: "README.md",
			body: "Pages of 50 (`alpha.page_size`).\n",
			want: "README.md:1: key-number:",
		},
		{
			name: "a number beside a key in a Go comment",
			file: "services/server/internal/alpha/app/doc.go",
			body: "// Package app pages by alpha.page_size (50 by default).\npackage app\n",
			want: "services/server/internal/alpha/app/doc.go:1: key-number:",
		},
		{
			name: "a number beside a key in the meaning of the key table",
			file: "docs/operations/configuration.md",
			body: "| key | type | default | meaning |\n| --- | --- | --- | --- |\n| `alpha.page_size` | int | `50` | page; see alpha.timeout (15s) |\n| `alpha.timeout` | duration | `15s` | wait |\n",
			want: "docs/operations/configuration.md:3: key-number:",
		},
		{
			name: "a stale allowlist entry",
			file: "architecture/limitcheck.yaml",
			body: "not_limits:\n  - {path: services/server/internal/alpha/app/app.go, name: maxHexLen, why: a format width}\n  - {path: services/server/internal/alpha/app/app.go, name: gone, why: removed}\n",
			want: "architecture/limitcheck.yaml:0: limit-const: allowlist entry services/server/internal/alpha/app/app.go gone matches no limit-named constant",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{}
			for k, v := range fixture {
				files[k] = v
			}
			if tc.file != "" {
				files[tc.file] = tc.body
			}
			root := writeTree(t, files)
			var stdout, stderr bytes.Buffer
			code := run([]string{"-root", root}, &stdout, &stderr)
			if stderr.Len() > 0 {
				t.Fatalf("stderr: %s", stderr.String())
			}
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
				if !strings.HasPrefix(l, "limitcheck: ") {
					lines = append(lines, l)
				}
			}
			if tc.want == "" {
				if code != 0 || len(lines) != 0 {
					t.Fatalf("exit %d, want 0; output:\n%s", code, stdout.String())
				}
				return
			}
			if code != 1 || len(lines) != 1 || !strings.HasPrefix(lines[0], tc.want) {
				t.Fatalf("exit %d, want 1 with one line starting %q; output:\n%s", code, tc.want, stdout.String())
			}
		})
	}
}

func TestRunUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files map[string]string
		args  []string
		want  string
	}{
		{"extra argument", fixture, []string{"x"}, "unexpected arguments"},
		{"missing allowlist", map[string]string{"services/server/internal/a/a.go": "package a\n"}, nil, "limitcheck.yaml"},
		{"no keys", map[string]string{"services/server/internal/a/a.go": "package a\n", "architecture/limitcheck.yaml": "not_limits: []\n"}, nil, "no config.Define call"},
		{"entry without why", map[string]string{"architecture/limitcheck.yaml": "not_limits:\n  - {path: a.go, name: x}\n"}, nil, "needs path, name and why"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := writeTree(t, tc.files)
			var stdout, stderr bytes.Buffer
			if code := run(append([]string{"-root", root}, tc.args...), &stdout, &stderr); code != 2 {
				t.Fatalf("exit %d, want 2; stdout %s", code, stdout.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("stderr %q lacks %q", stderr.String(), tc.want)
			}
		})
	}
}

func TestWords(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"MaxSidebarSections":   "max sidebar sections",
		"snapshotParallelism":  "snapshot parallelism",
		"MaxIdempotencyKeyLen": "max idempotency key len",
		"HTTPMaxBodyBytes":     "http max body bytes",
		"max_items":            "max items",
	} {
		if got := strings.Join(words(name), " "); got != want {
			t.Errorf("words(%q) = %q, want %q", name, got, want)
		}
	}
}
