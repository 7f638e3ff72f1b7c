package wiretest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"bothy.example.com/server/internal/kernel/problem"
)

// requestTimeout bounds one request of a Client, so a hanging server fails
// the test with a message instead of hanging it.
const requestTimeout = 30 * time.Second

// Client sends requests to a test server and checks every response with
// Validate; a response that breaks the contract fails the test. Its methods
// call t.Fatal, so use them from the test's goroutine.
type Client struct {
	t    testing.TB
	base string
	http *http.Client
}

// NewClient returns a Client for the server at baseURL (an httptest
// server's URL). Its idle connections are closed when the test ends.
func NewClient(t testing.TB, baseURL string) *Client {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(tr.CloseIdleConnections)
	return &Client{
		t:    t,
		base: strings.TrimSuffix(baseURL, "/"),
		http: &http.Client{Transport: tr, Timeout: requestTimeout},
	}
}

// Response is a response whose body has been read in full.
type Response struct {
	// Status is the HTTP status code.
	Status int
	// Header holds the response headers.
	Header http.Header
	// Body is the whole body.
	Body []byte
}

// NewRequest builds a request for path (with its query) on the server. It
// uses the test's context, so it is cancelled when the test ends.
func (c *Client) NewRequest(method, path string, body io.Reader) *http.Request {
	c.t.Helper()
	req, err := http.NewRequestWithContext(c.t.Context(), method, c.base+path, body)
	if err != nil {
		c.t.Fatalf("new request %s %s: %v", method, path, err)
	}
	return req
}

// Do sends req, reads the whole response and validates it (Validate); it
// fails the test on a transport error or a contract violation.
func (c *Client) Do(req *http.Request) *Response {
	c.t.Helper()
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: read body: %v", req.Method, req.URL.Path, err)
	}
	if err := Validate(req.Context(), req, resp.StatusCode, resp.Header, body); err != nil {
		c.t.Fatalf("%s %s -> %d breaks the API contract:\n%v\nbody: %s", req.Method, req.URL.Path, resp.StatusCode, err, body)
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body}
}

// Get sends GET path and returns the validated response.
func (c *Client) Get(path string) *Response {
	c.t.Helper()
	return c.Do(c.NewRequest(http.MethodGet, path, nil))
}

// JSON decodes the body into v, failing the test when it does not decode.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v\nbody: %s", fmt.Sprintf("%T", v), err, r.Body)
	}
}

// Problem decodes a problem body, failing the test when the response is
// not application/problem+json.
func (r *Response) Problem(t testing.TB) problem.Problem {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); ct != problem.ContentType {
		t.Fatalf("content type = %q, want %s; body: %s", ct, problem.ContentType, r.Body)
	}
	var p problem.Problem
	r.JSON(t, &p)
	return p
}

// RequireProblem fails the test unless the response is a problem with the
// given status and code, and returns it.
func (r *Response) RequireProblem(t testing.TB, status int, code string) problem.Problem {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d; body: %s", r.Status, status, r.Body)
	}
	p := r.Problem(t)
	if p.Code != code {
		t.Fatalf("problem code = %q, want %q; body: %s", p.Code, code, r.Body)
	}
	return p
}
