package registercheck

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"bothy.example.com/architecture/internal/register"
)

// sqlKeywordRE decides whether a Go string (or a concatenation of strings) is
// SQL worth scanning. Plain strings such as the action "instance.read" look
// like schema references and must not be scanned.
var sqlKeywordRE = regexp.MustCompile(`(?i)\b(select|insert|update|delete|create|alter|drop|truncate|copy|merge)\b`)

// createTableRE finds the start of a CREATE TABLE statement; the table name
// is read by hand after it because it may be quoted or built at run time.
var createTableRE = regexp.MustCompile(`(?i)\bcreate\s+(?:(?:global|local)\s+)?(?:(temp|temporary|unlogged)\s+)?table\s+(?:if\s+not\s+exists\s+)?`)

var partitionOfRE = regexp.MustCompile(`(?i)^\s+partition\s+of\s+([^\s(;]+)`)

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// writeKeywordRE marks SQL that changes data or schema; a reads_schemas
// exception covers only SQL without any of these.
var writeKeywordRE = regexp.MustCompile(`(?i)\b(insert|update|delete|create|alter|drop|truncate|merge|copy|grant|revoke)\b`)

// sqlText is one piece of SQL with a way back to its file lines.
type sqlText struct {
	text string
	// lineAt maps a byte offset of text to a line of the file.
	lineAt func(offset int) int
	// test is true for _test.go files: their SQL must respect schema
	// ownership but is not a migration, so it may create scratch tables.
	test bool
}

type sqlChecker struct {
	reg      *register.Register
	root     string
	regPath  string
	schemaRE *regexp.Regexp
	out      []Violation
}

