// Command limitcheck enforces ADR 0007's rule that every limit, timeout and
// threshold of the server is a named configuration key, and that code and
// docs name the key, never the number behind it.
//
// It reads every key the server registers (the config.Define calls of the
// non-test Go files under services/server/internal: name, kind, default and
// the module that defines it) and reports, as path:line: rule: message:
//
//   - limit-const: a package-level or local constant or variable whose name
//     reads as a limit (one of its camel-case words is in limitWords: max,
//     min, limit, timeout, size, parallelism, ...) and whose value is a
//     numeric constant expression (a number, or a product or shift of numbers
//     and time units such as 30 * time.Second), in non-test, non-generated Go
//     code under services/server/internal. Such a constant must become a key,
//     or be listed in the allowlist (architecture/limitcheck.yaml) with why it
//     is not a limit: a protocol constant, a format width, a buffer's initial
//     capacity. An entry that matches nothing is reported too, so the list
//     stays exact.
//   - key-default: in the module that defines a key (the first directory under
//     internal; a kernel key's module is kernel and wire, the composition root
//     that reads it), a limit-named constant whose value equals the key's
//     default (the key exists: read it), or a number equal to a default used
//     as an operand of <, <=, > or >= (a bound checked against the literal
//     instead of the key). Numbers from -2 to 2 are ignored in comparisons:
//     they are emptiness and sign tests far more often than limits.
//     Allowlisted constants are not exempt from this rule.
//   - key-number: a registered key followed by its number, in Markdown (every
//     *.md file of the repository outside tools/, node_modules/ and .bin/; in
//     docs/operations/configuration.md only the meaning cell of the key table,
//     whose default column is the one place defaults are written) and in the
//     comments of non-test Go files under services/server: the key (optionally
//     in backticks) followed by "(", ",", ":", "=", "is" or "of" and a number,
//     optionally after "default", "defaults to" or "by default" (for example
//     "`http.max_body_bytes` (1 MiB)" or "gateway.batch_window, 15 ms"), or a
//     number directly followed by the key in parentheses ("16 KiB
//     (`chat.max_message_bytes`)").
//
// Usage:
//
//	go run ./architecture/cmd/limitcheck [-root DIR] [-allow FILE]
//
// It exits 1 when there is a violation, 2 when it cannot run.
package main

import (
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// Rule identifiers, as printed.
const (
	ruleLimitConst = "limit-const"
	ruleKeyDefault = "key-default"
	ruleKeyNumber  = "key-number"
)

// limitWords are the camel-case words that make a constant's name read as a limit.
var limitWords = map[string]bool{
	"max": true, "min": true, "limit": true, "limits": true, "timeout": true, "interval": true,
	"size": true, "len": true, "bytes": true, "runes": true, "parallelism": true, "concurrency": true,
	"buffer": true, "ttl": true, "window": true, "threshold": true, "entropy": true, "files": true,
	"sections": true, "channels": true, "depth": true, "retry": true, "budget": true, "capacity": true,
	"prealloc": true, "pieces": true, "delay": true, "backoff": true,
}

// serverDir is where the server's Go code lives, relative to the root.
const serverDir = "services/server"

// internalDir is where the modules live.
const internalDir = serverDir + "/internal"

// configDoc is the key table; only its meaning cells are scanned.
const configDoc = "docs/operations/configuration.md"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// key is one registered configuration key.
type key struct {
	name, kind, def string
	pkg             string // slash directory of the defining file, relative to root
	pos             string
}

// allowEntry is one constant that reads as a limit but is not one.
type allowEntry struct {
	Path string `yaml:"path"`
	Name string `yaml:"name"`
	Why  string `yaml:"why"`
	used bool
}

type allowFile struct {
	NotLimits []*allowEntry `yaml:"not_limits"`
}

// violation is one finding, printed path:line: rule: message.
type violation struct {
	path string
	line int
	rule string
	msg  string
}

func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("limitcheck", flag.ContinueOnError)
	fl.SetOutput(stderr)
	root := fl.String("root", ".", "repository root")
	allowPath := fl.String("allow", "", "allowlist of constants that are not limits (default architecture/limitcheck.yaml under root)")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() > 0 {
		_, _ = fmt.Fprintf(stderr, "limitcheck: unexpected arguments %q\n", fl.Args())
		return 2
	}
	if *allowPath == "" {
		*allowPath = filepath.Join(*root, "architecture", "limitcheck.yaml")
	}
	allow, err := readAllow(*allowPath)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "limitcheck: %v\n", err)
		return 2
	}
	c := &checker{root: *root, fset: token.NewFileSet(), allow: allow}
	if err := c.loadGo(); err != nil {
		_, _ = fmt.Fprintf(stderr, "limitcheck: %v\n", err)
		return 2
	}
	if len(c.keys) == 0 {
		_, _ = fmt.Fprintf(stderr, "limitcheck: no config.Define call found under %s\n", filepath.Join(*root, internalDir))
		return 2
	}
	c.checkGo()
	if err := c.checkMarkdown(); err != nil {
		_, _ = fmt.Fprintf(stderr, "limitcheck: %v\n", err)
		return 2
	}
	for _, e := range allow.NotLimits {
		if !e.used {
			c.report(filepath.ToSlash(relOr(*root, *allowPath)), 0, ruleLimitConst,
				fmt.Sprintf("allowlist entry %s %s matches no limit-named constant; remove it", e.Path, e.Name))
		}
	}
	sort.Slice(c.out, func(i, j int) bool {
		a, b := c.out[i], c.out[j]
		if a.path != b.path {
			return a.path < b.path
		}
		return a.line < b.line
	})
	for _, v := range c.out {
		_, _ = fmt.Fprintf(stdout, "%s:%d: %s: %s\n", v.path, v.line, v.rule, v.msg)
	}
	if len(c.out) > 0 {
		_, _ = fmt.Fprintf(stdout, "limitcheck: %d violation(s): every limit is a named configuration key, and code and docs name the key, never its number (ADR 0007)\n", len(c.out))
		return 1
	}
	_, _ = fmt.Fprintf(stdout, "limitcheck: %d keys; no limit in code outside a key, no number beside a key\n", len(c.keys))
	return 0
}

