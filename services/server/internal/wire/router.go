package wire

import (
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"bothy.example.com/server/internal/webui"

	"github.com/go-chi/chi/v5"

	"bothy.example.com/server/internal/apigen"
	"bothy.example.com/server/internal/kernel/httpmw"
	"bothy.example.com/server/internal/kernel/logging"
	"bothy.example.com/server/internal/kernel/problem"
	"bothy.example.com/server/internal/ops"
	"bothy.example.com/server/internal/sync/adapters/gateway"
)

// routerDeps are what newRouter mounts.
type routerDeps struct {
	// web, when set, serves the web client's files at / and their own paths
	// (the api role); nil serves none.
	web          *webui.Site
	logger       *slog.Logger
	maxBodyBytes int64
	// retryAfter is http.unavailable_retry_after, the base of every 503's Retry-After.
	retryAfter time.Duration
	metrics    *ops.HTTPMetrics
	server     apigen.StrictServerInterface
	// authenticate runs around every generated operation (see
	// authenticateOperations); nil authenticates nothing (router tests).
	authenticate apigen.MiddlewareFunc
	// idempotency runs around every generated operation inside
	// authenticate, so it sees the actor (httpmw.Idempotency, which acts on
	// POST only); nil means none (router tests).
	idempotency apigen.MiddlewareFunc
	// validate runs around every generated operation inside authenticate
	// and outside idempotency (apivalidate, ADR 0022): the one place
	// bodies and parameters are checked against api/openapi.yaml, so a
	// refused request costs no idempotency claim. nil means none (router
	// tests).
	validate apigen.MiddlewareFunc
	mount    func(chi.Router)
	// gateway, when set, is mounted at GET gateway.Path beside the strict
	// server: the WebSocket gateway is no OpenAPI operation (spec 05).
	gateway http.Handler
	// operationsOnly, when set, runs first around every generated operation
	// and answers 404 for all but the operational endpoints (a process
	// without the api role).
	operationsOnly apigen.MiddlewareFunc
	// compress, when set, runs outermost around every generated operation
	// (httpmw.Compress): the API's JSON answers are gzipped for clients that
	// accept it, after the idempotency middleware stored or replayed them as
	// they are. The gateway route is no operation, so it is never wrapped:
	// a compressing writer must not stand between a WebSocket and its
	// hijacked connection. nil means none (router tests).
	compress apigen.MiddlewareFunc
	// cors, when set, runs after the metrics and before the body limit, on
	// every route (httpmw.CORS): it answers preflights before routing and
	// authentication, and marks every other answer for the origins
	// http.cors.allowed_origins lists. nil means none (router tests).
	cors func(http.Handler) http.Handler
	// perAddress run after the HTTP metrics on every request, so the
	// metrics count their 429s: the failed-authentication and per-address
	// write limits (ADR 0019). Empty means none.
	perAddress []func(http.Handler) http.Handler
	// perToken, when set, runs around every generated operation inside
	// authenticate and outside idempotency: the per-token write limit.
	perToken apigen.MiddlewareFunc
}