func checkSQL(reg *register.Register, root, regPath string) ([]Violation, error) {
	schemas := reg.Schemas()
	if len(schemas) == 0 {
		return nil, nil
	}
	quoted := make([]string, len(schemas))
	for i, s := range schemas {
		quoted[i] = regexp.QuoteMeta(s)
	}
	c := &sqlChecker{
		reg:     reg,
		root:    root,
		regPath: regPath,
		// A schema reference is the schema name, optionally double-quoted,
		// followed by a dot and an identifier, and not preceded by an
		// identifier character (so "xchat.y" and "a.chat.b" do not count).
		schemaRE: regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9_$."])"?(` + strings.Join(quoted, "|") + `)"?\s*\.\s*["A-Za-z_]`),
	}
	for _, comp := range reg.Components() {
		if err := c.checkComponent(comp); err != nil {
			return nil, err
		}
	}
	return c.out, nil
}

func (c *sqlChecker) add(file string, line int, format string, args ...any) {
	c.out = append(c.out, Violation{File: file, Line: line, Message: fmt.Sprintf(format, args...)})
}

func (c *sqlChecker) checkComponent(comp register.Component) error {
	dir := join(c.root, comp.Path)
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if comp.Status == register.StatusActive {
			c.add(comp.Path, 0, "%s is active but its directory does not exist", comp.Name)
		}
		return nil
	case err != nil:
		return fmt.Errorf("component %s: %w", comp.Name, err)
	case !info.IsDir():
		c.add(comp.Path, 0, "%s: path is not a directory", comp.Name)
		return nil
	}

	created := map[string]bool{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && (strings.HasPrefix(d.Name(), ".") || d.Name() == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(c.root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		var texts []sqlText
		switch {
		case strings.HasSuffix(p, ".sql"):
			data, err := os.ReadFile(p) //nolint:gosec // p comes from walking a component directory of the register
			if err != nil {
				return err
			}
			text := string(data)
			texts = []sqlText{{text: text, lineAt: func(off int) int { return 1 + strings.Count(text[:off], "\n") }}}
		case strings.HasSuffix(p, ".go"):
			texts, err = goSQL(p)
			if err != nil {
				return err
			}
		default:
			return nil
		}
		for _, t := range texts {
			c.checkText(comp, rel, t, created)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("scan component %s: %w", comp.Name, err)
	}

	if comp.Status == register.StatusActive && comp.Schema != "" {
		owner := c.reg.SchemaOwnerPath(comp.Schema)
		for _, t := range comp.Tables {
			if !created[t.Name] {
				c.add(owner, 0, "%s is active but no migration creates %s.%s listed in %s", comp.Name, comp.Schema, t.Name, c.regPath)
			}
		}
	}
	return nil
}

// checkText applies the schema-ownership rule and the table-inventory rule to
// one piece of SQL found in file rel of component comp.
func (c *sqlChecker) checkText(comp register.Component, rel string, t sqlText, created map[string]bool) {
	clean := stripSQL(t.text)
	for _, m := range c.schemaRE.FindAllStringSubmatchIndex(clean, -1) {
		schema := strings.ToLower(clean[m[2]:m[3]])
		owner := c.reg.SchemaOwnerPath(schema)
		if rel == owner || strings.HasPrefix(rel, owner+"/") || slices.Contains(comp.WritesSchemas, schema) {
			continue
		}
		if slices.Contains(comp.ReadsSchemas, schema) {
			if !writeKeywordRE.MatchString(clean) {
				continue
			}
			c.add(rel, t.lineAt(m[2]), "%s may only read schema %s (reads_schemas), but this SQL writes", comp.Name, schema)
			continue
		}
		c.add(rel, t.lineAt(m[2]), "%s names schema %s, which only %s may use", comp.Name, schema, owner)
	}

	if t.test {
		return
	}
	tables := make([]string, len(comp.Tables))
	for i, tb := range comp.Tables {
		tables[i] = tb.Name
	}
	for _, m := range createTableRE.FindAllStringSubmatchIndex(clean, -1) {
		if m[2] >= 0 {
			continue // temporary tables are not part of the schema
		}
		line := t.lineAt(m[0])
		name, rest := readName(clean[m[1]:])
		schema, table, qualified := splitName(name)
		partitionOf := ""
		if pm := partitionOfRE.FindStringSubmatch(rest); pm != nil {
			partitionOf = pm[1]
		}
		if p, pt, ok := splitName(partitionOf); ok && comp.Schema != "" && p == comp.Schema && slices.Contains(tables, pt) {
			// A partition, even one named at run time, belongs to its
			// registered parent table.
			continue
		}
		switch {
		case comp.Schema == "":
			c.add(rel, line, "%s owns no schema and may not create table %s", comp.Name, name)
		case !qualified:
			c.add(rel, line, "%s creates table %s without its schema (write %s.<table>)", comp.Name, name, comp.Schema)
		case schema == comp.Schema && slices.Contains(tables, table):
			created[table] = true
		case schema == comp.Schema:
			c.add(rel, line, "%s creates table %s.%s, which %s does not list", comp.Name, schema, table, c.regPath)
		case slices.Contains(c.reg.Schemas(), schema):
			// Already reported as a reference to another component's schema.
		default:
			c.add(rel, line, "%s creates table %s.%s outside its schema %s", comp.Name, schema, table, comp.Schema)
		}
	}
}

// readName reads the table name after CREATE TABLE: everything up to white
// space, an opening parenthesis or a semicolon.
func readName(s string) (name, rest string) {
	end := strings.IndexFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '(' || r == ';'
	})
	if end < 0 {
		return s, ""
	}
	return s[:end], s[end:]
}

// splitName splits "schema.table" (either part optionally double-quoted)
// into lowercase parts; qualified is false for a bare or run-time name.
func splitName(name string) (schema, table string, qualified bool) {
	parts := strings.Split(name, ".")
	if len(parts) != 2 {
		return "", "", false
	}
	for i, p := range parts {
		p = strings.Trim(p, `"`)
		if !identRE.MatchString(p) {
			return "", "", false
		}
		parts[i] = strings.ToLower(p)
	}
	return parts[0], parts[1], true
}

