package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Characters, paths and host names that no file of the repository may contain are
// written by the tests at run time, so the fixtures exist only in temporary
// directories.
var (
	enDash   = string(rune(0x2013))
	emDash   = string(rune(0x2014))
	npmHost  = strings.Join([]string{"registry", "npmjs", "org"}, ".")
	goHost   = strings.Join([]string{"proxy", "golang", "org"}, ".")
	debHost  = strings.Join([]string{"deb", "debian", "org"}, ".")
	yarnHost = strings.Join([]string{"registry", "yarnpkg", "com"}, ".")
	homeAlex = "/ho" + "me/alex"
)

func TestRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		fixture string            // directory under testdata copied into the scanned root
		files   map[string]string // files written into the scanned root
		code    int
		want    []string // "path:line:col: rule" of every violation, in output order
	}{
		{name: "clean tree passes", fixture: "clean", code: 0},
		{
			name: "en and em dashes",
			files: map[string]string{
				"docs/a.md": "pages 1" + enDash + "3\nfine - line\nsaid so" + emDash + "twice" + emDash + "\n",
				"b.go":      "// \u00e9t\u00e9 " + enDash + " summer\n",
			},
			code: 1,
			want: []string{
				"b.go:1:8: dash",
				"docs/a.md:1:8: dash",
				"docs/a.md:3:8: dash",
				"docs/a.md:3:14: dash",
			},
		},
		{
			name:    "email outside the example domains",
			fixture: "email",
			code:    1,
			want: []string{
				"contacts.txt:2:1: email",
				"contacts.txt:3:12: email",
				"contacts.txt:3:37: email",
			},
		},
		{
			name:    "home-directory paths",
			fixture: "home",
			code:    1,
			want: []string{
				"paths.md:2:5: home-path",
				"paths.md:3:6: home-path",
				"paths.md:4:10: home-path",
				"paths.md:4:19: home-path",
			},
		},
		{
			name:    "placeholder names as whole words",
			fixture: "names",
			code:    1,
			want: []string{
				"story.md:1:10: name",
				"story.md:1:19: name",
				"story.md:1:35: name",
				"story.md:2:19: name",
			},
		},
		{
			name: "package registry hosts",
			files: map[string]string{
				"npmrc":     "registry=https://" + npmHost + "/\n",
				"go.env":    "GOPROXY=https://" + strings.ToUpper(goHost) + ",direct\n",
				"sources":   "deb http://" + debHost + "/debian bookworm main\n",
				"yarn.lock": "  resolved \"https://" + yarnHost + "/x\" and https://" + yarnHost + "/y\n",
			},
			code: 1,
			want: []string{
				"go.env:1:17: registry-host",
				"npmrc:1:18: registry-host",
				"sources:1:12: registry-host",
				"yarn.lock:1:21: registry-host",
				"yarn.lock:1:57: registry-host",
			},
		},
		{
			name:    "exemptions are per path and per rule",
			fixture: "exempt",
			code:    1,
			want:    []string{"NOTICE:2:10: home-path"},
		},
		{
			name: "binary files are skipped",
			files: map[string]string{
				"image.bin": "\x00\x01" + enDash + " " + homeAlex,
				"ok.txt":    "fine\n",
			},
			code: 0,
		},
		{
			name: "compiled programs are refused",
			files: map[string]string{
				"cmd/tool/tool":     "\x7fELF\x02\x01\x01\x00\x00\x00",
				"cmd/tool/tool.mac": "\xcf\xfa\xed\xfe\x07\x00\x00\x01",
				"cmd/tool/tool.exe": "MZ" + strings.Repeat("\x00", 0x3a) + "\x40\x00\x00\x00PE\x00\x00",
				"notes/mz.bin":      "MZ\x00 not a program, too short for a PE header",
			},
			code: 1,
			want: []string{
				"cmd/tool/tool:1:1: compiled",
				"cmd/tool/tool.exe:1:1: compiled",
				"cmd/tool/tool.mac:1:1: compiled",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			if tc.fixture != "" {
				copyTree(t, filepath.Join("testdata", tc.fixture), root)
			}
			writeFiles(t, root, tc.files)
			code, stdout, stderr := runIn(t, root)
			if code != tc.code {
				t.Fatalf("exit code = %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			if got := locations(stdout); !slices.Equal(got, tc.want) {
				t.Errorf("violations:\n got %q\nwant %q\nstdout:\n%s", got, tc.want, stdout)
			}
		})
	}
}

