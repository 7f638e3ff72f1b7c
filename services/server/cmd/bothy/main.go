// Command bothy is the bothy chat server: one binary that serves the API
// (bothy serve), migrates the database (bothy migrate) and reports its build
// (bothy version). Output meant for scripts is JSON on stdout; logs are JSON
// lines on stderr.
package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}
