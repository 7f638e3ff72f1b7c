package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		profile string
		floors  string
		code    int
		rows    []string // "package covered result" of every table row, in order
		stdout  string
		stderr  string
	}{
		{
			name:    "every package at or above its floor",
			profile: "pass.out",
			code:    0,
			rows: []string{
				"bothy.example.com/server/internal/chat/app 100.0% ok",
				"bothy.example.com/server/internal/chat/domain 100.0% ok",
				"bothy.example.com/server/internal/kernel/ids 100.0% ok",
			},
			stdout: `pattern "internal/never/**" matches no package`,
		},
		{
			name:    "below the floor",
			profile: "below.out",
			code:    1,
			rows: []string{
				"bothy.example.com/server/internal/chat/app 100.0% ok",
				"bothy.example.com/server/internal/chat/domain 40.0% BELOW",
				"bothy.example.com/server/internal/kernel/ids 100.0% ok",
			},
			stdout: "3 package(s) checked, 1 below their floor",
			stderr: "1 package(s) below their coverage floor",
		},
		{
			name:    "blocks reported twice count once",
			profile: "merged.out",
			code:    0,
			rows:    []string{"bothy.example.com/server/internal/kernel/tx 80.0% ok"},
		},
		{
			name:    "exactly at the floor passes, just under fails",
			profile: "boundary.out",
			code:    1,
			rows: []string{
				"bothy.example.com/server/internal/sync/app 84.5% BELOW",
				"bothy.example.com/server/internal/sync/domain 85.0% ok",
			},
		},
		{name: "malformed profile", profile: "malformed.out", code: 2, stderr: "malformed block"},
		{name: "missing profile", profile: "absent.out", code: 2, stderr: "run `make test` first"},
		{name: "missing floors", profile: "pass.out", floors: "absent.yaml", code: 2, stderr: "read floors"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			floors := tc.floors
			if floors == "" {
				floors = "floors.yaml"
			}
			var stdout, stderr bytes.Buffer
			code := run([]string{
				"-profile", filepath.Join("testdata", tc.profile),
				"-floors", filepath.Join("testdata", floors),
			}, &stdout, &stderr)
			if code != tc.code {
				t.Fatalf("exit code = %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout.String(), stderr.String())
			}
			if tc.rows != nil {
				if got := rows(stdout.String()); !slices.Equal(got, tc.rows) {
					t.Errorf("rows:\n got %q\nwant %q\nstdout:\n%s", got, tc.rows, stdout.String())
				}
			}
			if !strings.Contains(stdout.String(), tc.stdout) {
				t.Errorf("stdout = %q, want it to contain %q", stdout.String(), tc.stdout)
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), tc.stderr)
			}
		})
	}
}

// rows keeps package, coverage and verdict of every table row.
func rows(stdout string) []string {
	var out []string
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		if len(f) == 6 && f[0] != "package" {
			out = append(out, f[0]+" "+f[2]+" "+f[5])
		}
	}
	return out
}

func TestMatchSuffix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern string
		pkg     string
		want    bool
	}{
		{"**/domain", "bothy.example.com/server/internal/chat/domain", true},
		{"**/domain", "bothy.example.com/server/internal/chat/domainx", false},
		{"**/domain", "bothy.example.com/server/internal/chat/domain/events", false},
		{"domain", "bothy.example.com/server/internal/chat/domain", true},
		{"internal/kernel/**", "bothy.example.com/server/internal/kernel", true},
		{"internal/kernel/**", "bothy.example.com/server/internal/kernel/config", true},
		{"internal/kernel/**", "bothy.example.com/server/internal/kernel/tx/internal/q", true},
		{"internal/kernel/**", "bothy.example.com/server/internal/kernelx/config", false},
		{"internal/*/app", "bothy.example.com/server/internal/chat/app", true},
		{"internal/*/app", "bothy.example.com/server/internal/chat/sub/app", false},
		{"internal/*/app", "bothy.example.com/server/internal/app", false},
		{"internal/**/app", "bothy.example.com/server/internal/chat/sub/app", true},
		{"chat*/domain", "bothy.example.com/server/internal/chatx/domain", true},
	}
	for _, tc := range tests {
		t.Run(tc.pattern+" "+tc.pkg, func(t *testing.T) {
			t.Parallel()
			got := matchSuffix(strings.Split(tc.pattern, "/"), strings.Split(tc.pkg, "/"))
			if got != tc.want {
				t.Errorf("matchSuffix(%q, %q) = %v, want %v", tc.pattern, tc.pkg, got, tc.want)
			}
		})
	}
}

func TestPercentNeverHidesABelow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		covered, stmts int
		floor          float64
		want           string
	}{
		{95, 107, 80, "88.8%"},      // rounded like go test -cover
		{8496, 10000, 85, "84.96%"}, // 85.0% would hide the failure
		{8450, 10000, 85, "84.5%"},
		{17, 20, 85, "85.0%"},
	}
	for _, tc := range tests {
		r := result{Cover: pkgCover{Stmts: tc.stmts, Covered: tc.covered}, Floor: floor{Percent: tc.floor}}
		if got := percent(r); got != tc.want {
			t.Errorf("percent(%d/%d, floor %v) = %s, want %s", tc.covered, tc.stmts, tc.floor, got, tc.want)
		}
	}
}

func TestHighestFloorApplies(t *testing.T) {
	t.Parallel()
	pkgs := map[string]pkgCover{
		"bothy.example.com/server/internal/kernel/domain": {Stmts: 100, Covered: 82},
		"bothy.example.com/server/internal/kernel/empty":  {Stmts: 0, Covered: 0},
	}
	floors := []floor{{Pattern: "**/domain", Percent: 85}, {Pattern: "internal/kernel/**", Percent: 80}}
	results, unused := evaluate(pkgs, floors)
	if len(results) != 1 || results[0].Floor.Pattern != "**/domain" || !results[0].Below() {
		t.Fatalf("results = %+v, want one result under **/domain, below", results)
	}
	if len(unused) != 0 {
		t.Errorf("unused = %q, want none", unused)
	}
}

func TestRejectsBadFloors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml, want string
	}{
		{"not a percentage", "floors:\n  \"**/app\": 120\n", "not a percentage"},
		{"empty segment", "floors:\n  \"internal//app\": 80\n", "empty segment"},
		{"bad glob", "floors:\n  \"internal/[/app\": 80\n", "syntax error"},
		{"no floors", "floors: {}\n", "no floor defined"},
		{"unknown field", "floor:\n  \"**/app\": 80\n", "field floor not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "floors.yaml")
			if err := os.WriteFile(p, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := loadFloors(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("loadFloors error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestRepositoryFloorsLoad keeps the real floors file valid.
func TestRepositoryFloorsLoad(t *testing.T) {
	t.Parallel()
	floors, err := loadFloors(filepath.Join("..", "..", "coverage-floors.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^\*\*/(domain|app)$`)
	n := 0
	for _, f := range floors {
		if want.MatchString(f.Pattern) {
			n++
		}
	}
	if n != 2 {
		t.Errorf("floors %+v: want a floor for **/domain and **/app", floors)
	}
}
