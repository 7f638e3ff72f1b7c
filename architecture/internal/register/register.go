// Package register reads and validates architecture/modules.yaml, the module
// register, so that every gate (the generated go-arch-lint config, the register
// check) works from one validated description of the modules instead of
// re-parsing the file its own way.
package register

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Version is the only register format version this package understands; a
// register with another version fails loudly instead of being half understood.
const Version = 1

// Any is the wildcard in may_use and vendors: the component may import every
// project package, or every third-party package. Only the composition root
// should need it.
const Any = "*"

// Status values. A planned component is a contract without code: its directory
// may not exist yet. An active component must exist on disk.
const (
	StatusPlanned = "planned"
	StatusActive  = "active"
)

// Register is the parsed module register. Field order mirrors the file so the
// format documentation at the top of modules.yaml and this type read alike.
type Register struct {
	// Version must equal [Version].
	Version int `yaml:"version"`
	// Server is the directory of the server's Go module (the one holding
	// go.mod), relative to the repository root. go-arch-lint runs there.
	Server string `yaml:"server"`
	// Vendors names groups of third-party import paths; each path stands for
	// itself and every package below it.
	Vendors map[string][]string `yaml:"vendors"`
	// ModuleVendors are the vendor groups every business module may import.
	ModuleVendors []string `yaml:"module_vendors"`
	// Modules are the business modules in migration order.
	Modules []Module `yaml:"modules"`
	// Platform are the non-business components (kernel, wire, ...).
	Platform []Platform `yaml:"platform"`

	components []Component
}

// Table is one table a component's migrations create, with the reason it
// exists, so the register doubles as the table inventory of spec 02.
type Table struct {
	Name    string `yaml:"name"`
	Purpose string `yaml:"purpose"`
}

// Port is one interface a module offers other modules through its root
// package (spec 01: modules talk only through ports).
type Port struct {
	Name    string `yaml:"name"`
	Purpose string `yaml:"purpose"`
}

// Module is one business module of spec 01.
type Module struct {
	Name    string   `yaml:"name"`
	Path    string   `yaml:"path"`
	Schema  string   `yaml:"schema"`
	Status  string   `yaml:"status"`
	Summary string   `yaml:"summary"`
	Tables  []Table  `yaml:"tables"`
	Ports   []Port   `yaml:"ports"`
	MayUse  []string `yaml:"may_use"`
	Events  []string `yaml:"events"`
	Vendors []string `yaml:"vendors"`
}

// Platform is one non-business component: the kernel, generated code, the
// composition root and their helpers.
type Platform struct {
	Name    string `yaml:"name"`
	Path    string `yaml:"path"`
	Status  string `yaml:"status"`
	Summary string `yaml:"summary"`
	// Common components may be imported by every component.
	Common bool `yaml:"common"`
	// Generated marks code produced by a generator (kept for readers; the
	// generated files themselves are excluded from go-arch-lint by name).
	Generated bool `yaml:"generated"`
	// ModuleInternalsMayUse lets the internal packages of every business
	// module (where their adapters live) import this component.
	ModuleInternalsMayUse bool `yaml:"module_internals_may_use"`
	// CompositionRoot marks the one component that builds every module and
	// binds its ports (wire, ADR 0034): it may import the internal packages
	// of the modules it lists, it must list what it uses (never "*"), and
	// only programs may import it.
	CompositionRoot bool `yaml:"composition_root"`
	// Program marks an entry point: a binary or the end-to-end tests'
	// harness. Only programs may import the composition root, and only
	// programs (besides nothing else) may use "*".
	Program bool `yaml:"program"`
	// ServesOperations lets api/operations.yaml name this component as the
	// server of an operation.
	ServesOperations bool `yaml:"serves_operations"`
	// Schema is the PostgreSQL schema this component owns, if any.
	Schema string `yaml:"schema"`
	// SchemaOwner narrows which directory may name Schema in SQL; empty
	// means the whole component.
	SchemaOwner string  `yaml:"schema_owner"`
	Tables      []Table `yaml:"tables"`
	// ReadsSchemas are schemas of other components this one may read (never
	// write) in SQL: a documented exception, such as test support checking
	// the migration bookkeeping. Business modules have no such field: spec
	// 01 rule 1 allows them no exception.
	ReadsSchemas []string `yaml:"reads_schemas"`
	// WritesSchemas are schemas of other components this one may read and
	// write in SQL: a documented exception for the benchmark command, whose
	// bare baseline writes the event log's tables directly, on a throwaway
	// cluster of its own. Business modules have no such field either.
	WritesSchemas []string `yaml:"writes_schemas"`
	MayUse        []string `yaml:"may_use"`
	Vendors       []string `yaml:"vendors"`
}

