package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	_ "embed" // the baselines' SQL
	_ "embed" // the snapshot baseline's SQL
	"strconv"

	"github.com/jackc/pgx/v5"
)

// requestTimeout bounds one request, so a hanging server fails the run.
const requestTimeout = 30 * time.Second

// PostContent is what every message says: a typical chat line without a mention, so no
// principal lookup runs.
const PostContent = "Sam, the deploy is done: the new build is live on every node."

// NewPostClient returns a client with a connection pool of its own, sized for one request at
// a time and kept alive between requests.
func NewPostClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone() //nolint:forcetypeassert // net/http's documented type.
	tr.Proxy = nil
	tr.MaxIdleConns = 1
	tr.MaxIdleConnsPerHost = 1
	tr.MaxConnsPerHost = 1
	return &http.Client{Transport: tr, Timeout: requestTimeout}
}

// Post sends one POST with a JSON body as the bearer of token, reads the whole response and
// returns its body; a status other than want is an error.
func Post(ctx context.Context, c *http.Client, url, token string, body []byte, want int) ([]byte, error) {
	return Call(ctx, c, http.MethodPost, url, token, body, want)
}

// CreateID POSTs body as JSON to url with token, expects 201 and returns the id of what was
// created: how the cases build their worlds over HTTP.
func CreateID(ctx context.Context, c *http.Client, url, token string, body any) (uuid.UUID, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return uuid.Nil, err
	}
	out, err := Post(ctx, c, url, token, raw, http.StatusCreated)
	if err != nil {
		return uuid.Nil, err
	}
	var created struct {
		ID uuid.UUID `json:"id"`
	}
	if err := json.Unmarshal(out, &created); err != nil || created.ID == uuid.Nil {
		return uuid.Nil, fmt.Errorf("POST %s: no id in %s", url, out)
	}
	return created.ID, nil
}

// Call sends one request (with a JSON body unless body is nil) as the bearer of token, reads
// the whole response and returns its body; a status other than want is an error.
func Call(ctx context.Context, c *http.Client, method, url, token string, body []byte, want int) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, fmt.Errorf("new request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, req.URL.Path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read the response: %w", method, req.URL.Path, err)
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: status %d, want %d: %s", method, req.URL.Path, resp.StatusCode, want, out)
	}
	return out, nil
}

// The Accept-Encoding values the benchmark's requests send.
const (
	// EncodingIdentity asks for the body as it is, without compression.
	EncodingIdentity = "identity"
	// EncodingGzip asks for gzip, as browsers and HTTP libraries do.
	EncodingGzip = "gzip"
)

// GetRaw GETs url as the bearer of token into buf (reset first), asking for no compression:
// the catch-up figures measure the server's pages without the cost of compressing them (the
// snapshot's figure asks for gzip, getCoded). A status other than 200 is an error.
func GetRaw(ctx context.Context, c *http.Client, url, token string, buf *bytes.Buffer) error {
	_, err := GetCoded(ctx, c, url, token, EncodingIdentity, buf)
	return err
}

// GetCoded GETs url as the bearer of token with Accept-Encoding: encoding into buf (reset
// first) and returns the response's Content-Encoding. Because the request names its encoding,
// the client does not decompress: buf holds the body as it came over the wire. A status other
// than 200 is an error.
func GetCoded(ctx context.Context, c *http.Client, url, token, encoding string, buf *bytes.Buffer) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", fmt.Errorf("new request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept-Encoding", encoding)
	resp, err := c.Do(req)
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", req.URL.Path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return "", fmt.Errorf("GET %s: read the response: %w", req.URL.Path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: status %d: %s", req.URL.RequestURI(), resp.StatusCode, buf.Bytes())
	}
	return resp.Header.Get("Content-Encoding"), nil
}

// LoopFor calls op(k), op(k+1), ... until d has passed and returns each call's latency and
// the next k. A call started before the deadline counts.
func LoopFor(ctx context.Context, d time.Duration, k int, op func(int) error) ([]time.Duration, int, error) {
	var out []time.Duration
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if err := ctx.Err(); err != nil {
			return nil, k, err
		}
		began := time.Now()
		if err := op(k); err != nil {
			return nil, k, err
		}
		out = append(out, time.Since(began))
		k++
	}
	if len(out) == 0 {
		return nil, k, errors.New("no call finished")
	}
	return out, k, nil
}

// Each runs query with args and scans every row into dst; when the first element of dst is a
// func() error, it is called after each row and the rest are the scan targets.
func Each(ctx context.Context, pool *pgxpool.Pool, query string, args []any, dst ...any) error {
	fn := func() error { return nil }
	if f, ok := dst[0].(func() error); ok {
		fn, dst = f, dst[1:]
	}
	rows, err := pool.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	_, err = pgx.ForEachRow(rows, dst, fn)
	return err
}

// ScratchDatabase creates a database named prefix and a random suffix on the cluster of url
// and returns its URL and a function that drops it (forcing its connections closed).
func ScratchDatabase(ctx context.Context, url, prefix string) (string, func() error, error) {
	name := prefix + "_" + strconv.FormatUint(uint64(uuid.New().ID()), 36)
	conn, err := Connect(ctx, url)
	if err != nil {
		return "", nil, err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", nil, fmt.Errorf("create database %s: %w", name, err)
	}
	dbURL, err := DatabaseURL(url, name)
	if err != nil {
		return "", nil, err
	}
	drop := func() error {
		dctx := context.WithoutCancel(ctx)
		conn, err := Connect(dctx, url)
		if err != nil {
			return err
		}
		defer func() { _ = conn.Close(dctx) }()
		if _, err := conn.Exec(dctx, "DROP DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop database %s: %w", name, err)
		}
		return nil
	}
	return dbURL, drop, nil
}
