// Command archgen writes .go-arch-lint.yml from architecture/modules.yaml, or
// with -check fails when the committed file no longer matches the register,
// so the import rules go-arch-lint enforces can never drift from the register.
//
// Run it from the repository root:
//
//	go run ./architecture/cmd/archgen          # regenerate
//	go run ./architecture/cmd/archgen -check   # fail on drift (make arch)
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"bothy.example.com/architecture/internal/archgen"
	"bothy.example.com/architecture/internal/register"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit code (0 ok, 1 drift,
// 2 usage or I/O error) so tests can drive every path.
func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("archgen", flag.ContinueOnError)
	fl.SetOutput(stderr)
	registerPath := fl.String("register", "architecture/modules.yaml", "module register to read")
	out := fl.String("out", ".go-arch-lint.yml", "go-arch-lint config to write or check")
	check := fl.Bool("check", false, "do not write; fail when -out differs from what would be generated")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() > 0 {
		sayf(stderr, "archgen: unexpected arguments %q\n", fl.Args())
		return 2
	}

	reg, err := register.Load(*registerPath)
	if err != nil {
		sayf(stderr, "archgen: %v\n", err)
		return 2
	}
	want, err := archgen.Generate(reg, *registerPath)
	if err != nil {
		sayf(stderr, "archgen: %v\n", err)
		return 2
	}

	if *check {
		have, err := os.ReadFile(*out)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			sayf(stderr, "archgen: %s is missing; run go run ./architecture/cmd/archgen\n", *out)
			return 1
		case err != nil:
			sayf(stderr, "archgen: read %s: %v\n", *out, err)
			return 2
		}
		if !bytes.Equal(have, want) {
			sayf(stderr, "archgen: %s is stale (%s); run go run ./architecture/cmd/archgen\n", *out, firstDifference(have, want))
			return 1
		}
		sayf(stdout, "archgen: %s matches %s\n", *out, *registerPath)
		return 0
	}

	//nolint:gosec // a committed config file, readable by every tool like the rest of the tree
	if err := os.WriteFile(*out, want, 0o644); err != nil {
		sayf(stderr, "archgen: write %s: %v\n", *out, err)
		return 2
	}
	sayf(stdout, "archgen: wrote %s from %s\n", *out, *registerPath)
	return 0
}

// firstDifference names the first line that differs, so a drift report
// points at the change instead of only saying "different".
func firstDifference(have, want []byte) string {
	h := strings.Split(string(have), "\n")
	w := strings.Split(string(want), "\n")
	for i := 0; i < len(h) || i < len(w); i++ {
		var hl, wl string
		if i < len(h) {
			hl = h[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if hl != wl {
			return fmt.Sprintf("line %d is %q, want %q", i+1, hl, wl)
		}
	}
	return "same lines, different bytes"
}

// sayf writes one message of the command. A failed write to the terminal or
// a closed pipe leaves nothing useful to do, and the exit code still tells.
func sayf(w io.Writer, format string, a ...any) {
	_, _ = fmt.Fprintf(w, format, a...)
}