// Component is the uniform view of a module or a platform component that the
// gates work with, so they need not treat the two lists differently.
type Component struct {
	Name                  string
	Path                  string
	Status                string
	Business              bool
	Common                bool
	ModuleInternalsMayUse bool
	CompositionRoot       bool
	Program               bool
	ServesOperations      bool
	Schema                string
	SchemaOwner           string
	Tables                []Table
	ReadsSchemas          []string
	WritesSchemas         []string
	MayUse                []string
	Vendors               []string
	Events                []string
}

var (
	nameRE  = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
	identRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	eventRE = regexp.MustCompile(`^[a-z][a-z_]*(\.[a-z][a-z_]*)+$`)
)

// Load reads and validates the register at file.
func Load(file string) (*Register, error) {
	data, err := os.ReadFile(file) //nolint:gosec // the register is named on the command line by make or its operator
	if err != nil {
		return nil, fmt.Errorf("read register: %w", err)
	}
	reg, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("register %s: %w", file, err)
	}
	return reg, nil
}

// Parse decodes and validates a register. Unknown fields are errors, so a
// typo in the register cannot silently drop a rule. The error joins every
// problem found, one per line.
func Parse(data []byte) (*Register, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var reg Register
	if err := dec.Decode(&reg); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	reg.components = reg.buildComponents()
	if err := reg.validate(); err != nil {
		return nil, err
	}
	return &reg, nil
}

// Components lists every component, business modules first (in migration
// order), then the platform components in file order.
func (r *Register) Components() []Component {
	return slices.Clone(r.components)
}

// Component looks a component up by name.
func (r *Register) Component(name string) (Component, bool) {
	for _, c := range r.components {
		if c.Name == name {
			return c, true
		}
	}
	return Component{}, false
}

// SchemaOwnerPath is the directory allowed to name schema in SQL, or "" when
// no component owns that schema.
func (r *Register) SchemaOwnerPath(schema string) string {
	for _, c := range r.components {
		if c.Schema == schema {
			if c.SchemaOwner != "" {
				return c.SchemaOwner
			}
			return c.Path
		}
	}
	return ""
}

// Schemas lists every schema some component owns, in register order.
func (r *Register) Schemas() []string {
	var out []string
	for _, c := range r.components {
		if c.Schema != "" {
			out = append(out, c.Schema)
		}
	}
	return out
}

// ServerRelative turns a repository-relative path of the register into a path
// relative to the server module, which is how go-arch-lint names directories.
func (r *Register) ServerRelative(p string) (string, error) {
	if p == r.Server {
		return ".", nil
	}
	rel, ok := strings.CutPrefix(p, r.Server+"/")
	if !ok {
		return "", fmt.Errorf("path %s is not below server directory %s", p, r.Server)
	}
	return rel, nil
}

func (r *Register) buildComponents() []Component {
	out := make([]Component, 0, len(r.Modules)+len(r.Platform))
	for _, m := range r.Modules {
		out = append(out, Component{
			Name:     m.Name,
			Path:     m.Path,
			Status:   m.Status,
			Business: true,
			Schema:   m.Schema,
			Tables:   m.Tables,
			MayUse:   m.MayUse,
			Vendors:  unique(append(slices.Clone(r.ModuleVendors), m.Vendors...)),
			Events:   m.Events,
		})
	}
	for _, p := range r.Platform {
		out = append(out, Component{
			Name:                  p.Name,
			Path:                  p.Path,
			Status:                p.Status,
			Common:                p.Common,
			ModuleInternalsMayUse: p.ModuleInternalsMayUse,
			CompositionRoot:       p.CompositionRoot,
			Program:               p.Program,
			ServesOperations:      p.ServesOperations,
			Schema:                p.Schema,
			SchemaOwner:           p.SchemaOwner,
			Tables:                p.Tables,
			ReadsSchemas:          p.ReadsSchemas,
			WritesSchemas:         p.WritesSchemas,
			MayUse:                p.MayUse,
			Vendors:               p.Vendors,
		})
	}
	return out
}