func relOr(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

func readAllow(p string) (*allowFile, error) {
	data, err := os.ReadFile(p) //nolint:gosec // the operator names the allowlist
	if err != nil {
		return nil, err
	}
	var a allowFile
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&a); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	for _, e := range a.NotLimits {
		if e.Path == "" || e.Name == "" || strings.TrimSpace(e.Why) == "" {
			return nil, fmt.Errorf("%s: every entry needs path, name and why (%s %s)", p, e.Path, e.Name)
		}
	}
	return &a, nil
}

type goFile struct {
	rel  string // slash path relative to root
	test bool
	ast  *ast.File
}

type checker struct {
	root  string
	fset  *token.FileSet
	allow *allowFile
	files []goFile
	keys  []key
	pats  []*regexp.Regexp
	out   []violation
}

func (c *checker) report(path string, line int, rule, msg string) {
	c.out = append(c.out, violation{path: path, line: line, rule: rule, msg: msg})
}

// inScope reports whether code of package directory dir is where key k's default may not
// appear as a limit: the package that defines the key, and for the kernel's own keys
// (kernel/config) the composition root that reads them.
func inScope(k key, dir string) bool {
	return dir == k.pkg || (k.pkg == internalDir+"/kernel/config" && dir == internalDir+"/wire")
}

func (c *checker) loadGo() error {
	base := filepath.Join(c.root, serverDir)
	return filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, ".gen.go") {
			return nil
		}
		rel := filepath.ToSlash(relOr(c.root, p))
		f, err := parser.ParseFile(c.fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		gf := goFile{rel: rel, test: strings.HasSuffix(p, "_test.go"), ast: f}
		c.files = append(c.files, gf)
		if !gf.test {
			c.collectKeys(gf)
		}
		return nil
	})
}

// collectKeys records the config.Define calls of a file (Define inside package config).
func (c *checker) collectKeys(f goFile) {
	ast.Inspect(f.ast, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) < 3 {
			return true
		}
		isDefine := false
		switch fn := call.Fun.(type) {
		case *ast.SelectorExpr:
			x, ok := fn.X.(*ast.Ident)
			isDefine = ok && x.Name == "config" && fn.Sel.Name == "Define"
		case *ast.Ident:
			isDefine = fn.Name == "Define" && f.ast.Name.Name == "config"
		}
		if !isDefine {
			return true
		}
		name, ok1 := stringLit(call.Args[0])
		def, ok2 := stringLit(call.Args[2])
		if !ok1 || !ok2 {
			return true
		}
		kind := ""
		switch k := call.Args[1].(type) {
		case *ast.SelectorExpr:
			kind = k.Sel.Name
		case *ast.Ident:
			kind = k.Name
		}
		pos := c.fset.Position(call.Pos())
		c.keys = append(c.keys, key{name: name, kind: kind, def: def, pkg: path.Dir(f.rel), pos: fmt.Sprintf("%s:%d", f.rel, pos.Line)})
		return true
	})
}

func stringLit(e ast.Expr) (string, bool) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(bl.Value)
	return s, err == nil
}

// number is the value of a numeric constant expression; dur marks one built with time units.
type number struct {
	v   float64
	dur bool
}

