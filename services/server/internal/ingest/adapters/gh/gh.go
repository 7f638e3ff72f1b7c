// Package gh reads pull requests and issues for the ingester: from the gh command when it is
// installed and authenticated (gh pr list and gh issue list with --json, paged by an
// updated:>= search floor), or from JSON files in the same format (--prs-json, --issues-json),
// so a pass works offline and in tests. gh runs without a shell, through a Runner.
package gh

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"time"

	"bothy.example.com/server/internal/ingest/app"
	"bothy.example.com/server/internal/ingest/domain"
)

// The --json fields the ingester asks gh for.
const (
	// PRFields are the fields of gh pr list --json.
	PRFields = "number,title,body,author,state,createdAt,updatedAt,closedAt,mergedAt,headRefName,baseRefName,mergeCommit,url,labels"
	// IssueFields are the fields of gh issue list --json.
	IssueFields = "number,title,body,author,state,stateReason,createdAt,updatedAt,closedAt,url,labels"
)

// Runner runs gh with an argument list in a directory and returns its standard output and
// error; err is non-nil when gh could not run or exited non-zero.
type Runner interface {
	// Run runs gh args in dir.
	Run(ctx context.Context, dir string, args ...string) (stdout, stderr []byte, err error)
}

// ExecRunner runs the gh binary at Path through os/exec, never through a shell, with prompts,
// colour, pagers and update notices off.
type ExecRunner struct {
	// Path is the gh binary.
	Path string
}

// Run implements Runner.
func (r ExecRunner) Run(ctx context.Context, dir string, args ...string) ([]byte, []byte, error) {
	cmd := exec.CommandContext(ctx, r.Path, args...) //nolint:gosec // gh from PATH with an argument list, no shell; the only free argument is a search built from a time.
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GH_PROMPT_DISABLED=1", "GH_NO_UPDATE_NOTIFIER=1", "NO_COLOR=1", "GH_PAGER=cat", "PAGER=cat")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.Bytes(), stderr.Bytes(), err
}

// Installed returns a Runner for the gh on PATH; ok is false when there is none.
func Installed() (Runner, bool) {
	path, err := exec.LookPath("gh")
	if err != nil {
		return nil, false
	}
	return ExecRunner{Path: path}, true
}

// Authenticated reports whether gh auth status succeeds in dir: gh is logged in to a host.
func Authenticated(ctx context.Context, r Runner, dir string) bool {
	_, _, err := r.Run(ctx, dir, "auth", "status")
	return err == nil
}

// CLI reads pull requests and issues through gh in the clone's directory (gh infers the
// repository from its remote). It implements app.PRSource and app.IssueSource.
type CLI struct {
	runner Runner
	dir    string
	limit  int
	mask   domain.Masker
}

var (
	_ app.PRSource    = (*CLI)(nil)
	_ app.IssueSource = (*CLI)(nil)
)

// NewCLI returns a CLI running gh through r in dir, with pages of pageSize items
// (ingest.gh_page_size), masking gh's error output with mask; a page size below 1 or above
// domain.GHSearchMax is a wiring mistake and panics.
func NewCLI(r Runner, dir string, pageSize int, mask domain.Masker) *CLI {
	if pageSize < 1 || pageSize > domain.GHSearchMax {
		panic(fmt.Sprintf("gh: NewCLI: page size %d, want 1 to %d", pageSize, domain.GHSearchMax))
	}
	return &CLI{runner: r, dir: dir, limit: pageSize, mask: mask}
}

// Name implements app.PRSource.
func (c *CLI) Name() string { return "gh" }

// Search is the --search of a page: sorted by update, ascending, from the floor (inclusive,
// to the second; GitHub's search takes a time with an offset), or from the beginning for the
// zero floor. The floor is a time the pass parsed, so no record's text reaches gh's arguments.
func Search(floor time.Time) string {
	if floor.IsZero() {
		return "sort:updated-asc"
	}
	return "sort:updated-asc updated:>=" + floor.UTC().Truncate(time.Second).Format("2006-01-02T15:04:05+00:00")
}

// Args are gh's arguments for one page of kind (pr or issue) from floor.
func Args(kind string, floor time.Time, limit int) []string {
	fields := PRFields
	if kind == "issue" {
		fields = IssueFields
	}
	return []string{kind, "list", "--state", "all", "--limit", fmt.Sprint(limit), "--json", fields, "--search", Search(floor)}
}

