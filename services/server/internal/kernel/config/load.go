package config

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config holds the values of one process's file and environment and answers
// reads of keys. Reads never fail: a bad value is recorded (see Err) and the
// key's default is returned, so wiring can read everything first and report
// every problem at once. It is safe for concurrent use. Build it with Load
// (tests: Load("", []string{"BOTHY_SOME_KEY=value"})); the zero value is not usable.
type Config struct {
	reg  *Register
	path string
	file map[string]string
	env  map[string]string

	mu    sync.Mutex
	reads map[string]struct{}
	errs  map[string]error
}

// Load reads the configuration of the default register from the YAML file at
// path ("" for none) and from environ (os.Environ() in main). The file holds
// flat dotted keys ("http.addr: ...") or nested mappings, flattened with dots.
// Errors are for an unreadable file or YAML that is not a mapping of scalar
// values; bad values and unknown keys are reported later by Err.
func Load(path string, environ []string) (*Config, error) {
	return std.Load(path, environ)
}

// Load reads a configuration checked against r; see the package-level Load.
func (r *Register) Load(path string, environ []string) (*Config, error) {
	c := &Config{
		reg:   r,
		path:  path,
		file:  map[string]string{},
		env:   map[string]string{},
		reads: map[string]struct{}{},
		errs:  map[string]error{},
	}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(name, EnvPrefix) && name != EnvConfigFile {
			c.env[name] = value
		}
	}
	if path == "" {
		return c, nil
	}
	data, err := os.ReadFile(path) //nolint:gosec // the path is the operator's --config or BOTHY_CONFIG; reading it is the point
	if err != nil {
		return nil, fmt.Errorf("read config file: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse config file %s: %w", path, err)
	}
	if len(doc.Content) == 0 {
		return c, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return c, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("parse config file %s: line %d: want a mapping of keys to values", path, root.Line)
	}
	if err := flatten(root, "", c.file); err != nil {
		return nil, fmt.Errorf("parse config file %s: %w", path, err)
	}
	return c, nil
}

// flatten copies the scalar values of a mapping into out under dotted names.
func flatten(n *yaml.Node, prefix string, out map[string]string) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if kn.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: want a plain key", kn.Line)
		}
		name := kn.Value
		if prefix != "" {
			name = prefix + "." + name
		}
		for vn.Kind == yaml.AliasNode && vn.Alias != nil {
			vn = vn.Alias
		}
		switch vn.Kind {
		case yaml.MappingNode:
			if err := flatten(vn, name, out); err != nil {
				return err
			}
		case yaml.ScalarNode:
			if _, dup := out[name]; dup {
				return fmt.Errorf("line %d: key %s set twice", kn.Line, name)
			}
			value := vn.Value
			if vn.Tag == "!!null" {
				value = ""
			}
			out[name] = value
		default:
			return fmt.Errorf("line %d: key %s: want a single value or a mapping", kn.Line, name)
		}
	}
	return nil
}

// String returns the value of a string key.
func (c *Config) String(k Key) string {
	raw, _, _ := c.read(k, KindString)
	return raw
}

// Int returns the value of an int key, or its default after recording an error.
func (c *Config) Int(k Key) int {
	return value(c, k, KindInt, parseInt)
}

// Bytes returns the value of a bytes key, or its default after recording an error.
func (c *Config) Bytes(k Key) int64 {
	return value(c, k, KindBytes, parseBytes)
}

// Duration returns the value of a duration key, or its default after
// recording an error.
func (c *Config) Duration(k Key) time.Duration {
	return value(c, k, KindDuration, parseDuration)
}

// Bool returns the value of a bool key, or its default after recording an error.
func (c *Config) Bool(k Key) bool {
	return value(c, k, KindBool, parseBool)
}

// value parses the configured value of k, falling back to its default.
func value[T any](c *Config, k Key, kind Kind, parse func(string) (T, error)) T {
	raw, source, def := c.read(k, kind)
	if source != "" {
		v, err := parse(raw)
		if err == nil {
			return v
		}
		c.fail(k.Name, fmt.Errorf("config key %s from %s: %w", k.Name, source, err))
	}
	v, _ := parse(def) // a registered default parses; an unregistered key was already reported
	return v
}

// read records the read of k and returns its raw value, the source it came
// from ("" for the default) and the default. It reports reading a key that
// is not registered or reading it as the wrong kind.
func (c *Config) read(k Key, kind Kind) (raw, source, def string) {
	c.mu.Lock()
	c.reads[k.Name] = struct{}{}
	c.mu.Unlock()
	reg, ok := c.reg.lookup(k.Name)
	switch {
	case !ok:
		c.fail(k.Name, fmt.Errorf("config key %s: read but not registered", k.Name))
		return k.Default, "", k.Default
	case reg.Kind != kind:
		c.fail(k.Name, fmt.Errorf("config key %s: registered as %s, read as %s", k.Name, reg.Kind, kind))
		return reg.Default, "", reg.Default
	}
	if v, ok := c.env[reg.EnvName()]; ok {
		return v, "environment variable " + reg.EnvName(), reg.Default
	}
	if v, ok := c.file[reg.Name]; ok {
		return v, "config file " + c.path, reg.Default
	}
	return reg.Default, "", reg.Default
}

// fail records the first error about a key; reading it again adds nothing.
func (c *Config) fail(name string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, seen := c.errs[name]; !seen {
		c.errs[name] = err
	}
}

// Err returns every problem found so far, joined, or nil: bad values of the
// keys read, and keys set in the file or BOTHY_ variables set in the
// environment that match no registered key (typos). Call it after wiring has
// read every key, so the register holds every key the process uses.
func (c *Config) Err() error {
	c.mu.Lock()
	errs := make([]error, 0, len(c.errs))
	for _, err := range c.errs {
		errs = append(errs, err)
	}
	c.mu.Unlock()
	keys := c.reg.Registered()
	names := make(map[string]bool, len(keys))
	envs := make(map[string]bool, len(keys))
	for _, k := range keys {
		names[k.Name] = true
		envs[k.EnvName()] = true
	}
	for name := range c.file {
		if !names[name] {
			errs = append(errs, fmt.Errorf("config file %s: unknown key %s", c.path, name))
		}
	}
	for name := range c.env {
		if !envs[name] {
			errs = append(errs, fmt.Errorf("environment variable %s: no such config key", name))
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// Reads returns the names of the keys read so far, sorted and unique, so a
// test can check that every key the code reads is registered and documented.
func (c *Config) Reads() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.reads))
	for name := range c.reads {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}
