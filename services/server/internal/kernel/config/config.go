// Package config defines bothy's configuration keys and reads their values.
// Every limit, window and threshold is a named Key with a type, a default and
// a meaning; values come from the defaults, an optional YAML file and BOTHY_
// environment variables (env beats file beats default). Because every key is
// registered, the documentation can be checked against the code
// (CheckDocumented) and typos in files or the environment are reported.
package config

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Kind is the type of a key's value; it decides how values are parsed and is
// shown in the documentation table.
type Kind string

// The kinds of value a key can hold.
const (
	// KindString is any text.
	KindString Kind = "string"
	// KindInt is a decimal integer.
	KindInt Kind = "int"
	// KindBytes is a number of bytes, a decimal integer of zero or more.
	KindBytes Kind = "bytes"
	// KindDuration is a Go duration of zero or more, such as 15s or 1h30m.
	KindDuration Kind = "duration"
	// KindBool is true or false (also 1, 0, t, f in any case).
	KindBool Kind = "bool"
)

// EnvPrefix starts the environment variable of every key.
const EnvPrefix = "BOTHY_"

// EnvConfigFile names the environment variable holding the config file path.
// It is not a key, so it is never reported as unknown.
const EnvConfigFile = "BOTHY_CONFIG"

// Key is one configuration setting. Keys are created with Define so that the
// register knows every one of them.
type Key struct {
	// Name is lowercase dotted snake_case, such as http.max_body_bytes.
	Name string
	// Kind is the type of the value.
	Kind Kind
	// Default is the value, in text form, used when neither file nor env set it.
	Default string
	// Meaning says what the key controls, for the documentation table.
	Meaning string
}

// EnvName returns the environment variable that sets k: EnvPrefix followed by
// the name upper-cased with dots turned into underscores.
func (k Key) EnvName() string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(k.Name, ".", "_"))
}

var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)

// Register is a set of keys. The process uses one default register through
// Define, Registered and Load; tests build their own with NewRegister.
type Register struct {
	mu   sync.Mutex
	keys map[string]Key
}

// NewRegister returns an empty register.
func NewRegister() *Register {
	return &Register{keys: map[string]Key{}}
}

var std = NewRegister()

// Define registers a key in the default register and returns it; call it in
// a package-level var so the key exists before main runs. It panics (at
// init, so a broken key never ships) on a duplicate or malformed name, a name
// clashing with another key's environment variable or nesting, an unknown
// kind, a default that does not parse for its kind, or a missing meaning.
func Define(name string, kind Kind, def, meaning string) Key {
	return std.Define(name, kind, def, meaning)
}

// Registered returns the keys of the default register sorted by name, the
// list documentation is checked against.
func Registered() []Key {
	return std.Registered()
}

// Define registers a key in r; see the package-level Define for the rules.
func (r *Register) Define(name string, kind Kind, def, meaning string) Key {
	k := Key{Name: name, Kind: kind, Default: def, Meaning: meaning}
	if err := validKey(k); err != nil {
		panic(fmt.Sprintf("config: define %s: %v", name, err))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.keys[name]; dup {
		panic(fmt.Sprintf("config: define %s: key defined twice", name))
	}
	for _, o := range r.keys {
		switch {
		case o.EnvName() == k.EnvName():
			panic(fmt.Sprintf("config: define %s: same environment variable %s as key %s", name, k.EnvName(), o.Name))
		case strings.HasPrefix(name, o.Name+"."), strings.HasPrefix(o.Name, name+"."):
			panic(fmt.Sprintf("config: define %s: nests with key %s", name, o.Name))
		}
	}
	r.keys[name] = k
	return k
}

// Registered returns the keys of r sorted by name.
func (r *Register) Registered() []Key {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Key, 0, len(r.keys))
	for _, k := range r.keys {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b Key) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func (r *Register) lookup(name string) (Key, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, ok := r.keys[name]
	return k, ok
}

func validKey(k Key) error {
	if !namePattern.MatchString(k.Name) {
		return fmt.Errorf("name %q is not lowercase dotted snake_case with at least two parts", k.Name)
	}
	if err := checkValue(k.Kind, k.Default); err != nil {
		return fmt.Errorf("default: %w", err)
	}
	if strings.ContainsAny(k.Default, "`|\n\r") || strings.TrimSpace(k.Default) != k.Default {
		return fmt.Errorf("default %q has a backtick, pipe, line break or outer space the documentation table cannot hold", k.Default)
	}
	if strings.TrimSpace(k.Meaning) == "" {
		return fmt.Errorf("meaning is empty")
	}
	if strings.ContainsAny(k.Meaning, "|\n\r") {
		return fmt.Errorf("meaning %q has a pipe or line break the documentation table cannot hold", k.Meaning)
	}
	return nil
}

// checkValue reports whether s is a valid value of kind.
func checkValue(kind Kind, s string) error {
	var err error
	switch kind {
	case KindString:
	case KindInt:
		_, err = parseInt(s)
	case KindBytes:
		_, err = parseBytes(s)
	case KindDuration:
		_, err = parseDuration(s)
	case KindBool:
		_, err = parseBool(s)
	default:
		err = fmt.Errorf("unknown kind %q", kind)
	}
	return err
}

func parseInt(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	return n, nil
}

func parseBytes(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number of bytes", s)
	}
	if n < 0 {
		return 0, fmt.Errorf("%q is a negative number of bytes", s)
	}
	return n, nil
}

func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 15s or 1h30m", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%q is a negative duration", s)
	}
	return d, nil
}

func parseBool(s string) (bool, error) {
	b, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil {
		return false, fmt.Errorf("%q is not true or false", s)
	}
	return b, nil
}
