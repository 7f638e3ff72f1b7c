package bothyapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/coder/websocket"

	"bothy.example.com/examples/agents/echo/agent"
)

// Gateway opens gateway sessions resumed from a durable consumer
// (api/gateway.asyncapi.yaml: resume with consumer, ack, acked).
type Gateway struct {
	url   string
	token string
	http  *http.Client
}

// NewGateway returns the gateway of the bothy at baseURL.
func NewGateway(baseURL, token string, hc *http.Client) *Gateway {
	u := strings.TrimRight(baseURL, "/") + "/api/v1/gateway"
	switch {
	case strings.HasPrefix(u, "https://"):
		u = "wss://" + strings.TrimPrefix(u, "https://")
	case strings.HasPrefix(u, "http://"):
		u = "ws://" + strings.TrimPrefix(u, "http://")
	}
	return &Gateway{url: u, token: token, http: hc}
}

// Resume connects and resumes from the consumer.
func (g *Gateway) Resume(ctx context.Context, consumer string) (agent.Stream, error) {
	conn, resp, err := websocket.Dial(ctx, g.url, &websocket.DialOptions{
		HTTPClient: g.http,
		HTTPHeader: http.Header{"Authorization": {"Bearer " + g.token}},
	})
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("dial the gateway: %w", err)
	}
	conn.SetReadLimit(maxBody)
	s := &stream{conn: conn}
	if err := s.write(ctx, map[string]string{"op": "resume", "consumer": consumer}); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// stream is one gateway connection.
type stream struct {
	conn *websocket.Conn
}

// Next reads the next frame.
func (s *stream) Next(ctx context.Context) (agent.Frame, error) {
	_, data, err := s.conn.Read(ctx)
	if err != nil {
		return agent.Frame{}, fmt.Errorf("read a frame: %w", err)
	}
	var f agent.Frame
	if err := json.Unmarshal(data, &f); err != nil {
		return agent.Frame{}, fmt.Errorf("decode a frame: %w", err)
	}
	return f, nil
}

// Ack sends an ack frame; the server's acked answer arrives among the frames Next reads.
func (s *stream) Ack(ctx context.Context, seq int64) error {
	return s.write(ctx, map[string]any{"op": "ack", "seq": seq})
}

// Close ends the connection normally.
func (s *stream) Close() error {
	if err := s.conn.Close(websocket.StatusNormalClosure, ""); err != nil {
		return fmt.Errorf("close the gateway: %w", err)
	}
	return nil
}

// write sends one frame.
func (s *stream) write(ctx context.Context, frame any) error {
	b, err := json.Marshal(frame)
	if err != nil {
		return fmt.Errorf("encode a frame: %w", err)
	}
	if err := s.conn.Write(ctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("write a frame: %w", err)
	}
	return nil
}
