// Command textrules enforces the text rules of spec 07 on every file of the
// repository: no en dash and no em dash, white-label examples (email
// addresses only at example domains, no placeholder names other than Alex,
// Sam and Robin, no home-directory paths), no package registry host names and
// no compiled program (build output committed by mistake).
//
// It lists files with `git ls-files` (tracked and untracked but not ignored,
// so it works before the first commit) and falls back to walking the tree
// when root is not inside a git work tree. Binary files are skipped, but a
// compiled program among them is a violation. The
// denylist of names, the allowed email domains and the exemptions (each with
// its reason) live in a YAML file, by default architecture/textrules.yaml
// under root.
//
// Usage:
//
//	go run ./architecture/cmd/textrules [-root DIR] [-config FILE]
//
// It prints one line per violation, path:line:column: rule: message, and
// exits 1 when there is any, 2 when it cannot run.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Rule identifiers, as printed and as named in exemptions.
const (
	ruleDash     = "dash"
	ruleEmail    = "email"
	ruleHomePath = "home-path"
	ruleRegistry = "registry-host"
	ruleName     = "name"
	ruleCompiled = "compiled"
)

var allRules = []string{ruleDash, ruleEmail, ruleHomePath, ruleRegistry, ruleName, ruleCompiled}

// compiledMagics open the compiled programs a build leaves behind (ELF, Mach-O in both byte
// orders and widths, Windows PE): a `go build` run in a command's folder once put a 30 MB
// binary into a commit, and the rules above skip binary files.
var compiledMagics = [][]byte{
	[]byte("\x7fELF"),
	{0xfe, 0xed, 0xfa, 0xce}, {0xce, 0xfa, 0xed, 0xfe},
	{0xfe, 0xed, 0xfa, 0xcf}, {0xcf, 0xfa, 0xed, 0xfe},
	[]byte("MZ"),
}

// compiled reports whether data is a compiled program; a PE file is "MZ" with a "PE\x00\x00"
// header where its offset at 0x3c points, so a text file starting with MZ is not one.
func compiled(data []byte) bool {
	for _, m := range compiledMagics {
		if !bytes.HasPrefix(data, m) {
			continue
		}
		if string(m) != "MZ" {
			return true
		}
		if len(data) < 0x40 {
			return false
		}
		off := int(data[0x3c]) | int(data[0x3d])<<8 | int(data[0x3e])<<16 | int(data[0x3f])<<24
		return off >= 0 && off+4 <= len(data) && string(data[off:off+4]) == "PE\x00\x00"
	}
	return false
}

// registryHosts are the package registry host names that no file may name.
// They are assembled from parts so that this file passes its own rule.
var registryHosts = []string{
	strings.Join([]string{"proxy", "golang", "org"}, "."),
	strings.Join([]string{"registry", "npmjs", "org"}, "."),
	strings.Join([]string{"registry", "yarnpkg", "com"}, "."),
	strings.Join([]string{"deb", "debian", "org"}, "."),
}