func TestRunListsGitFilesOnly(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), "git", append([]string{"-C", root}, args...)...) //nolint:gosec // fixed program, arguments from this test
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	writeFiles(t, root, map[string]string{
		".gitignore":       "/ignored/\n",
		"ignored/data.txt": "ignored " + enDash + " by git\n",
		"tracked.md":       "ok\n",
		"untracked.md":     "new " + enDash + " file\n",
	})
	git("add", ".gitignore", "tracked.md")
	code, stdout, stderr := runIn(t, root)
	if code != 1 {
		t.Fatalf("exit code = %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	want := []string{"untracked.md:1:5: dash"}
	if got := locations(stdout); !slices.Equal(got, want) {
		t.Errorf("violations = %q, want %q", got, want)
	}
}

func TestRunWalkSkipsIgnoredDirectories(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"tools/npm/node_modules/x/README.md": "x " + emDash + " y\n",
		".bin/tool":                          "x " + emDash + " y\n",
		".bothy/log":                         homeAlex + "\n",
		"README.md":                          "ok\n",
		"docs/bin/notes.md":                  "a bin directory below the root is scanned\n",
	})
	code, stdout, stderr := runIn(t, root)
	if code != 0 {
		t.Fatalf("exit code = %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "2 files clean") {
		t.Errorf("stdout = %q, want two files scanned", stdout)
	}
}

func TestRunRejectsBadConfiguration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		config string
		want   string
	}{
		{name: "exemption without reason", config: "allowed_email_domains: [example.com]\nexempt:\n  - path: x/\n", want: "needs a path and a reason"},
		{name: "unknown rule", config: "allowed_email_domains: [example.com]\nexempt:\n  - path: x/\n    rules: [dashes]\n    reason: r\n", want: "unknown rule"},
		{name: "unknown field", config: "allowed_email_domains: [example.com]\ndenied: [x]\n", want: "field denied not found"},
		{name: "no allowed domain", config: "denied_names: [x]\n", want: "allowed_email_domains is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			cfg := filepath.Join(root, "rules.yaml")
			writeFiles(t, root, map[string]string{"rules.yaml": tc.config})
			var stdout, stderr bytes.Buffer
			code := run(t.Context(), []string{"-root", root, "-config", cfg}, &stdout, &stderr)
			if code != 2 {
				t.Fatalf("exit code = %d, want 2; stderr: %s", code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), tc.want)
			}
		})
	}
}

// TestRepositoryConfigLoads keeps the real configuration valid.
func TestRepositoryConfigLoads(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(filepath.Join("..", "..", "textrules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newChecker(cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.DeniedNames) == 0 {
		t.Error("denied_names is empty")
	}
}

// TestOwnSourcePasses shows that the rule's source names no registry host and
// no home-directory path although it looks for them.
func TestOwnSourcePasses(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{"main.go": string(src)})
	if code, stdout, stderr := runIn(t, root); code != 0 {
		t.Fatalf("exit code = %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

func runIn(t *testing.T, root string) (int, string, string) {
	t.Helper()
	cfg, err := filepath.Abs(filepath.Join("testdata", "textrules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"-root", root, "-config", cfg}, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// locations keeps "path:line:col: rule" of each violation line.
func locations(stdout string) []string {
	var out []string
	for _, line := range strings.Split(stdout, "\n") {
		parts := strings.SplitN(line, ": ", 3)
		if len(parts) == 3 {
			out = append(out, parts[0]+": "+parts[1])
		}
	}
	return out
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	src := os.DirFS(from)
	err := fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		writeFiles(t, to, map[string]string{p: string(data)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