// newRouter builds the HTTP handler. Middleware order, outermost first:
// the logger into the context (for Recover and problem.Write), Recover (so
// a panic anywhere below is a 500 problem), RequestID (so every response,
// even a panic's, carries X-Request-Id), AccessLog and the HTTP metrics
// (which see the final status), RetryAfter (so every 503 below, the API's and
// the gateway's, carries Retry-After), CORS (so a preflight is logged and
// counted, and answered before chi routes it, which would answer 405, and so
// a 429 below still carries the CORS headers a browser needs to read it),
// the per-address rate limits, BodyLimit (before anything reads a body),
// headAsGet (HEAD answered wherever GET is). All of them are chi
// middleware, so the metrics see the route pattern.
func newRouter(d routerDeps) http.Handler {
	r := chi.NewRouter()
	r.Use(
		withLogger(d.logger),
		httpmw.Recover,
		httpmw.RequestID,
		httpmw.AccessLog(d.logger),
		d.metrics.Middleware,
		httpmw.RetryAfter(d.retryAfter, rand.Float64),
	)
	if d.cors != nil {
		r.Use(d.cors)
	}
	r.Use(d.perAddress...)
	r.Use(httpmw.BodyLimit(d.maxBodyBytes), headAsGet)
	r.NotFound(notFound)
	r.MethodNotAllowed(methodNotAllowed(r))

	strict := apigen.NewStrictHandlerWithOptions(d.server, nil, apigen.StrictHTTPServerOptions{
		RequestErrorHandlerFunc:  requestError,
		ResponseErrorHandlerFunc: responseError,
	})
	// The generated wrapper applies the slice in order, each entry wrapping
	// the ones before it, so the last entry runs first: idempotency comes
	// before authenticate to run inside it, with the actor in the context,
	// validation between them (a request is authenticated before its body
	// is read, and checked before it claims an idempotency key), and
	// compression last, to see the final response of each. The per-token
	// write limit sits between authenticate and validation: it needs the
	// actor, it spares a refused client the body's validation, and a refused
	// write must not reach idempotency, which would store the 429 for replay.
	var middlewares []apigen.MiddlewareFunc
	if d.idempotency != nil {
		middlewares = append(middlewares, d.idempotency)
	}
	if d.validate != nil {
		middlewares = append(middlewares, d.validate)
	}
	if d.perToken != nil {
		middlewares = append(middlewares, d.perToken)
	}
	if d.authenticate != nil {
		middlewares = append(middlewares, d.authenticate)
	}
	if d.operationsOnly != nil {
		middlewares = append(middlewares, d.operationsOnly)
	}
	if d.compress != nil {
		middlewares = append(middlewares, d.compress)
	}
	apigen.HandlerWithOptions(strict, apigen.ChiServerOptions{
		BaseRouter:       r,
		ErrorHandlerFunc: parameterError,
		// Only matched operations run them, so unknown paths keep their 404
		// and wrong methods their 405 without asking for a token.
		Middlewares: middlewares,
	})
	if d.gateway != nil {
		r.Method(http.MethodGet, gateway.Path, d.gateway)
	}
	if d.web != nil {
		web := r.With()
		if d.compress != nil {
			web = r.With(d.compress)
		}
		d.web.Mount(web)
	}
	if d.mount != nil {
		d.mount(r)
	}
	return r
}

// withLogger puts the process's logger in every request's context, where
// the kernel's middleware and problem.Write look for it (logging.From).
func withLogger(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(logging.With(r.Context(), logger)))
		})
	}
}

// headAsGet routes a HEAD request as the GET of its path (spec 05: HEAD is
// answered wherever GET is), with the method left HEAD: the operation runs as
// for GET, with the same status and headers, and net/http sends no body for
// a HEAD. Content-Length is the GET's where the GET's body fits the server's
// response buffer (net/http counts the discarded bytes) or the handler sets
// it; a GET sent chunked is a HEAD without one, as RFC 9110 allows. The
// OpenAPI document declares GET only: HEAD follows from HTTP itself.
func headAsGet(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.RouteMethod == "" {
				rctx.RouteMethod = http.MethodGet
			}
		}
		next.ServeHTTP(w, r)
	})
}

// routeMethod is the method r is routed by: GET for a HEAD (headAsGet).
func routeMethod(r *http.Request) string {
	if r.Method == http.MethodHead {
		return http.MethodGet
	}
	return r.Method
}

// notFound answers a path no route matches with a 404 problem.
func notFound(w http.ResponseWriter, r *http.Request) {
	if bodyTooLarge(w, r) {
		return
	}
	problem.Write(w, r, problem.New(problem.ErrNotFound, "No operation has this path."))
}

// standardMethods are the methods offered in an Allow header.
var standardMethods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace,
}

