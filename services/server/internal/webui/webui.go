// Package webui serves bothy's web client, a single-page application built from services/web:
// from the directory web.dir names, or else from the build embedded into the binary at compile
// time (make web-build writes it into dist/ before go build), or else a page that says how to
// get one. The client routes with the URL fragment, so the server serves only the files of the
// build: the index at /, and each file by its path. Every other path stays the API's 404
// problem, and no path of the API is ever shadowed.
package webui

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"bothy.example.com/server/internal/kernel/conditional"
	"bothy.example.com/server/internal/kernel/config"
)

// KeyDir is the directory of a web client build to serve instead of the embedded one: an
// operator serves another build (a newer client, a branded one) without a new binary.
var KeyDir = config.Define("web.dir", config.KindString, "",
	"directory of the web client's build (index.html and its assets) that bothy serve serves at /; empty means the build embedded in the binary, or a page saying how to build it when the binary has none")

// embedded is the build make web-build copies into dist/ before go build; only dist/.gitkeep
// when the binary was built without it.
//
//go:embed all:dist
var embedded embed.FS

// securityHeaders are sent with every file: the client loads scripts, styles, images and
// connections from its own origin only (the API and the gateway are on it), is never framed,
// and sends no referrer.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy":        "no-referrer",
	"X-Frame-Options":        "DENY",
}

// assetsDir holds the files the build names by their content hash (Vite's default): they never
// change under their name, so clients may keep them for good.
const assetsDir = "assets/"

// file is one file of the build, read once: the build is small and fixed while the process
// runs, and its ETag is its content's hash (kernel/conditional.Tag).
type file struct {
	body []byte
	etag string
}

// Site is a loaded build. Its zero value is not usable; build one with New or Load.
type Site struct {
	files map[string]file
	// Source says where the build came from, for the start log: a directory, "embedded" or
	// "none".
	Source string
}

// ErrNoIndex is the error of a web.dir without an index.html: the directory is not a build.
var ErrNoIndex = errors.New("webui: the directory has no index.html")

// New returns the Site of dir (web.dir) when it is set, else of the embedded build, else the
// page that says how to build the client.
func New(dir string) (*Site, error) {
	if dir != "" {
		s, err := Load(os.DirFS(dir))
		if err != nil {
			return nil, fmt.Errorf("webui: %s %q: %w", KeyDir.Name, dir, err)
		}
		s.Source = dir
		return s, nil
	}
	build, err := fs.Sub(embedded, "dist")
	if err != nil {
		return nil, fmt.Errorf("webui: the embedded build: %w", err)
	}
	s, err := Load(build)
	if errors.Is(err, ErrNoIndex) {
		return &Site{files: map[string]file{"index.html": newFile([]byte(notBuiltPage))}, Source: "none"}, nil
	}
	if err != nil {
		return nil, err
	}
	s.Source = "embedded"
	return s, nil
}

// Load reads every regular file of fsys; a build without index.html is ErrNoIndex.
func Load(fsys fs.FS) (*Site, error) {
	files := map[string]file{}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		hidden := name != "." && strings.HasPrefix(path.Base(name), ".")
		switch {
		case d.IsDir() && hidden:
			return fs.SkipDir
		case !d.Type().IsRegular() || hidden:
			return nil
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		files[name] = newFile(body)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("webui: read the build: %w", err)
	}
	if _, ok := files["index.html"]; !ok {
		return nil, ErrNoIndex
	}
	return &Site{files: files}, nil
}

// newFile holds a file with its ETag: the entity tag every conditional read of bothy uses.
func newFile(body []byte) file {
	return file{body: body, etag: conditional.Tag(body)}
}

// Mount routes GET and HEAD of / and of every file of the build on r, each with its own
// pattern, so that a path the build does not have falls through to r's 404. Files and
// directories whose names start with a dot (a build's manifests) are not served.
func (s *Site) Mount(r chi.Router) {
	route := func(pattern, name string) {
		h := s.serve(name)
		r.Get(pattern, h)
		r.Head(pattern, h)
	}
	route("/", "index.html")
	for name := range s.files {
		route("/"+name, name)
	}
}

// serve answers one file: its type from its extension, its ETag (a matching If-None-Match is
// 304), the security headers, and a cache policy: hashed assets for good, the rest revalidated
// on every load so a new build reaches clients at once.
func (s *Site) serve(name string) http.HandlerFunc {
	f := s.files[name]
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for k, v := range securityHeaders {
			h.Set(k, v)
		}
		if strings.HasPrefix(name, assetsDir) {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			h.Set("Cache-Control", "no-cache")
		}
		h.Set("ETag", f.etag)
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.body))
	}
}

// notBuiltPage is served at / by a binary built without the web client.
const notBuiltPage = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>bothy</title></head>
<body>
<main>
<h1>bothy is running</h1>
<p>This binary was built without the web client. Build it with <code>make web-build</code> and
then <code>make build</code> (or <code>make run</code>, which does both), or point
<code>web.dir</code> (<code>BOTHY_WEB_DIR</code>) at a build of <code>services/web</code>.</p>
<p>The HTTP API is at <code>/api/v1</code>; its contract is <code>api/openapi.yaml</code>.</p>
</main>
</body>
</html>
`