// stripSQL blanks comments and single-quoted string literals, keeping every
// byte offset and newline, so 'instance.read' in a WHERE clause or a comment
// about sync.event_log is not mistaken for a table reference.
func stripSQL(s string) string {
	b := []byte(s)
	blank := func(from, to int) {
		for i := from; i < to && i < len(b); i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
	for i := 0; i < len(b); {
		switch {
		case b[i] == '-' && i+1 < len(b) && b[i+1] == '-':
			end := i
			for end < len(b) && b[end] != '\n' {
				end++
			}
			blank(i, end)
			i = end
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			end := strings.Index(string(b[i+2:]), "*/")
			if end < 0 {
				end = len(b)
			} else {
				end = i + 2 + end + 2
			}
			blank(i, end)
			i = end
		case b[i] == '\'':
			end := i + 1
			for end < len(b) {
				if b[end] == '\'' {
					if end+1 < len(b) && b[end+1] == '\'' {
						end += 2
						continue
					}
					end++
					break
				}
				end++
			}
			blank(i, end)
			i = end
		case b[i] == '"':
			// Quoted identifiers are kept; skip to the closing quote so a
			// quote inside them does not start a literal.
			end := strings.IndexByte(string(b[i+1:]), '"')
			if end < 0 {
				i = len(b)
			} else {
				i = i + 1 + end + 1
			}
		default:
			i++
		}
	}
	return string(b)
}

// segment is one Go string literal inside a concatenation.
type segment struct {
	start int // offset in the joined text
	value string
	line  int
	raw   bool
}

// goSQL returns the SQL-looking strings of a Go file. Literals joined with +
// are scanned as one text, so "SELECT id " + "FROM chat.messages" is seen
// whole; the reported line is that of the literal holding the match.
func goSQL(file string) ([]sqlText, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	test := strings.HasSuffix(file, "_test.go")
	var out []sqlText
	emit := func(lits []*ast.BasicLit) {
		var segs []segment
		var b strings.Builder
		for _, lit := range lits {
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			segs = append(segs, segment{start: b.Len(), value: v, line: fset.Position(lit.Pos()).Line, raw: strings.HasPrefix(lit.Value, "`")})
			b.WriteString(v)
		}
		text := b.String()
		if !sqlKeywordRE.MatchString(text) {
			return
		}
		out = append(out, sqlText{text: text, test: test, lineAt: func(off int) int {
			seg := segs[0]
			for _, s := range segs {
				if s.start <= off {
					seg = s
				}
			}
			if !seg.raw {
				return seg.line
			}
			inner := min(max(off-seg.start, 0), len(seg.value))
			return seg.line + strings.Count(seg.value[:inner], "\n")
		}})
	}
	var visit func(n ast.Node)
	visit = func(n ast.Node) {
		ast.Inspect(n, func(x ast.Node) bool {
			switch e := x.(type) {
			case *ast.ImportSpec:
				return false
			case *ast.Field:
				// Struct tags are strings too, but never SQL; walk the
				// rest of the field.
				for _, name := range e.Names {
					visit(name)
				}
				visit(e.Type)
				return false
			case *ast.BinaryExpr:
				if e.Op != token.ADD {
					return true
				}
				var lits []*ast.BasicLit
				var others []ast.Expr
				flatten(e, &lits, &others)
				if len(lits) > 0 {
					emit(lits)
				}
				for _, o := range others {
					visit(o)
				}
				return false
			case *ast.BasicLit:
				if e.Kind == token.STRING {
					emit([]*ast.BasicLit{e})
				}
			}
			return true
		})
	}
	visit(f)
	return out, nil
}

// flatten collects the string literal leaves of a chain of + expressions and
// the other leaves (calls, variables), which are scanned on their own.
func flatten(e ast.Expr, lits *[]*ast.BasicLit, others *[]ast.Expr) {
	switch x := e.(type) {
	case *ast.BinaryExpr:
		if x.Op == token.ADD {
			flatten(x.X, lits, others)
			flatten(x.Y, lits, others)
			return
		}
	case *ast.ParenExpr:
		flatten(x.X, lits, others)
		return
	case *ast.BasicLit:
		if x.Kind == token.STRING {
			*lits = append(*lits, x)
			return
		}
	}
	*others = append(*others, e)
}