// methodNotAllowed answers a known path with a method it lacks: 405 with an
// Allow header listing the methods it has (RFC 9110 requires it). chi does
// not pass those methods to a custom handler, so they are looked up again.
// A path with no method at all (chi reports unknown methods here too) is a
// 404.
func methodNotAllowed(mux *chi.Mux) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if bodyTooLarge(w, r) {
			return
		}
		path := r.URL.RawPath
		if path == "" {
			path = r.URL.Path
		}
		var allowed []string
		for _, m := range standardMethods {
			// HEAD has no routes of its own: a path has it when it has GET.
			routed := m
			if m == http.MethodHead {
				routed = http.MethodGet
			}
			if mux.Match(chi.NewRouteContext(), routed, path) {
				allowed = append(allowed, m)
			}
		}
		if len(allowed) == 0 {
			problem.Write(w, r, problem.New(problem.ErrNotFound, "No operation has this path."))
			return
		}
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		problem.Write(w, r, problem.New(problem.ErrMethodNotAllowed,
			"This path does not support the method; the Allow header lists the methods it does."))
	}
}

// bodyTooLarge reads and discards the request body of a request no
// operation handles and answers 413 when it exceeds http.max_body_bytes.
// BodyLimit rejects a declared Content-Length at once; a chunked body is
// only caught by reading it, and an oversized request must get 413 whatever
// its path. The read is bounded by BodyLimit's MaxBytesReader.
func bodyTooLarge(w http.ResponseWriter, r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return false
	}
	_, err := io.Copy(io.Discard, r.Body)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		problem.Write(w, r, err)
		return true
	}
	return false
}

// requestError answers a request body the strict server could not decode:
// 413 when the body was cut by the size limit, otherwise 400
// validation_failed naming the body.
func requestError(w http.ResponseWriter, r *http.Request, err error) {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		problem.Write(w, r, err)
		return
	}
	problem.Write(w, r, problem.Validation(problem.FieldError{
		Field:   "body",
		Message: "is not a valid JSON document for this operation",
	}))
}

// responseError answers an error a handler returned: every problem outcome
// is the error of its kind (a module returned, for example,
// problem.ErrNotFound; ADR 0033), answered through problem's one table, and
// anything else is unexpected, which problem.Write turns into a 500 without
// internals and logs.
func responseError(w http.ResponseWriter, r *http.Request, err error) {
	problem.Write(w, r, err)
}

// parameterError answers a path, query or header parameter the generated
// router could not bind: 400 validation_failed naming the parameter.
func parameterError(w http.ResponseWriter, r *http.Request, err error) {
	problem.Write(w, r, problem.Validation(parameterField(err)))
}

// parameterField names the parameter of a binding error and says what is
// wrong in words that do not echo the raw input.
func parameterField(err error) problem.FieldError {
	var (
		invalid   *apigen.InvalidParamFormatError
		required  *apigen.RequiredParamError
		header    *apigen.RequiredHeaderError
		unmarshal *apigen.UnmarshalingParamError
		tooMany   *apigen.TooManyValuesForParamError
		cookie    *apigen.UnescapedCookieParamError
	)
	switch {
	case errors.As(err, &invalid):
		return problem.FieldError{Field: invalid.ParamName, Message: "has an invalid format"}
	case errors.As(err, &required):
		return problem.FieldError{Field: required.ParamName, Message: "is required"}
	case errors.As(err, &header):
		return problem.FieldError{Field: header.ParamName, Message: "is required"}
	case errors.As(err, &unmarshal):
		return problem.FieldError{Field: unmarshal.ParamName, Message: "is not valid JSON"}
	case errors.As(err, &tooMany):
		return problem.FieldError{Field: tooMany.ParamName, Message: "must be given once"}
	case errors.As(err, &cookie):
		return problem.FieldError{Field: cookie.ParamName, Message: "has an invalid encoding"}
	}
	return problem.FieldError{Field: "request", Message: "has an invalid parameter"}
}
