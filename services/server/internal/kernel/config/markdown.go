package config

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// emptyDefault is how the documentation writes an empty default.
const emptyDefault = "(empty)"

var tableHeader = []string{"key", "type", "default", "meaning"}

// Markdown renders keys as the documentation table (header
// `| key | type | default | meaning |`, rows sorted by name, keys and
// defaults in backticks, an empty default as (empty)), so the configuration
// page can be regenerated and always passes CheckDocumented.
func Markdown(keys []Key) []byte {
	sorted := slices.Clone(keys)
	slices.SortFunc(sorted, func(a, b Key) int { return strings.Compare(a.Name, b.Name) })
	var b bytes.Buffer
	b.WriteString("| key | type | default | meaning |\n")
	b.WriteString("| --- | --- | --- | --- |\n")
	for _, k := range sorted {
		def := emptyDefault
		if k.Default != "" {
			def = "`" + k.Default + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", k.Name, k.Kind, def, k.Meaning)
	}
	return b.Bytes()
}

// docRow is one row of a documentation table.
type docRow struct {
	line    int
	name    string
	kind    string
	def     string
	meaning string
}

// CheckDocumented compares keys with the tables of markdown whose header is
// `| key | type | default | meaning |` (there may be several, one per
// section). It returns nil when every key has exactly one row and every row
// is a key with the same type and default; otherwise a joined error naming
// each key missing from the documentation, each documented key that is not
// registered, each mismatch and each malformed row.
func CheckDocumented(keys []Key, markdown []byte) error {
	rows, errs := parseTables(markdown)
	if len(rows) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("documentation has no table with header | key | type | default | meaning |"))
	}
	byName := map[string]docRow{}
	for _, r := range rows {
		if prev, dup := byName[r.name]; dup {
			errs = append(errs, fmt.Errorf("documented key %s: listed twice (lines %d and %d)", r.name, prev.line, r.line))
			continue
		}
		byName[r.name] = r
	}
	registered := map[string]bool{}
	sorted := slices.Clone(keys)
	slices.SortFunc(sorted, func(a, b Key) int { return strings.Compare(a.Name, b.Name) })
	for _, k := range sorted {
		registered[k.Name] = true
		r, ok := byName[k.Name]
		if !ok {
			errs = append(errs, fmt.Errorf("config key %s: not documented", k.Name))
			continue
		}
		if r.kind != string(k.Kind) {
			errs = append(errs, fmt.Errorf("config key %s: documented type %s, code says %s (line %d)", k.Name, r.kind, k.Kind, r.line))
		}
		if r.def != k.Default {
			errs = append(errs, fmt.Errorf("config key %s: documented default %q, code says %q (line %d)", k.Name, r.def, k.Default, r.line))
		}
	}
	for _, r := range rows {
		if !registered[r.name] {
			errs = append(errs, fmt.Errorf("documented key %s (line %d): not registered", r.name, r.line))
		}
	}
	return errors.Join(errs...)
}

// parseTables returns the rows of every key table in markdown and the
// errors of rows it cannot read.
func parseTables(markdown []byte) ([]docRow, []error) {
	var rows []docRow
	var errs []error
	lines := strings.Split(strings.ReplaceAll(string(markdown), "\r\n", "\n"), "\n")
	inTable := false
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		cells, isRow := splitRow(line)
		if !inTable {
			if isRow && isHeader(cells) && i+1 < len(lines) {
				if sep, ok := splitRow(strings.TrimSpace(lines[i+1])); ok && isSeparator(sep) {
					inTable = true
					i++
				}
			}
			continue
		}
		if !isRow {
			inTable = false
			continue
		}
		r, err := parseRow(i+1, cells)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rows = append(rows, r)
	}
	return rows, errs
}

func splitRow(line string) ([]string, bool) {
	if !strings.HasPrefix(line, "|") {
		return nil, false
	}
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	cells := strings.Split(line, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells, true
}

func isHeader(cells []string) bool {
	if len(cells) != len(tableHeader) {
		return false
	}
	for i, c := range cells {
		if !strings.EqualFold(c, tableHeader[i]) {
			return false
		}
	}
	return true
}

func isSeparator(cells []string) bool {
	for _, c := range cells {
		if c == "" || strings.Trim(c, "-:") != "" {
			return false
		}
	}
	return true
}

func parseRow(line int, cells []string) (docRow, error) {
	if len(cells) != len(tableHeader) {
		return docRow{}, fmt.Errorf("documentation line %d: want 4 cells (key, type, default, meaning), got %d", line, len(cells))
	}
	name, ok := backticked(cells[0])
	if !ok || name == "" {
		return docRow{}, fmt.Errorf("documentation line %d: key cell %q is not a key in backticks", line, cells[0])
	}
	r := docRow{line: line, name: name, kind: cells[1], meaning: cells[3]}
	switch def, ok := backticked(cells[2]); {
	case cells[2] == emptyDefault:
	case ok && def != "":
		r.def = def
	default:
		return docRow{}, fmt.Errorf("documentation line %d: key %s: default cell %q is neither a value in backticks nor %s", line, name, cells[2], emptyDefault)
	}
	if r.meaning == "" {
		return docRow{}, fmt.Errorf("documentation line %d: key %s: meaning is empty", line, name)
	}
	return r, nil
}

// backticked returns s without its surrounding backticks.
func backticked(s string) (string, bool) {
	if len(s) >= 2 && strings.HasPrefix(s, "`") && strings.HasSuffix(s, "`") {
		return s[1 : len(s)-1], true
	}
	return "", false
}
