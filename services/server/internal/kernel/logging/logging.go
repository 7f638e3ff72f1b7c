// Package logging builds bothy's structured logger: JSON lines through
// log/slog, each record tagged with the request id found in its context, so
// every line of one request can be found from the X-Request-Id a client saw.
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"bothy.example.com/server/internal/kernel/correlation"
)

// KeyRequestID is the attribute name of the request id in every log line.
const KeyRequestID = "request_id"

// New returns a JSON logger writing to w at level and above. Records logged
// with a context (InfoContext, LogAttrs, ...) get a request_id attribute from
// correlation.From, unless the record or logger already carries one.
func New(w io.Writer, level slog.Level) *slog.Logger {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})
	return slog.New(&handler{next: h})
}

// ParseLevel turns the value of the log.level key into a slog level. It
// accepts debug, info, warn and error in any case; anything else is an error
// so a typo in the configuration does not silently change verbosity.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return slog.LevelInfo, fmt.Errorf("parse log level %q: want one of debug, info, warn, error", s)
}

type ctxKey struct{}

// With returns a context carrying l, for code that has no logger of its own
// (middleware, problem.Write) to find the composition root's logger.
func With(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// From returns the logger carried by ctx, or slog.Default() when there is
// none, so callers never need a nil check.
func From(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(ctxKey{}).(*slog.Logger); ok && l != nil {
		return l
	}
	return slog.Default()
}

// handler wraps the JSON handler and adds the request id of the context.
type handler struct {
	next slog.Handler
	// hasID is true when WithAttrs already attached a request id at the top
	// level, so Handle must not add a second one.
	hasID bool
	// base and ops replay the logger's groups when a grouped logger logs with
	// an id: attributes added to the record would land inside the group, and
	// the id belongs at the top level. Groups are rare, so the cost is too.
	base slog.Handler
	ops  []op
}

// op is one WithAttrs (group == "") or WithGroup call made after the first
// group.
type op struct {
	group string
	attrs []slog.Attr
}

func (h *handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	id := correlation.From(ctx)
	if h.hasID || id == "" {
		return h.next.Handle(ctx, r)
	}
	if h.base == nil {
		if recordHasID(r) {
			return h.next.Handle(ctx, r)
		}
		r = r.Clone()
		r.AddAttrs(slog.String(KeyRequestID, id))
		return h.next.Handle(ctx, r)
	}
	hh := h.base.WithAttrs([]slog.Attr{slog.String(KeyRequestID, id)})
	for _, o := range h.ops {
		if o.group != "" {
			hh = hh.WithGroup(o.group)
		} else {
			hh = hh.WithAttrs(o.attrs)
		}
	}
	return hh.Handle(ctx, r)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.next = h.next.WithAttrs(attrs)
	if h.base != nil {
		c.ops = append(slices.Clip(h.ops), op{attrs: attrs})
		return &c
	}
	for _, a := range attrs {
		if a.Key == KeyRequestID {
			c.hasID = true
		}
	}
	return &c
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.next = h.next.WithGroup(name)
	if h.base == nil {
		c.base = h.next
	}
	c.ops = append(slices.Clip(h.ops), op{group: name})
	return &c
}

func recordHasID(r slog.Record) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == KeyRequestID {
			found = true
			return false
		}
		return true
	})
	return found
}