// list runs one page and returns gh's output.
func (c *CLI) list(ctx context.Context, kind string, floor time.Time) ([]byte, error) {
	out, stderr, err := c.runner.Run(ctx, c.dir, Args(kind, floor, c.limit)...)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("gh %s list: %w", kind, ctx.Err())
		}
		// gh's message can echo a URL or a token: it goes through the mask.
		return nil, fmt.Errorf("gh %s list: %w: %s", kind, err, domain.TruncateRunes(c.mask.CleanLine(string(stderr)), 300))
	}
	return out, nil
}

// PullRequests implements app.PRSource: one page of at most ingest.gh_page_size pull requests,
// full when it holds that many.
func (c *CLI) PullRequests(ctx context.Context, floor time.Time) (domain.SourcePage[domain.RawPR], error) {
	out, err := c.list(ctx, "pr", floor)
	if err != nil {
		return domain.SourcePage[domain.RawPR]{}, err
	}
	page, n, err := decodePRs(out)
	if err != nil {
		return domain.SourcePage[domain.RawPR]{}, fmt.Errorf("gh pr list: %w", err)
	}
	page.Full = n >= c.limit
	return page, nil
}

// Issues implements app.IssueSource, like PullRequests.
func (c *CLI) Issues(ctx context.Context, floor time.Time) (domain.SourcePage[domain.RawIssue], error) {
	out, err := c.list(ctx, "issue", floor)
	if err != nil {
		return domain.SourcePage[domain.RawIssue]{}, err
	}
	page, n, err := decodeIssues(out)
	if err != nil {
		return domain.SourcePage[domain.RawIssue]{}, fmt.Errorf("gh issue list: %w", err)
	}
	page.Full = n >= c.limit
	return page, nil
}

// File reads pull requests or issues from a JSON file in gh's --json output format: an array
// of objects with the fields PRFields or IssueFields name. It implements app.PRSource or
// app.IssueSource (use it as the one its file holds). The whole file is one page, never full.
type File struct {
	path string
}

var (
	_ app.PRSource    = File{}
	_ app.IssueSource = File{}
)

// NewFile returns a File reading path.
func NewFile(path string) File { return File{path: path} }

// Name implements app.PRSource.
func (f File) Name() string { return "file" }

func (f File) read() ([]byte, error) {
	data, err := os.ReadFile(f.path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", f.path, err)
	}
	return data, nil
}

// PullRequests implements app.PRSource; the floor is left to the pass.
func (f File) PullRequests(context.Context, time.Time) (domain.SourcePage[domain.RawPR], error) {
	data, err := f.read()
	if err != nil {
		return domain.SourcePage[domain.RawPR]{}, err
	}
	page, _, err := decodePRs(data)
	if err != nil {
		return domain.SourcePage[domain.RawPR]{}, fmt.Errorf("%s: %w", f.path, err)
	}
	return page, nil
}

// Issues implements app.IssueSource; the floor is left to the pass.
func (f File) Issues(context.Context, time.Time) (domain.SourcePage[domain.RawIssue], error) {
	data, err := f.read()
	if err != nil {
		return domain.SourcePage[domain.RawIssue]{}, err
	}
	page, _, err := decodeIssues(data)
	if err != nil {
		return domain.SourcePage[domain.RawIssue]{}, fmt.Errorf("%s: %w", f.path, err)
	}
	return page, nil
}

// Choice is what decides the sources of a pass.
type Choice struct {
	// Dir is the clone, where gh runs.
	Dir string
	// PRsJSON and IssuesJSON are the JSON files given (--prs-json, --issues-json); "" for
	// none.
	PRsJSON, IssuesJSON string
	// Runner runs gh; nil means the gh on PATH, or none when it is not installed.
	Runner Runner
	// PageSize is ingest.gh_page_size, the items asked of gh per page; 0 means
	// domain.GHSearchMax, the most GitHub's search returns.
	PageSize int
	// Mask masks gh's error output.
	Mask domain.Masker
}

// Choose returns the sources of a pass: a given JSON file, else gh when it is installed and
// authenticated, else nil (no source). gh's authentication is checked only when a section
// needs it.
func Choose(ctx context.Context, c Choice) (app.PRSource, app.IssueSource) {
	var prs app.PRSource
	var issues app.IssueSource
	if c.PRsJSON != "" {
		prs = NewFile(c.PRsJSON)
	}
	if c.IssuesJSON != "" {
		issues = NewFile(c.IssuesJSON)
	}
	if prs != nil && issues != nil {
		return prs, issues
	}
	r := c.Runner
	if r == nil {
		installed, ok := Installed()
		if !ok {
			return prs, issues
		}
		r = installed
	}
	if !Authenticated(ctx, r, c.Dir) {
		return prs, issues
	}
	size := c.PageSize
	if size == 0 {
		size = domain.GHSearchMax
	}
	cli := NewCLI(r, c.Dir, size, c.Mask)
	if prs == nil {
		prs = cli
	}
	if issues == nil {
		issues = cli
	}
	return prs, issues
}