var (
	// emailRe finds address-shaped text; group 1 is the domain.
	emailRe = regexp.MustCompile(`[A-Za-z0-9._%+-]+@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})\b`)
	// homeRe finds absolute paths into a home directory (Linux, macOS and
	// the root user's). The path must not continue a longer path or a URL,
	// so an API route such as example.com/home/x is not reported.
	// The root user's home is spelled in two parts so this file passes.
	homeRe = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.~/-])(/(?:home|Users)/[A-Za-z0-9._-]+|/` + `root\b)`)
)

// config is the YAML file that tunes the rules.
type config struct {
	// DeniedNames are placeholder person and company names, matched as whole
	// words, case-insensitively, with any run of white space between words.
	DeniedNames []string `yaml:"denied_names"`
	// AllowedEmailDomains are the domains (and their subdomains) that
	// example addresses may use.
	AllowedEmailDomains []string `yaml:"allowed_email_domains"`
	// AllowedEmails are single addresses a tool insists on.
	AllowedEmails []string `yaml:"allowed_emails"`
	// Exempt lists paths where some rules do not apply, each with a reason.
	Exempt []exemption `yaml:"exempt"`
}

// exemption switches rules off for a path. A path ending in "/" is a
// directory prefix; a path without "/" matches that base name anywhere;
// anything else is a path.Match pattern against the slash path from root.
type exemption struct {
	Path   string   `yaml:"path"`
	Rules  []string `yaml:"rules"` // empty means every rule
	Reason string   `yaml:"reason"`
}

// violation is one finding.
type violation struct {
	Path    string
	Line    int
	Col     int
	Rule    string
	Message string
}

func (v violation) String() string {
	return fmt.Sprintf("%s:%d:%d: %s: %s", v.Path, v.Line, v.Col, v.Rule, v.Message)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("textrules", flag.ContinueOnError)
	fset.SetOutput(stderr)
	root := fset.String("root", ".", "repository root to scan")
	cfgPath := fset.String("config", filepath.Join("architecture", "textrules.yaml"),
		"rule configuration (YAML); a relative path is taken from -root")
	if err := fset.Parse(args); err != nil {
		return 2
	}
	if fset.NArg() != 0 {
		sayf(stderr, "textrules: unexpected arguments %q\n", fset.Args())
		return 2
	}
	p := *cfgPath
	if !filepath.IsAbs(p) {
		p = filepath.Join(*root, p)
	}
	cfg, err := loadConfig(p)
	if err != nil {
		sayf(stderr, "textrules: %v\n", err)
		return 2
	}
	chk, err := newChecker(cfg)
	if err != nil {
		sayf(stderr, "textrules: %v\n", err)
		return 2
	}
	files, err := listFiles(ctx, *root)
	if err != nil {
		sayf(stderr, "textrules: %v\n", err)
		return 2
	}
	var found []violation
	scanned := 0
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(*root, filepath.FromSlash(f)))
		if errors.Is(err, fs.ErrNotExist) {
			continue // tracked but deleted in the work tree
		}
		if err != nil {
			sayf(stderr, "textrules: %v\n", err)
			return 2
		}
		if isBinary(data) {
			if compiled(data) && !chk.exempt(f, ruleCompiled) {
				found = append(found, violation{Path: f, Line: 1, Col: 1, Rule: ruleCompiled,
					Message: "a compiled program is build output, not a source file; remove it and ignore it in .gitignore"})
			}
			continue
		}
		scanned++
		found = append(found, chk.check(f, data)...)
	}
	for _, v := range found {
		sayln(stdout, v)
	}
	if len(found) > 0 {
		sayf(stderr, "textrules: %d violation(s) in %d file(s) scanned; see spec 07 rules 6 and 7 "+
			"(use a hyphen; example.com and the people Alex, Sam and Robin; no home-directory paths, registry hosts or build output)\n",
			len(found), scanned)
		return 1
	}
	sayf(stdout, "textrules: %d files clean\n", scanned)
	return 0
}

// loadConfig reads and validates the rule configuration.
func loadConfig(p string) (config, error) {
	var cfg config
	data, err := os.ReadFile(p) //nolint:gosec // the configuration is named on the command line by make or its operator
	if err != nil {
		return cfg, fmt.Errorf("read config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("parse config %s: %w", p, err)
	}
	if len(cfg.AllowedEmailDomains) == 0 {
		return cfg, fmt.Errorf("config %s: allowed_email_domains is empty", p)
	}
	for _, e := range cfg.Exempt {
		if e.Path == "" || strings.TrimSpace(e.Reason) == "" {
			return cfg, fmt.Errorf("config %s: every exemption needs a path and a reason (%q)", p, e.Path)
		}
		for _, r := range e.Rules {
			if !contains(allRules, r) {
				return cfg, fmt.Errorf("config %s: exemption %q names unknown rule %q (known: %s)",
					p, e.Path, r, strings.Join(allRules, ", "))
			}
		}
		if _, err := path.Match(e.Path, ""); err != nil {
			return cfg, fmt.Errorf("config %s: exemption %q: %w", p, e.Path, err)
		}
	}
	return cfg, nil
}

// checker holds the compiled rules.
type checker struct {
	cfg     config
	namesRe *regexp.Regexp // nil when no names are denied
}

func newChecker(cfg config) (*checker, error) {
	c := &checker{cfg: cfg}
	if len(cfg.DeniedNames) > 0 {
		alts := make([]string, 0, len(cfg.DeniedNames))
		for _, n := range cfg.DeniedNames {
			words := strings.Fields(n)
			if len(words) == 0 {
				return nil, errors.New("config: empty denied name")
			}
			for i, w := range words {
				words[i] = regexp.QuoteMeta(w)
			}
			alts = append(alts, strings.Join(words, `\s+`))
		}
		re, err := regexp.Compile(`(?i)\b(?:` + strings.Join(alts, "|") + `)\b`)
		if err != nil {
			return nil, fmt.Errorf("compile denied names: %w", err)
		}
		c.namesRe = re
	}
	return c, nil
}

// exempt reports whether rule is switched off for the slash path p.
func (c *checker) exempt(p, rule string) bool {
	for _, e := range c.cfg.Exempt {
		if len(e.Rules) > 0 && !contains(e.Rules, rule) {
			continue
		}
		if matchPath(e.Path, p) {
			return true
		}
	}
	return false
}

func matchPath(pattern, p string) bool {
	switch {
	case strings.HasSuffix(pattern, "/"):
		return strings.HasPrefix(p, pattern)
	case !strings.Contains(pattern, "/"):
		ok, _ := path.Match(pattern, path.Base(p))
		return ok
	default:
		ok, _ := path.Match(pattern, p)
		return ok
	}
}

// check returns the violations in one file's content.
func (c *checker) check(p string, data []byte) []violation {
	on := map[string]bool{}
	for _, r := range allRules {
		on[r] = !c.exempt(p, r)
	}
	var out []violation
	add := func(line []byte, lineNo, byteOff int, rule, msg string) {
		out = append(out, violation{
			Path: p, Line: lineNo, Col: utf8.RuneCount(line[:byteOff]) + 1, Rule: rule, Message: msg,
		})
	}
	for i, line := range bytes.Split(data, []byte("\n")) {
		n := i + 1
		if on[ruleDash] {
			for off, r := range string(line) {
				switch r {
				case '\u2013':
					add(line, n, off, ruleDash, "en dash (U+2013); use a hyphen")
				case '\u2014':
					add(line, n, off, ruleDash, "em dash (U+2014); use a hyphen")
				}
			}
		}
		if on[ruleEmail] {
			for _, m := range emailRe.FindAllSubmatchIndex(line, -1) {
				addr := string(line[m[0]:m[1]])
				domain := strings.ToLower(string(line[m[2]:m[3]]))
				if c.emailAllowed(addr, domain) {
					continue
				}
				add(line, n, m[0], ruleEmail, fmt.Sprintf("address %q is not at %s",
					addr, strings.Join(c.cfg.AllowedEmailDomains, ", ")))
			}
		}
		if on[ruleHomePath] {
			for _, m := range homeRe.FindAllSubmatchIndex(line, -1) {
				add(line, n, m[2], ruleHomePath, fmt.Sprintf("home-directory path %q", line[m[2]:m[3]]))
			}
		}
		if on[ruleRegistry] {
			lower := bytes.ToLower(line)
			for _, h := range registryHosts {
				for from := 0; ; {
					k := bytes.Index(lower[from:], []byte(h))
					if k < 0 {
						break
					}
					add(line, n, from+k, ruleRegistry, fmt.Sprintf("package registry host %q", h))
					from += k + len(h)
				}
			}
		}
		if on[ruleName] && c.namesRe != nil {
			for _, m := range c.namesRe.FindAllIndex(line, -1) {
				add(line, n, m[0], ruleName, fmt.Sprintf("placeholder name %q; use Alex, Sam or Robin", line[m[0]:m[1]]))
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Col < out[j].Col
	})
	return out
}

func (c *checker) emailAllowed(addr, domain string) bool {
	for _, a := range c.cfg.AllowedEmails {
		if strings.EqualFold(a, addr) {
			return true
		}
	}
	for _, d := range c.cfg.AllowedEmailDomains {
		d = strings.ToLower(d)
		if domain == d || strings.HasSuffix(domain, "."+d) {
			return true
		}
	}
	return false
}

// isBinary uses git's own heuristic: a NUL byte in the first 8000 bytes.
func isBinary(data []byte) bool {
	return bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0
}

// listFiles returns the slash paths, relative to root, of the files to scan.
func listFiles(ctx context.Context, root string) ([]string, error) {
	//nolint:gosec // the program is fixed; root is only the directory git lists
	cmd := exec.CommandContext(ctx, "git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		// Not a work tree (an exported tarball, a fixture directory): walk it.
		return walkFiles(root)
	}
	seen := map[string]bool{}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" || seen[f] {
			continue
		}
		seen[f] = true
		info, err := os.Lstat(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted, a symlink or a submodule
		}
		files = append(files, f)
	}
	sort.Strings(files)
	return files, nil
}

// The walking fallback never enters what .gitignore keeps out of git
// ls-files: version control and installed npm packages anywhere, and at the
// root the tool binaries, build output, coverage files and local data.
var (
	skipAnywhere = map[string]bool{".git": true, "node_modules": true}
	skipAtRoot   = map[string]bool{".bin": true, "bin": true, ".bothy": true, ".coverage": true}
)

func walkFiles(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return fmt.Errorf("relative path of %s: %w", p, err)
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (skipAnywhere[d.Name()] || skipAtRoot[rel]) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", root, err)
	}
	sort.Strings(files)
	return files, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
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
