// Command echo is an example agent of bothy: it answers every @mention (and every direct
// message) with a run and a reply that echoes the message, using only bothy's public HTTP and
// WebSocket API. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"bothy.example.com/examples/agents/echo/agent"
	"bothy.example.com/examples/agents/echo/bothyapi"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		_, _ = fmt.Fprintln(os.Stderr, "echo:", err)
		os.Exit(1)
	}
}

// options are the command line, each with an environment variable as its default.
type options struct {
	baseURL, token, tokenFile string
	cfg                       agent.Config
	requestTimeout            time.Duration
}

// parse reads the flags; the environment gives their defaults.
func parse(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("echo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	dur := func(name string, def time.Duration) time.Duration {
		if v := getenv(name); v != "" {
			if d, err := time.ParseDuration(v); err == nil {
				return d
			}
		}
		return def
	}
	var o options
	fs.StringVar(&o.baseURL, "url", env("BOTHY_URL", "http://127.0.0.1:8080"), "bothy's base URL (env BOTHY_URL)")
	fs.StringVar(&o.token, "token", env("BOTHY_AGENT_TOKEN", ""), "the agent's token (env BOTHY_AGENT_TOKEN)")
	fs.StringVar(&o.tokenFile, "token-file", env("BOTHY_AGENT_TOKEN_FILE", ""), "a file holding the agent's token, read when -token is empty (env BOTHY_AGENT_TOKEN_FILE)")
	fs.StringVar(&o.cfg.Consumer, "consumer", env("ECHO_CONSUMER", "echo"), "the durable consumer's name (env ECHO_CONSUMER)")
	fs.DurationVar(&o.cfg.HeartbeatInterval, "heartbeat-interval", dur("ECHO_HEARTBEAT_INTERVAL", 20*time.Second), "how often to report alive; below the server's agents.presence_idle_after (env ECHO_HEARTBEAT_INTERVAL)")
	fs.DurationVar(&o.cfg.MinBackoff, "min-backoff", dur("ECHO_MIN_BACKOFF", 250*time.Millisecond), "least wait before a reconnect (env ECHO_MIN_BACKOFF)")
	fs.DurationVar(&o.cfg.MaxBackoff, "max-backoff", dur("ECHO_MAX_BACKOFF", 15*time.Second), "most wait before a reconnect (env ECHO_MAX_BACKOFF)")
	fs.DurationVar(&o.cfg.ReplyDelay, "reply-delay", dur("ECHO_REPLY_DELAY", 0), "pause between starting the run and replying, to watch the run (env ECHO_REPLY_DELAY)")
	fs.DurationVar(&o.cfg.CatchUpAckInterval, "catchup-ack-interval", dur("ECHO_CATCHUP_ACK_INTERVAL", 100*time.Millisecond), "while catching up, acknowledge at most once per interval; 0 acknowledges every event (env ECHO_CATCHUP_ACK_INTERVAL)")
	fs.DurationVar(&o.requestTimeout, "request-timeout", dur("ECHO_REQUEST_TIMEOUT", 30*time.Second), "most time one HTTP request may take (env ECHO_REQUEST_TIMEOUT)")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("flags: %w", err)
	}
	if o.token == "" && o.tokenFile != "" {
		b, err := os.ReadFile(o.tokenFile)
		if err != nil {
			return o, fmt.Errorf("read the token file: %w", err)
		}
		o.token = strings.TrimSpace(string(b))
	}
	switch {
	case o.token == "":
		return o, errors.New("no token: set -token, -token-file, BOTHY_AGENT_TOKEN or BOTHY_AGENT_TOKEN_FILE")
	case o.cfg.HeartbeatInterval <= 0, o.cfg.MinBackoff <= 0, o.cfg.MaxBackoff < o.cfg.MinBackoff, o.cfg.ReplyDelay < 0, o.cfg.CatchUpAckInterval < 0, o.requestTimeout <= 0:
		return o, errors.New("durations must be positive, and -max-backoff at least -min-backoff")
	}
	return o, nil
}

// run parses the command line and runs the agent until ctx ends.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	o, err := parse(args, getenv, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(stderr, nil))
	rest := &http.Client{Timeout: o.requestTimeout}
	// The gateway connection lives long: no client timeout, the dial is bounded by ctx.
	ws := &http.Client{}
	a := agent.New(bothyapi.New(o.baseURL, o.token, rest), bothyapi.NewGateway(o.baseURL, o.token, ws), o.cfg, log)
	if err := a.Run(ctx); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	log.InfoContext(ctx, "echo agent stopped")
	return nil
}
