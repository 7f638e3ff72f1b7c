// Command coverfloor fails when a package's statement coverage is below the
// floor set for it, so that `make check` holds the coverage of domain, app
// and kernel packages where spec 07 wants it.
//
// It reads a Go coverage profile (go test -coverprofile) and a YAML file of
// floors, by default architecture/coverage-floors.yaml:
//
//	floors:
//	  "**/domain": 85
//	  "internal/kernel/**": 80
//
// A pattern is matched against the trailing segments of a package's import
// path: "*" stands for one segment, "**" for any number of segments
// (including none), and any other segment is a path.Match pattern. When
// several patterns match a package, the highest floor applies. Packages
// without statements are ignored. A package that is in the profile with no
// covered statement (since Go 1.22 `go test ./...` lists packages without
// tests too) counts as 0%.
//
// Usage:
//
//	go run ./architecture/cmd/coverfloor -profile .coverage/profile.out [-floors FILE]
//
// It prints a table of every package that a floor applies to and exits 1 when
// any is below its floor, 2 when it cannot run.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"go.yaml.in/yaml/v3"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("coverfloor", flag.ContinueOnError)
	fset.SetOutput(stderr)
	profilePath := fset.String("profile", filepath.Join(".coverage", "profile.out"), "Go coverage profile")
	floorsPath := fset.String("floors", filepath.Join("architecture", "coverage-floors.yaml"), "coverage floors (YAML)")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	if fset.NArg() != 0 {
		sayf(stderr, "coverfloor: unexpected arguments %q\n", fset.Args())
		return 2
	}
	floors, err := loadFloors(*floorsPath)
	if err != nil {
		sayf(stderr, "coverfloor: %v\n", err)
		return 2
	}
	f, err := os.Open(*profilePath)
	if errors.Is(err, fs.ErrNotExist) {
		sayf(stderr, "coverfloor: no coverage profile at %s; run `make test` first\n", *profilePath)
		return 2
	}
	if err != nil {
		sayf(stderr, "coverfloor: %v\n", err)
		return 2
	}
	defer f.Close() //nolint:errcheck // read-only file; a close error changes nothing
	pkgs, err := parseProfile(f)
	if err != nil {
		sayf(stderr, "coverfloor: %s: %v\n", *profilePath, err)
		return 2
	}
	results, unused := evaluate(pkgs, floors)
	below := report(stdout, results, unused)
	if below > 0 {
		sayf(stderr, "coverfloor: %d package(s) below their coverage floor; add tests (floors are never lowered to pass)\n", below)
		return 1
	}
	return 0
}

// floor is one pattern of the floors file.
type floor struct {
	Pattern string
	Percent float64
}

type floorsFile struct {
	Floors map[string]float64 `yaml:"floors"`
}

// loadFloors reads the floors file, sorted by pattern for stable output.
func loadFloors(p string) ([]floor, error) {
	data, err := os.ReadFile(p) //nolint:gosec // the floors file is named on the command line by make or its operator
	if err != nil {
		return nil, fmt.Errorf("read floors: %w", err)
	}
	var ff floorsFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&ff); err != nil {
		return nil, fmt.Errorf("parse floors %s: %w", p, err)
	}
	if len(ff.Floors) == 0 {
		return nil, fmt.Errorf("floors %s: no floor defined", p)
	}
	out := make([]floor, 0, len(ff.Floors))
	for pat, pct := range ff.Floors {
		if pct < 0 || pct > 100 {
			return nil, fmt.Errorf("floors %s: %q: %v is not a percentage", p, pat, pct)
		}
		for _, seg := range strings.Split(pat, "/") {
			if seg == "" {
				return nil, fmt.Errorf("floors %s: %q has an empty segment", p, pat)
			}
			if _, err := path.Match(seg, ""); err != nil {
				return nil, fmt.Errorf("floors %s: %q: %w", p, pat, err)
			}
		}
		out = append(out, floor{Pattern: pat, Percent: pct})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pattern < out[j].Pattern })
	return out, nil
}

// pkgCover is the statement coverage of one package.
type pkgCover struct {
	Stmts   int
	Covered int
}

// Percent is the share of covered statements, 0 to 100.
func (c pkgCover) Percent() float64 {
	if c.Stmts == 0 {
		return 0
	}
	return 100 * float64(c.Covered) / float64(c.Stmts)
}