// ghAuthor is gh's author object.
type ghAuthor struct {
	Login string `json:"login"`
}

// ghLabel is gh's label object.
type ghLabel struct {
	Name string `json:"name"`
}

// ghPR is one object of gh pr list --json.
type ghPR struct {
	Number      int       `json:"number"`
	Title       string    `json:"title"`
	Body        string    `json:"body"`
	Author      *ghAuthor `json:"author"`
	State       string    `json:"state"`
	CreatedAt   string    `json:"createdAt"`
	UpdatedAt   string    `json:"updatedAt"`
	ClosedAt    string    `json:"closedAt"`
	MergedAt    string    `json:"mergedAt"`
	HeadRefName string    `json:"headRefName"`
	BaseRefName string    `json:"baseRefName"`
	MergeCommit *struct {
		OID string `json:"oid"`
	} `json:"mergeCommit"`
	URL    string    `json:"url"`
	Labels []ghLabel `json:"labels"`
}

// ghIssue is one object of gh issue list --json.
type ghIssue struct {
	Number      int       `json:"number"`
	Title       string    `json:"title"`
	Body        string    `json:"body"`
	Author      *ghAuthor `json:"author"`
	State       string    `json:"state"`
	StateReason string    `json:"stateReason"`
	CreatedAt   string    `json:"createdAt"`
	UpdatedAt   string    `json:"updatedAt"`
	ClosedAt    string    `json:"closedAt"`
	URL         string    `json:"url"`
	Labels      []ghLabel `json:"labels"`
}

// errNotArray is the error of output that is not a JSON array. The decoder's own message is
// not repeated: it can quote the input.
var errNotArray = errors.New("the output is not a JSON array of objects")

// elements splits a JSON array into its elements.
func elements(data []byte) ([]json.RawMessage, error) {
	var all []json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, errNotArray
	}
	return all, nil
}

// decodePRs decodes gh pr list output; an element that does not decode counts as unreadable.
func decodePRs(data []byte) (domain.SourcePage[domain.RawPR], int, error) {
	all, err := elements(data)
	if err != nil {
		return domain.SourcePage[domain.RawPR]{}, 0, err
	}
	var page domain.SourcePage[domain.RawPR]
	for _, raw := range all {
		var p ghPR
		if err := json.Unmarshal(raw, &p); err != nil {
			page.Unreadable++
			continue
		}
		r := domain.RawPR{
			Number: p.Number, Title: p.Title, Body: p.Body, State: p.State, CreatedAt: p.CreatedAt,
			UpdatedAt: p.UpdatedAt, ClosedAt: p.ClosedAt, MergedAt: p.MergedAt, HeadRef: p.HeadRefName,
			BaseRef: p.BaseRefName, URL: p.URL, Labels: labels(p.Labels),
		}
		if p.Author != nil {
			r.Author = p.Author.Login
		}
		if p.MergeCommit != nil {
			r.MergeCommit = p.MergeCommit.OID
		}
		page.Items = append(page.Items, r)
	}
	return page, len(all), nil
}

// decodeIssues decodes gh issue list output like decodePRs.
func decodeIssues(data []byte) (domain.SourcePage[domain.RawIssue], int, error) {
	all, err := elements(data)
	if err != nil {
		return domain.SourcePage[domain.RawIssue]{}, 0, err
	}
	var page domain.SourcePage[domain.RawIssue]
	for _, raw := range all {
		var i ghIssue
		if err := json.Unmarshal(raw, &i); err != nil {
			page.Unreadable++
			continue
		}
		r := domain.RawIssue{
			Number: i.Number, Title: i.Title, Body: i.Body, State: i.State, StateReason: i.StateReason,
			CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt, ClosedAt: i.ClosedAt, URL: i.URL, Labels: labels(i.Labels),
		}
		if i.Author != nil {
			r.Author = i.Author.Login
		}
		page.Items = append(page.Items, r)
	}
	return page, len(all), nil
}

func labels(ls []ghLabel) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Name)
	}
	return out
}
