// Command bothy is the bothy chat server: one binary that serves its roles
// (bothy serve: the API and the maintenance of the event log), migrates the
// database (bothy migrate), runs the log's maintenance once (bothy maintain)
// and reports its build (bothy version). Output meant for scripts is JSON on
// stdout; logs are JSON lines on stderr.
package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}