// keyValue is a key's default as a number, false for a key that is no number.
func keyValue(k key) (number, bool) {
	switch k.kind {
	case "KindInt", "KindBytes":
		n, err := strconv.ParseInt(k.def, 10, 64)
		return number{v: float64(n)}, err == nil
	case "KindDuration":
		d, err := time.ParseDuration(k.def)
		return number{v: float64(d), dur: true}, err == nil && d != 0
	}
	return number{}, false
}

var timeUnits = map[string]time.Duration{
	"Nanosecond": time.Nanosecond, "Microsecond": time.Microsecond, "Millisecond": time.Millisecond,
	"Second": time.Second, "Minute": time.Minute, "Hour": time.Hour,
}

// eval evaluates a numeric constant expression: numbers, time units, parentheses, unary minus
// and the operators * / + - << >>.
func eval(e ast.Expr) (number, bool) {
	switch x := e.(type) {
	case *ast.BasicLit:
		if x.Kind != token.INT && x.Kind != token.FLOAT {
			return number{}, false
		}
		s := strings.ReplaceAll(x.Value, "_", "")
		if x.Kind == token.INT {
			n, err := strconv.ParseInt(s, 0, 64)
			return number{v: float64(n)}, err == nil
		}
		f, err := strconv.ParseFloat(s, 64)
		return number{v: f}, err == nil
	case *ast.ParenExpr:
		return eval(x.X)
	case *ast.UnaryExpr:
		if x.Op != token.SUB {
			return number{}, false
		}
		n, ok := eval(x.X)
		n.v = -n.v
		return n, ok
	case *ast.SelectorExpr:
		pkg, ok := x.X.(*ast.Ident)
		if !ok || pkg.Name != "time" {
			return number{}, false
		}
		d, ok := timeUnits[x.Sel.Name]
		return number{v: float64(d), dur: true}, ok
	case *ast.CallExpr: // a conversion such as time.Duration(5)
		if len(x.Args) != 1 {
			return number{}, false
		}
		if sel, ok := x.Fun.(*ast.SelectorExpr); ok {
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "time" && sel.Sel.Name == "Duration" {
				n, ok := eval(x.Args[0])
				n.dur = true
				return n, ok
			}
		}
		return number{}, false
	case *ast.BinaryExpr:
		a, ok1 := eval(x.X)
		b, ok2 := eval(x.Y)
		if !ok1 || !ok2 {
			return number{}, false
		}
		r := number{dur: a.dur || b.dur}
		switch x.Op {
		case token.MUL:
			r.v = a.v * b.v
		case token.QUO:
			if b.v == 0 {
				return number{}, false
			}
			r.v = a.v / b.v
		case token.ADD:
			r.v = a.v + b.v
		case token.SUB:
			r.v = a.v - b.v
		case token.SHL:
			r.v = a.v * float64(uint64(1)<<uint(b.v))
		case token.SHR:
			r.v = a.v / float64(uint64(1)<<uint(b.v))
		default:
			return number{}, false
		}
		return r, true
	}
	return number{}, false
}

// limitNamed reports whether a name's camel-case (or snake-case) words include a limit word.
func limitNamed(name string) bool {
	for _, w := range words(name) {
		if limitWords[w] {
			return true
		}
	}
	return false
}

func words(name string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case r == '_':
			flush()
			continue
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))):
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

func same(a, b number) bool {
	if a.dur != b.dur {
		return false
	}
	d := a.v - b.v
	return d < 1e-9 && d > -1e-9
}

