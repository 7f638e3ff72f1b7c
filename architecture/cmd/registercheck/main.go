// Command registercheck checks that architecture/modules.yaml,
// api/operations.yaml, api/openapi.yaml and the SQL of every component agree:
// every OpenAPI operation is registered and enabled, every enabled operation
// is in the OpenAPI document, modules, actions and resources exist, and each
// component's SQL names only the schema it owns and creates only the tables
// the register lists. It prints one line per violation and exits 1 when there
// is any (2 when the inputs cannot be read).
//
// Run it from the repository root:
//
//	go run ./architecture/cmd/registercheck
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"bothy.example.com/architecture/internal/registercheck"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is main without the process, returning the exit code so tests can
// drive it: 0 clean, 1 violations (on stdout, one per line), 2 usage or input
// errors (on stderr).
func run(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("registercheck", flag.ContinueOnError)
	fl.SetOutput(stderr)
	opts := registercheck.Options{}
	fl.StringVar(&opts.Root, "root", ".", "repository root; the other paths are relative to it")
	fl.StringVar(&opts.Register, "register", "architecture/modules.yaml", "module register")
	fl.StringVar(&opts.Operations, "operations", "api/operations.yaml", "operation register")
	fl.StringVar(&opts.OpenAPI, "openapi", "api/openapi.yaml", "OpenAPI document")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() > 0 {
		sayf(stderr, "registercheck: unexpected arguments %q\n", fl.Args())
		return 2
	}
	violations, err := registercheck.Run(opts)
	if err != nil {
		sayf(stderr, "registercheck: %v\n", err)
		return 2
	}
	for _, v := range violations {
		sayln(stdout, v)
	}
	if len(violations) > 0 {
		sayf(stderr, "registercheck: %d violation(s)\n", len(violations))
		return 1
	}
	sayln(stderr, "registercheck: ok")
	return 0
}

// sayf writes one message of the command. A failed write to the terminal or
// a closed pipe leaves nothing useful to do, and the exit code still tells.
func sayf(w io.Writer, format string, a ...any) {
	_, _ = fmt.Fprintf(w, format, a...)
}

// sayln is sayf with fmt.Fprintln's formatting.
func sayln(w io.Writer, a ...any) {
	_, _ = fmt.Fprintln(w, a...)
}
