package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"

	"bothy.example.com/server/internal/wire"
)

// adminDemo builds the demo world (wire.App.Demo) and prints its people with fresh tokens:
// a table and curl commands for people, or with --json one line of JSON for scripts. With
// --echo-token-file it also writes the Echo agent's fresh token into that file (mode 0600),
// for make demo to start the example agent of examples/agents/echo with it.
func adminDemo(ctx context.Context, args, environ []string, stdout, stderr io.Writer) error {
	var asJSON bool
	var echoTokenFile string
	configPath, err := flags("admin demo", args, environ, stderr, func(fs *flag.FlagSet) {
		fs.BoolVar(&asJSON, "json", false, "print one line of JSON instead of the table")
		fs.StringVar(&echoTokenFile, "echo-token-file", "", "write the Echo agent's fresh token into this file (mode 0600), for examples/agents/echo")
	})
	if err != nil {
		return err
	}
	return withApp(ctx, configPath, environ, stderr, func(ctx context.Context, app *wire.App, logger *slog.Logger) error {
		w, err := app.Demo(ctx)
		if err != nil {
			return fail(ctx, logger, "demo", err)
		}
		logger.InfoContext(ctx, "demo world ready",
			"principals", w.Created.Principals, "spaces", w.Created.Spaces, "channels", w.Created.Channels,
			"grants", w.Created.Grants, "threads", w.Created.Threads, "messages", w.Created.Messages,
			"read_states", w.Created.ReadStates, "drafts", w.Created.Drafts)
		if echoTokenFile != "" {
			if err := writeSecretFile(echoTokenFile, w.Person("echo").Token.Reveal()); err != nil {
				return fail(ctx, logger, "demo", err)
			}
		}
		if asJSON {
			return writeJSON(stdout, demoJSON(w))
		}
		return printDemo(stdout, w)
	})
}

// demoOutput is what bothy admin demo --json prints.
type demoOutput struct {
	Created wire.DemoCounts `json:"created"`
	People  []demoPersonOut `json:"people"`
	Spaces  []demoSpaceOut  `json:"spaces"`
	Threads []demoThreadOut `json:"threads"`
	BaseURL string          `json:"base_url"`
}

type demoPersonOut struct {
	Name        string `json:"name"`
	Handle      string `json:"handle"`
	Kind        string `json:"kind"`
	PrincipalID string `json:"principal_id"`
	Access      string `json:"access"`
	Token       string `json:"token"`
}

type demoSpaceOut struct {
	Name     string           `json:"name"`
	ID       string           `json:"id"`
	Channels []demoChannelOut `json:"channels"`
}

type demoChannelOut struct {
	Name string `json:"name"`
	ID   string `json:"id"`
}

type demoThreadOut struct {
	Key      string `json:"key"`
	Space    string `json:"space"`
	Channel  string `json:"channel"`
	Title    string `json:"title"`
	ID       string `json:"id"`
	Messages int    `json:"messages"`
}

// demoJSON shapes the world for --json, with the tokens revealed (stdout only).
func demoJSON(w wire.DemoWorld) demoOutput {
	out := demoOutput{
		Created: w.Created, BaseURL: w.BaseURL,
		People: []demoPersonOut{}, Spaces: []demoSpaceOut{}, Threads: []demoThreadOut{},
	}
	for _, p := range w.People {
		out.People = append(out.People, demoPersonOut{
			Name: p.Name, Handle: p.Handle, Kind: p.Kind, PrincipalID: p.PrincipalID.String(),
			Access: p.Access, Token: p.Token.Reveal(),
		})
	}
	for _, s := range w.Spaces {
		sp := demoSpaceOut{Name: s.Name, ID: s.ID.String(), Channels: []demoChannelOut{}}
		for _, c := range s.Channels {
			sp.Channels = append(sp.Channels, demoChannelOut{Name: c.Name, ID: c.ID.String()})
		}
		out.Spaces = append(out.Spaces, sp)
	}
	for _, th := range w.Threads {
		out.Threads = append(out.Threads, demoThreadOut{
			Key: th.Key, Space: th.Space, Channel: th.Channel, Title: th.Title, ID: th.ID.String(), Messages: th.Messages,
		})
	}
	return out
}