// checkGo applies limit-const and key-default to the non-test Go files of the modules.
func (c *checker) checkGo() {
	allowed := map[string]*allowEntry{}
	for _, e := range c.allow.NotLimits {
		allowed[e.Path+"\x00"+e.Name] = e
	}
	for _, f := range c.files {
		if f.test {
			continue
		}
		c.checkComments(f)
		if !strings.HasPrefix(f.rel, internalDir+"/") || strings.HasSuffix(path.Dir(f.rel), "test") {
			continue // outside the modules, or a test-support package (pgtest, wiretest, ...)
		}
		var scoped []key
		for _, k := range c.keys {
			if inScope(k, path.Dir(f.rel)) {
				scoped = append(scoped, k)
			}
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.ValueSpec:
				for i, id := range x.Names {
					if i >= len(x.Values) || id.Name == "_" || !limitNamed(id.Name) {
						continue
					}
					val, ok := eval(x.Values[i])
					if !ok {
						continue
					}
					line := c.fset.Position(id.Pos()).Line
					if e := allowed[f.rel+"\x00"+id.Name]; e != nil {
						e.used = true
						continue
					}
					if k, ok := matchKey(scoped, val); ok {
						c.report(f.rel, line, ruleKeyDefault, fmt.Sprintf("%s holds %s, the default of key %s (%s): read the key instead", id.Name, show(val), k.name, k.pos))
						continue
					}
					c.report(f.rel, line, ruleLimitConst, fmt.Sprintf("%s = %s reads as a limit but is no configuration key: define a key (ADR 0007) or list it in architecture/limitcheck.yaml with why it is not a limit", id.Name, show(val)))
				}
			case *ast.BinaryExpr:
				switch x.Op {
				case token.LSS, token.LEQ, token.GTR, token.GEQ:
				default:
					return true
				}
				for _, side := range []ast.Expr{x.X, x.Y} {
					lit, ok := side.(*ast.BasicLit)
					if !ok {
						continue
					}
					val, ok := eval(lit)
					if !ok || (val.v >= -2 && val.v <= 2) {
						continue
					}
					if k, ok := matchKey(scoped, val); ok {
						c.report(f.rel, c.fset.Position(lit.Pos()).Line, ruleKeyDefault, fmt.Sprintf("compares with %s, the default of key %s (%s): compare with the key's value", lit.Value, k.name, k.pos))
					}
				}
			}
			return true
		})
	}
}

func matchKey(keys []key, val number) (key, bool) {
	for _, k := range keys {
		if kv, ok := keyValue(k); ok && same(kv, val) {
			return k, true
		}
	}
	return key{}, false
}

func show(n number) string {
	if n.dur {
		return time.Duration(n.v).String()
	}
	return strconv.FormatFloat(n.v, 'f', -1, 64)
}

// numberAfter is what may follow a key before the number that breaks the rule.
const numberAfter = "`?\\s*(?:\\(|,|:|=|\\bis\\b|\\bof\\b)\\s*(?:(?:defaults? to|by default|default(?: is|:)?)\\s*,?\\s*)?(?:~|about\\s+)?(?:[1-9]|0[.,][0-9])"

// keyPatterns returns, for every key, the two forms of its number beside it: the key followed
// by a number, and a number followed by the key in parentheses.
func (c *checker) keyPatterns() []*regexp.Regexp {
	var out []*regexp.Regexp
	seen := map[string]bool{}
	for _, k := range c.keys {
		if seen[k.name] {
			continue
		}
		seen[k.name] = true
		q := regexp.QuoteMeta(k.name)
		out = append(out,
			regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9_.])`+q+numberAfter),
			regexp.MustCompile("(?i)[0-9][0-9.,_]*\\s*(?:[A-Za-z]+\\s*)?\\(\\s*`?"+q+"`?\\s*\\)"))
	}
	return out
}

func (c *checker) scanText(rel string, line int, text string, pats []*regexp.Regexp) {
	for _, p := range pats {
		if m := p.FindString(text); m != "" {
			c.report(rel, line, ruleKeyNumber, fmt.Sprintf("a number beside a key (%q): name the key only; its default is in %s", strings.TrimSpace(m), configDoc))
			return
		}
	}
}

// checkComments applies key-number to the comments of a non-test Go file.
func (c *checker) checkComments(f goFile) {
	pats := c.patterns()
	for _, cg := range f.ast.Comments {
		for _, cm := range cg.List {
			start := c.fset.Position(cm.Pos()).Line
			for i, l := range strings.Split(cm.Text, "\n") {
				c.scanText(f.rel, start+i, l, pats)
			}
		}
	}
}

func (c *checker) patterns() []*regexp.Regexp {
	if c.pats == nil {
		c.pats = c.keyPatterns()
	}
	return c.pats
}

// skipDirs are the directories whose Markdown is not the project's.
var skipDirs = map[string]bool{".git": true, "node_modules": true, ".bin": true, "tools": true, "bin": true, ".bothy": true, ".coverage": true, "testdata": true}

// checkMarkdown applies key-number to every Markdown file.
func (c *checker) checkMarkdown() error {
	pats := c.patterns()
	return filepath.WalkDir(c.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != c.root && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".md") || d.Name() == "CHANGELOG.md" {
			return nil
		}
		rel := filepath.ToSlash(relOr(c.root, p))
		data, err := os.ReadFile(p) //nolint:gosec // a file of the repository being checked
		if err != nil {
			return err
		}
		for i, l := range strings.Split(string(data), "\n") {
			if rel == configDoc && strings.HasPrefix(l, "| `") {
				cells := strings.Split(l, "|")
				if len(cells) < 6 {
					continue
				}
				l = strings.Join(cells[4:], "|") // the meaning cell; the default cell is the one place for numbers
			}
			c.scanText(rel, i+1, l, pats)
		}
		return nil
	})
}