// parseProfile aggregates a coverage profile per package. A block that
// appears more than once (several test binaries covering one package) counts
// once, as covered when any of its counts is above zero.
func parseProfile(r io.Reader) (map[string]pkgCover, error) {
	type block struct {
		stmts   int
		covered bool
	}
	blocks := map[string]*block{} // "file:range" -> block
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	lineNo, modes := 0, 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "mode: ") {
			modes++
			continue
		}
		if modes == 0 {
			return nil, fmt.Errorf("line %d: profile does not start with a mode line", lineNo)
		}
		// file.go:12.34,15.2 3 1 (the file name may contain spaces, so split from the right)
		fields := strings.Fields(line)
		if len(fields) < 3 {
			return nil, fmt.Errorf("line %d: malformed block %q", lineNo, line)
		}
		stmts, err1 := strconv.Atoi(fields[len(fields)-2])
		count, err2 := strconv.ParseInt(fields[len(fields)-1], 10, 64)
		loc := strings.Join(fields[:len(fields)-2], " ")
		colon := strings.LastIndex(loc, ":")
		if err1 != nil || err2 != nil || colon <= 0 || stmts < 0 {
			return nil, fmt.Errorf("line %d: malformed block %q", lineNo, line)
		}
		b, ok := blocks[loc]
		if !ok {
			b = &block{stmts: stmts}
			blocks[loc] = b
		}
		b.covered = b.covered || count > 0
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read profile: %w", err)
	}
	if modes == 0 {
		return nil, errors.New("empty profile (no mode line)")
	}
	pkgs := map[string]pkgCover{}
	for loc, b := range blocks {
		file := loc[:strings.LastIndex(loc, ":")]
		pkg := path.Dir(file)
		c := pkgs[pkg]
		c.Stmts += b.stmts
		if b.covered {
			c.Covered += b.stmts
		}
		pkgs[pkg] = c
	}
	return pkgs, nil
}

// result is the verdict for one package a floor applies to.
type result struct {
	Package string
	Cover   pkgCover
	Floor   floor
}

// Below reports whether the package misses its floor, computed exactly
// rather than from a rounded percentage.
func (r result) Below() bool {
	return float64(r.Cover.Covered)*100 < r.Floor.Percent*float64(r.Cover.Stmts)
}

// evaluate applies the floors; it also returns the patterns that matched no
// package with statements.
func evaluate(pkgs map[string]pkgCover, floors []floor) ([]result, []string) {
	used := map[string]bool{}
	var results []result
	for pkg, c := range pkgs {
		if c.Stmts == 0 {
			continue
		}
		var best *floor
		for i := range floors {
			if !matchSuffix(strings.Split(floors[i].Pattern, "/"), strings.Split(pkg, "/")) {
				continue
			}
			used[floors[i].Pattern] = true
			if best == nil || floors[i].Percent > best.Percent {
				best = &floors[i]
			}
		}
		if best != nil {
			results = append(results, result{Package: pkg, Cover: c, Floor: *best})
		}
	}
	sort.Slice(results, func(i, j int) bool { return results[i].Package < results[j].Package })
	var unused []string
	for _, f := range floors {
		if !used[f.Pattern] {
			unused = append(unused, f.Pattern)
		}
	}
	return results, unused
}

// matchSuffix reports whether the pattern matches some trailing run of the
// path's segments.
func matchSuffix(pat, segs []string) bool {
	for i := 0; i <= len(segs); i++ {
		if matchSegs(pat, segs[i:]) {
			return true
		}
	}
	return false
}

func matchSegs(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if matchSegs(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	if ok, _ := path.Match(pat[0], segs[0]); !ok {
		return false
	}
	return matchSegs(pat[1:], segs[1:])
}

// report prints the table and returns how many packages are below.
func report(w io.Writer, results []result, unused []string) int {
	below := 0
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	sayln(tw, "package\tstatements\tcovered\tfloor\tpattern\tresult")
	for _, r := range results {
		verdict := "ok"
		if r.Below() {
			verdict = "BELOW"
			below++
		}
		sayf(tw, "%s\t%d\t%s\t%.1f%%\t%s\t%s\n",
			r.Package, r.Cover.Stmts, percent(r), r.Floor.Percent, r.Floor.Pattern, verdict)
	}
	_ = tw.Flush() // writes to stdout; nothing useful to do on failure
	for _, p := range unused {
		sayf(w, "coverfloor: pattern %q matches no package with statements yet\n", p)
	}
	sayf(w, "coverfloor: %d package(s) checked, %d below their floor\n", len(results), below)
	return below
}

// percent shows the coverage rounded to one decimal like `go test -cover`,
// with two decimals when rounding would hide that the package is below.
func percent(r result) string {
	p := r.Cover.Percent()
	if r.Below() && math.Round(p*10)/10 >= r.Floor.Percent {
		return fmt.Sprintf("%.2f%%", math.Floor(p*100)/100)
	}
	return fmt.Sprintf("%.1f%%", p)
}

// sayf writes command output; a failed write to stdout or stderr leaves
// nothing better to do, so its error is dropped on purpose.
func sayf(w io.Writer, format string, a ...any) {
	_, _ = fmt.Fprintf(w, format, a...)
}

// sayln is sayf with fmt.Fprintln's formatting.
func sayln(w io.Writer, a ...any) {
	_, _ = fmt.Fprintln(w, a...)
}
