package wire

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/apivalidate"
	"bothy.example.com/server/internal/ops"
)

// benchServer answers postMessage at once, so the benchmark measures the router, the
// middleware and the strict server's decoding, not the database.
type benchServer struct {
	apigen.StrictServerInterface
}

func (benchServer) PostMessage(_ context.Context, req apigen.PostMessageRequestObject) (apigen.PostMessageResponseObject, error) {
	return apigen.PostMessage201JSONResponse{Id: uuid.Nil, ThreadId: req.ThreadId, ContentMd: req.Body.ContentMd, CreatedAt: time.Unix(0, 0).UTC()}, nil
}

// BenchmarkPostMessageValidation measures a postMessage request through the router (the
// strict server decoding a typical body, a handler answering at once) without and with
// apivalidate's middleware (ADR 0022), side by side: their difference is what the one validation
// place costs a hot write path, before any database work.
func BenchmarkPostMessageValidation(b *testing.B) {
	doc, err := apigen.GetSpec()
	if err != nil {
		b.Fatal(err)
	}
	checks, err := apivalidate.New(doc)
	if err != nil {
		b.Fatal(err)
	}
	body := `{"content_md":"Hi @sam, the **printer** on floor 2 is jammed again; Robin put a note on it. ` +
		`Grüße, and see https://example.com/tickets/42 for the history 👋\n\n- paper tray\n- toner"}`
	path := "/api/v1/threads/" + uuid.NewString() + "/messages"
	// The middleware alone, around a handler that does nothing: its own
	// cost, which the two runs through the router show inside their noise.
	b.Run("middleware-alone", func(b *testing.B) {
		noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
		h := checks.Middleware()(noop)
		rctx := chi.NewRouteContext()
		rctx.RoutePatterns = []string{"/api/v1/threads/{thread_id}/messages"}
		rctx.URLParams.Add("thread_id", uuid.NewString())
		ctx := context.WithValue(context.Background(), chi.RouteCtxKey, rctx)
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			req := httptest.NewRequestWithContext(ctx, http.MethodPost, path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(nil, req)
		}
	})
	for _, c := range []struct {
		name     string
		validate apigen.MiddlewareFunc
	}{
		{"without", nil},
		{"with", checks.Middleware()},
	} {
		b.Run(c.name, func(b *testing.B) {
			metrics, err := ops.NewHTTPMetrics(prometheus.NewRegistry())
			if err != nil {
				b.Fatal(err)
			}
			h := newRouter(routerDeps{
				logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
				maxBodyBytes: 1 << 20,
				metrics:      metrics,
				server:       benchServer{},
				validate:     c.validate,
			})
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				req := httptest.NewRequestWithContext(b.Context(), http.MethodPost, path, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusCreated {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
		})
	}
}

// reportCPU starts counting the process's CPU time (user and system, every thread, the
// garbage collector's included) and returns the function that reports it per operation as
// cpu-ns/op: on a machine shared with other work, wall time per operation says more about
// the neighbours than about the code.
func reportCPU(b *testing.B) func() {
	start := processCPU(b)
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(processCPU(b)-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