// printDemo prints what the run created, the spaces, a table of the people with their
// tokens and curl commands to try them.
func printDemo(stdout io.Writer, w wire.DemoWorld) error {
	var b strings.Builder
	c := w.Created
	if c == (wire.DemoCounts{}) {
		b.WriteString("bothy: the demo world is complete; nothing was created.\n\n")
	} else {
		fmt.Fprintf(&b, "bothy: demo world ready; created %d principals, %d spaces, %d channels, %d grants, %d threads, %d messages, %d read states, %d drafts.\n\n",
			c.Principals, c.Spaces, c.Channels, c.Grants, c.Threads, c.Messages, c.ReadStates, c.Drafts)
	}
	b.WriteString("Spaces:")
	for i, s := range w.Spaces {
		if i > 0 {
			b.WriteString(",")
		}
		names := make([]string, 0, len(s.Channels))
		for _, ch := range s.Channels {
			names = append(names, "#"+ch.Name)
		}
		fmt.Fprintf(&b, " %s (%s)", s.Name, strings.Join(names, ", "))
	}
	fmt.Fprintf(&b, "\nThreads: %d, with @mentions; Sam and Robin have read states and drafts.\n\n", len(w.Threads))
	b.WriteString("Fresh tokens, shown this once (the server keeps only their hashes):\n\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "  NAME\tHANDLE\tKIND\tACCESS\tPRINCIPAL\tTOKEN")
	for _, p := range w.People {
		_, _ = fmt.Fprintf(tw, "  %s\t@%s\t%s\t%s\t%s\t%s\n", p.Name, p.Handle, p.Kind, p.Access, p.PrincipalID, p.Token.Reveal())
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	sam, robin := w.Person("sam"), w.Person("robin")
	b.WriteString("\nTry it while bothy serves (make run): Sam sees Support and Marketing, Robin sees Support only:\n\n")
	fmt.Fprintf(&b, "  curl -H \"Authorization: Bearer %s\" %s/api/v1/spaces\n", sam.Token.Reveal(), w.BaseURL)
	fmt.Fprintf(&b, "  curl -H \"Authorization: Bearer %s\" %s/api/v1/spaces\n\n", robin.Token.Reveal(), w.BaseURL)
	if len(w.Threads) > 0 && w.Person("echo").Handle != "" {
		th := w.Threads[0]
		fmt.Fprintf(&b, "Ask the echo agent (make demo starts examples/agents/echo; make demo-stop stops it) in %s #%s, %q, as Sam:\n\n", th.Space, th.Channel, th.Title)
		fmt.Fprintf(&b, "  curl -H \"Authorization: Bearer %s\" -H \"Content-Type: application/json\" -d '{\"content_md\":\"@echo hello\"}' %s/api/v1/threads/%s/messages\n", sam.Token.Reveal(), w.BaseURL, th.ID)
		fmt.Fprintf(&b, "  curl -H \"Authorization: Bearer %s\" %s/api/v1/threads/%s/messages\n\n", sam.Token.Reveal(), w.BaseURL, th.ID)
		b.WriteString("The reply \"Echo: hello\" follows yours, and Sam's events (GET /api/v1/events) carry its run, run.created then run.updated succeeded.\n\n")
	}
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// writeSecretFile writes a token into a file only its owner may read, replacing what was there.
func writeSecretFile(path, secret string) error {
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		return fmt.Errorf("write the token file: %w", err)
	}
	// WriteFile keeps the mode of a file that exists: tighten it.
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("write the token file: %w", err)
	}
	return nil
}
