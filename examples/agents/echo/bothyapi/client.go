// Package bothyapi implements the echo agent's ports over bothy's public HTTP API and its
// WebSocket gateway (api/openapi.yaml, api/gateway.asyncapi.yaml), with nothing but the
// standard library and a WebSocket client: it is what any program outside bothy would write.
package bothyapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"bothy.example.com/examples/agents/echo/agent"
)

// Client calls bothy's HTTP API with the agent's token.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// New returns a client of the bothy at baseURL (such as http://127.0.0.1:8080).
func New(baseURL, token string, hc *http.Client) *Client {
	return &Client{base: strings.TrimRight(baseURL, "/"), token: token, http: hc}
}

// maxBody bounds what the client reads of one response (a page of events is the largest).
const maxBody = 16 << 20

// do sends one request and decodes a 2xx JSON answer into out (when not nil); any other
// answer becomes an *agent.APIError.
func (c *Client) do(ctx context.Context, method, path string, in any, key string, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("request %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		pe := &agent.APIError{Status: resp.StatusCode}
		_ = json.Unmarshal(raw, pe) // a body that is no problem leaves the status alone
		pe.Status = resp.StatusCode
		return fmt.Errorf("%s %s: %w", method, path, pe)
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: decode the answer: %w", method, path, err)
	}
	return nil
}

// Me reads the calling principal (getMe).
func (c *Client) Me(ctx context.Context) (agent.Me, error) {
	var out agent.Me
	err := c.do(ctx, http.MethodGet, "/api/v1/me", nil, "", &out)
	return out, err
}

// EnsureConsumer creates the consumer or returns the existing one (createConsumer).
func (c *Client) EnsureConsumer(ctx context.Context, name string) (agent.Consumer, error) {
	var out agent.Consumer
	err := c.do(ctx, http.MethodPut, "/api/v1/consumers/"+url.PathEscape(name), nil, "", &out)
	return out, err
}

// DeleteConsumer forgets the consumer (deleteConsumer).
func (c *Client) DeleteConsumer(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/api/v1/consumers/"+url.PathEscape(name), nil, "", nil)
}

// ConsumerEvents reads one page after the consumer's acked_seq (listConsumerEvents).
func (c *Client) ConsumerEvents(ctx context.Context, name string) (agent.EventPage, error) {
	var out agent.EventPage
	err := c.do(ctx, http.MethodGet, "/api/v1/consumers/"+url.PathEscape(name)+"/events", nil, "", &out)
	return out, err
}

// AckConsumer moves the consumer forward (ackEvents).
func (c *Client) AckConsumer(ctx context.Context, name string, seq int64) error {
	return c.do(ctx, http.MethodPost, "/api/v1/consumers/"+url.PathEscape(name)+"/ack", map[string]int64{"seq": seq}, "", nil)
}

// Heartbeat reports the agent alive (sendAgentHeartbeat).
func (c *Client) Heartbeat(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, "/api/v1/agents/me/heartbeat", struct{}{}, "", nil)
}

// GetMessage reads a message (getMessage).
func (c *Client) GetMessage(ctx context.Context, id string) (agent.Message, error) {
	var out agent.Message
	err := c.do(ctx, http.MethodGet, "/api/v1/messages/"+url.PathEscape(id), nil, "", &out)
	return out, err
}

// CreateRun starts a run (createRun).
func (c *Client) CreateRun(ctx context.Context, threadID string, in agent.CreateRun, key string) (agent.Run, error) {
	var out agent.Run
	err := c.do(ctx, http.MethodPost, "/api/v1/threads/"+url.PathEscape(threadID)+"/runs", in, key, &out)
	return out, err
}

// UpdateRun changes a run (updateRun).
func (c *Client) UpdateRun(ctx context.Context, runID string, in agent.UpdateRun) (agent.Run, error) {
	var out agent.Run
	err := c.do(ctx, http.MethodPatch, "/api/v1/runs/"+url.PathEscape(runID), in, "", &out)
	return out, err
}

// GetRun reads a run (getRun).
func (c *Client) GetRun(ctx context.Context, runID string) (agent.Run, error) {
	var out agent.Run
	err := c.do(ctx, http.MethodGet, "/api/v1/runs/"+url.PathEscape(runID), nil, "", &out)
	return out, err
}

// PostMessage posts a message (postMessage).
func (c *Client) PostMessage(ctx context.Context, threadID string, in agent.PostMessage, key string) (agent.Message, error) {
	var out agent.Message
	err := c.do(ctx, http.MethodPost, "/api/v1/threads/"+url.PathEscape(threadID)+"/messages", in, key, &out)
	return out, err
}