func (r *Register) validate() error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format, args...))
	}
	if r.Version != Version {
		add("version %d is not supported (want %d)", r.Version, Version)
	}
	if r.Server == "" || !cleanRelative(r.Server) {
		add("server %q must be a clean relative directory", r.Server)
	}
	for name, paths := range r.Vendors {
		if !validVendorName(name) {
			add("vendor %q: names are lowercase words joined by hyphens", name)
		}
		if len(paths) == 0 {
			add("vendor %s: no import paths", name)
		}
	}
	errs = append(errs, r.checkVendorRefs("module_vendors", r.ModuleVendors)...)
	if len(r.Modules) == 0 {
		add("modules: none listed")
	}

	moduleNames := map[string]bool{}
	for _, m := range r.Modules {
		moduleNames[m.Name] = true
	}
	seen := map[string]bool{}
	schemas := map[string]string{}
	events := map[string]string{}
	for _, c := range r.components {
		kind := "component"
		if c.Business {
			kind = "module"
		}
		where := fmt.Sprintf("%s %s", kind, c.Name)
		if !nameRE.MatchString(c.Name) {
			add("%s: name must match %s", where, nameRE)
		}
		if seen[c.Name] {
			add("duplicate component %s", c.Name)
		}
		seen[c.Name] = true
		if c.Status != StatusPlanned && c.Status != StatusActive {
			add("%s: status %s is not %s or %s", where, c.Status, StatusPlanned, StatusActive)
		}
		if !cleanRelative(c.Path) {
			add("%s: path %q must be a clean relative directory", where, c.Path)
		} else if _, err := r.ServerRelative(c.Path); err != nil || c.Path == r.Server {
			add("%s: path %s is not below server directory %s", where, c.Path, r.Server)
		}
		if c.Business {
			if c.Schema != c.Name {
				add("%s: schema %s must equal the module name", where, c.Schema)
			}
			if len(c.Tables) == 0 {
				add("%s: tables: none listed", where)
			}
		}
		if c.Schema != "" {
			if !identRE.MatchString(c.Schema) {
				add("%s: schema %q is not a lowercase identifier", where, c.Schema)
			}
			if other, ok := schemas[c.Schema]; ok {
				add("%s: schema %s is already owned by %s", where, c.Schema, other)
			}
			schemas[c.Schema] = c.Name
		} else if len(c.Tables) > 0 {
			add("%s: tables listed without a schema", where)
		}
		if c.SchemaOwner != "" && c.SchemaOwner != c.Path && !strings.HasPrefix(c.SchemaOwner, c.Path+"/") {
			add("%s: schema_owner %s is not inside %s", where, c.SchemaOwner, c.Path)
		}
		tables := map[string]bool{}
		for _, t := range c.Tables {
			if !identRE.MatchString(t.Name) {
				add("%s: table %q is not a lowercase identifier", where, t.Name)
			}
			if tables[t.Name] {
				add("%s: table %s listed twice", where, t.Name)
			}
			tables[t.Name] = true
			if strings.TrimSpace(t.Purpose) == "" {
				add("%s: table %s has no purpose", where, t.Name)
			}
		}
		for _, e := range c.Events {
			if !eventRE.MatchString(e) {
				add("%s: event %s is not of the form resource.verb", where, e)
			}
			if other, ok := events[e]; ok {
				add("event %s is written by both %s and %s", e, other, c.Name)
			}
			events[e] = c.Name
		}
		errs = append(errs, r.checkEdges(where, c, moduleNames)...)
		errs = append(errs, r.checkVendorRefs(where+": vendors", c.Vendors)...)
	}
	for _, m := range r.Modules {
		for _, p := range m.Ports {
			if p.Name == "" || strings.TrimSpace(p.Purpose) == "" {
				add("module %s: port %q needs a name and a purpose", m.Name, p.Name)
			}
		}
	}
	for _, c := range r.components {
		for field, list := range map[string][]string{"reads_schemas": c.ReadsSchemas, "writes_schemas": c.WritesSchemas} {
			for _, s := range list {
				switch {
				case s == c.Schema:
					errs = append(errs, fmt.Errorf("component %s: %s names its own schema %s", c.Name, field, s))
				case !slices.Contains(r.Schemas(), s):
					errs = append(errs, fmt.Errorf("component %s: %s names unknown schema %s", c.Name, field, s))
				}
			}
		}
	}
	errs = append(errs, r.checkCompositionRoot()...)
	errs = append(errs, r.checkNesting()...)
	if err := r.checkCycles(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (r *Register) checkEdges(where string, c Component, moduleNames map[string]bool) []error {
	var errs []error
	seen := map[string]bool{}
	for _, dep := range c.MayUse {
		if seen[dep] {
			errs = append(errs, fmt.Errorf("%s: may_use lists %s twice", where, dep))
		}
		seen[dep] = true
		switch {
		case dep == c.Name:
			errs = append(errs, fmt.Errorf("%s: may_use names itself", where))
		case c.Business && !moduleNames[dep]:
			// Spec 01 rule 3 lists module-to-module edges only; platform
			// access of modules is granted by the platform entry.
			errs = append(errs, fmt.Errorf("%s: may_use names unknown module %s", where, dep))
		case !c.Business && dep == Any && len(c.MayUse) != 1:
			errs = append(errs, fmt.Errorf("%s: may_use %q must stand alone", where, Any))
		case !c.Business && dep != Any:
			if _, ok := r.Component(dep); !ok {
				errs = append(errs, fmt.Errorf("%s: may_use names unknown component %s", where, dep))
			}
		}
	}
	return errs
}

// checkCompositionRoot holds the composition root to building and binding (ADR 0034): there is
// at most one; it lists what it uses, never "*" and never a program; and only programs import
// it, which also means that only a program may use "*" (which would include it).
func (r *Register) checkCompositionRoot() []error {
	var errs []error
	roots := 0
	for _, c := range r.components {
		if c.CompositionRoot {
			roots++
			if c.Program {
				errs = append(errs, fmt.Errorf("component %s: the composition root is not a program", c.Name))
			}
		}
	}
	if roots > 1 {
		errs = append(errs, fmt.Errorf("%d components are marked composition_root; there is one", roots))
	}
	for _, c := range r.components {
		for _, dep := range c.MayUse {
			d, known := r.Component(dep)
			switch {
			case dep == Any && c.CompositionRoot:
				errs = append(errs, fmt.Errorf("component %s: the composition root must list what it uses, not %q", c.Name, Any))
			case dep == Any && !c.Program:
				errs = append(errs, fmt.Errorf("component %s: only a program may use %q", c.Name, Any))
			case known && d.CompositionRoot && !c.Program:
				errs = append(errs, fmt.Errorf("component %s: only a program may use the composition root %s", c.Name, d.Name))
			case known && d.Program && c.CompositionRoot:
				errs = append(errs, fmt.Errorf("component %s: the composition root may not use the program %s", c.Name, d.Name))
			}
		}
	}
	return errs
}

func (r *Register) checkVendorRefs(where string, refs []string) []error {
	var errs []error
	for _, v := range refs {
		if v == Any {
			if len(refs) != 1 {
				errs = append(errs, fmt.Errorf("%s: %q must stand alone", where, Any))
			}
			continue
		}
		if _, ok := r.Vendors[v]; !ok {
			errs = append(errs, fmt.Errorf("%s: unknown vendor %s", where, v))
		}
	}
	return errs
}

// checkNesting rejects a component directory inside another one: go-arch-lint
// would then pick the owner of a package by a file-count heuristic, and the
// SQL scan would count the inner files twice.
func (r *Register) checkNesting() []error {
	var errs []error
	for i, a := range r.components {
		for j, b := range r.components {
			if i == j || a.Path == "" || b.Path == "" {
				continue
			}
			if a.Path == b.Path && i < j {
				errs = append(errs, fmt.Errorf("components %s and %s share path %s", a.Name, b.Name, a.Path))
			}
			if strings.HasPrefix(b.Path, a.Path+"/") {
				errs = append(errs, fmt.Errorf("component %s path %s lies inside component %s path %s", b.Name, b.Path, a.Name, a.Path))
			}
		}
	}
	return errs
}

// checkCycles keeps the module graph acyclic, as spec 01 requires: a cycle
// would make the migration order and the wiring order ambiguous.
func (r *Register) checkCycles() error {
	edges := map[string][]string{}
	for _, m := range r.Modules {
		edges[m.Name] = m.MayUse
	}
	const (
		visiting = iota + 1
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(string) error
	visit = func(n string) error {
		switch state[n] {
		case visiting:
			i := slices.Index(stack, n)
			return fmt.Errorf("dependency cycle: %s -> %s", strings.Join(stack[i:], " -> "), n)
		case done:
			return nil
		}
		state[n] = visiting
		stack = append(stack, n)
		for _, d := range edges[n] {
			if _, ok := edges[d]; !ok {
				continue
			}
			if err := visit(d); err != nil {
				return err
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = done
		return nil
	}
	for _, m := range r.Modules {
		if err := visit(m.Name); err != nil {
			return err
		}
	}
	return nil
}

func cleanRelative(p string) bool {
	return p != "" && !path.IsAbs(p) && path.Clean(p) == p && p != "." && !strings.HasPrefix(p, "../") && !strings.Contains(p, `\`)
}

func validVendorName(name string) bool {
	if name == "" {
		return false
	}
	for _, part := range strings.Split(name, "-") {
		if !nameRE.MatchString(part) {
			return false
		}
	}
	return true
}

func unique(in []string) []string {
	var out []string
	for _, s := range in {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
