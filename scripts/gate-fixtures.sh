#!/usr/bin/env bash
# Gate proofs (`make gate-fixtures`, the last step of `make check`): each gate of spec 07 is run
# on a clean input, where it must pass, and on an injected violation, where it must fail and
# name the violation. This script fails when a gate passes a violation or fails a clean input,
# so a gate that silently stops detecting its violation breaks the build.
#
# Gates proven here: text rules (dashes, white label, registry hosts), codegen-check (stale
# generated file, drifted generator configuration, event schemas edited by hand), limit-check (a
# limit without a key, a key's default in code, a number beside a key), cover-floor, fmt-check
# (gofmt and goimports), lint (missing doc comment, gosec finding), npm-lock-check, api-lint (an
# unresolved $ref in the OpenAPI document, an AsyncAPI frame naming a missing schema),
# api-conformance (a drifted document), sdk-check (stale SDK types, stale frame types, a frame
# changed in the AsyncAPI document and not regenerated), web-test (a drifted web build fails
# a browser assertion) and vuln-check (a module calling a function with a known
# vulnerability). The other proofs are Go
# tests: the architecture gate's (TestArchGate, run by `make arch` since it needs go-arch-lint)
# and register-check's in the architecture module (architecture/README.md lists them), the
# undocumented configuration key in services/server/internal/kernel/config (`make test`).
#
# Violations are assembled at run time (split strings, printf escapes), so this file passes the
# text rules itself. Everything happens in a temporary directory removed on exit.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
make_cmd=${MAKE:-make}
bin=${TOOLS_BIN:-$root/.bin}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

passed=0
failed=0

# expect_pass DESCRIPTION COMMAND...: the gate must accept the clean input.
expect_pass() {
  local desc=$1
  shift
  if "$@" >"$tmp/out" 2>&1; then
    printf '  ok    %s\n' "$desc"
    passed=$((passed + 1))
  else
    printf '  FAIL  %s: the gate rejected a clean input\n' "$desc"
    sed 's/^/        /' "$tmp/out" | tail -n 30
    failed=$((failed + 1))
  fi
}

# expect_fail DESCRIPTION MARKER COMMAND...: the gate must reject the input and its output must
# contain MARKER (so a crash or a missing tool does not count as a detection).
expect_fail() {
  local desc=$1 marker=$2
  shift 2
  if "$@" >"$tmp/out" 2>&1; then
    printf '  FAIL  %s: the gate passed a violation\n' "$desc"
    sed 's/^/        /' "$tmp/out" | tail -n 30
    failed=$((failed + 1))
  elif grep -qF -- "$marker" "$tmp/out"; then
    printf '  ok    %s (rejected: %s)\n' "$desc" "$(grep -F -m1 -- "$marker" "$tmp/out" | cut -c1-110)"
    passed=$((passed + 1))
  else
    printf '  FAIL  %s: the gate failed without naming the violation (%s)\n' "$desc" "$marker"
    sed 's/^/        /' "$tmp/out" | tail -n 30
    failed=$((failed + 1))
  fi
}

textrules() {
  go run ./architecture/cmd/textrules -config "$root/architecture/textrules.yaml" "$@"
}

# new_tree NAME: an empty git work tree with one clean file, as the text rules see a clone.
new_tree() {
  local dir=$tmp/$1
  mkdir -p "$dir"
  git -C "$dir" init -q
  printf 'Alex, Sam and Robin write to alex@example.com about pages 1-3.\n' >"$dir/README.md"
  printf '%s\n' "$dir"
}

echo '==> text rules'
clean=$(new_tree text-clean)
expect_pass 'clean tree' textrules -root "$clean"

t=$(new_tree en-dash)
printf 'pages 1\u20133\n' >"$t/notes.md"
expect_fail 'en dash' 'notes.md:1:8: dash' textrules -root "$t"

t=$(new_tree em-dash)
printf 'package x // a\u2014b\n' >"$t/x.go"
expect_fail 'em dash in Go source' 'x.go:1:' textrules -root "$t"

t=$(new_tree email)
printf 'contact: %s\n' "robin@""corp.test" >"$t/CONTRIBUTING.md"
expect_fail 'email outside example.com' ': email:' textrules -root "$t"

t=$(new_tree home-linux)
printf 'cd %s/bothy\n' "/ho""me/alex" >"$t/setup.sh"
expect_fail 'Linux home-directory path' ': home-path:' textrules -root "$t"

t=$(new_tree home-mac)
printf 'open %s/bothy\n' "/Us""ers/sam" >"$t/notes.txt"
expect_fail 'macOS home-directory path' ': home-path:' textrules -root "$t"

t=$(new_tree home-root)
printf 'GOPATH=%s/go\n' "/ro""ot" >"$t/env.txt"
expect_fail 'root home-directory path' ': home-path:' textrules -root "$t"

t=$(new_tree name)
printf 'Alex invites %s to the channel.\n' "Ali""ce" >"$t/story.md"
expect_fail 'placeholder name' ': name:' textrules -root "$t"

t=$(new_tree registry)
printf 'registry=https://%s/\n' "registry.""npmjs.org" >"$t/npmrc"
expect_fail 'package registry host' ': registry-host:' textrules -root "$t"

t=$(new_tree untracked)
mkdir -p "$t/docs"
printf 'a\u2013b\n' >"$t/docs/new.md" # untracked files are checked before their first commit
expect_fail 'violation in an untracked file' 'docs/new.md:1:2: dash' textrules -root "$t"

t=$(new_tree compiled)
mkdir -p "$t/cmd/tool"
cp "$(type -P true)" "$t/cmd/tool/tool" # a real program, as a go build in its folder leaves one
expect_fail 'compiled program' 'cmd/tool/tool:1:1: compiled' textrules -root "$t"

echo '==> codegen-check'
api=$tmp/api
cp -R api "$api"
gen=$tmp/gen/apigen.gen.go
mkdir -p "$(dirname "$gen")"
cp services/server/internal/apigen/apigen.gen.go "$gen"
codegen_check() {
  "$make_cmd" --no-print-directory codegen-check \
    OPENAPI="$api/openapi.yaml" CODEGEN_CONFIG="$api/oapi-codegen.yaml" GEN_FILE="$gen"
}
expect_pass 'generated file matches its sources' codegen_check
sed -i '1s/^./X/' "$gen" # one byte changed
expect_fail 'stale generated file (one byte changed)' 'is stale' codegen_check
cp services/server/internal/apigen/apigen.gen.go "$gen"
sed -i 's/^package: apigen$/package: apigenx/' "$api/oapi-codegen.yaml"
grep -q '^package: apigenx$' "$api/oapi-codegen.yaml" || { echo 'gate-fixtures: api/oapi-codegen.yaml has no "package: apigen" line to change'; exit 1; }
expect_fail 'generator configuration changed, file not regenerated' 'is stale' codegen_check
cp api/oapi-codegen.yaml "$api/oapi-codegen.yaml"
sed -i '0,/^    MessageCreatedPayload:$/s//    MessageMadePayload:/' "$api/openapi.yaml"
grep -q '^    MessageMadePayload:$' "$api/openapi.yaml" || { echo 'gate-fixtures: api/openapi.yaml has no generated MessageCreatedPayload to change'; exit 1; }
expect_fail 'event schemas edited by hand, not from the register' 'differ from the event type register' codegen_check

echo '==> limit-check'
lim=$tmp/limits
mkdir -p "$lim/services/server/internal/alpha/app" "$lim/architecture" "$lim/docs"
cat >"$lim/services/server/internal/alpha/app/keys.go" <<'GO'
package app

import "example.com/config"

// KeyPageSize is a key.
var KeyPageSize = config.Define("alpha.page_size", config.KindInt, "50", "page")
GO
printf 'not_limits: []\n' >"$lim/architecture/limitcheck.yaml"
printf 'Pages hold `alpha.page_size` items.\n' >"$lim/docs/guide.md"
limitcheck() { "$make_cmd" --no-print-directory limit-check LIMITCHECK_ROOT="$lim"; }
expect_pass 'every limit a key, no number beside a key' limitcheck
printf 'package app\n\nconst MaxSections = 20\n' >"$lim/services/server/internal/alpha/app/rules.go"
expect_fail 'a limit-named constant without a key' 'limit-const: MaxSections = 20' limitcheck
printf 'package app\n\nconst maxPage = 50\n' >"$lim/services/server/internal/alpha/app/rules.go"
expect_fail "a constant holding a key's default" 'key-default: maxPage holds 50' limitcheck
rm "$lim/services/server/internal/alpha/app/rules.go"
printf 'Pages hold `alpha.page_size` (50) items.\n' >"$lim/docs/guide.md"
expect_fail 'a number beside a key in a doc' 'docs/guide.md:1: key-number' limitcheck

echo '==> cover-floor'
fixtures=architecture/cmd/coverfloor/testdata
expect_pass 'every package at its floor' "$make_cmd" --no-print-directory cover-floor COVER_PROFILE="$fixtures/pass.out"
expect_fail 'a domain package below its floor' 'BELOW' "$make_cmd" --no-print-directory cover-floor COVER_PROFILE="$fixtures/below.out"

echo '==> fmt-check and lint'
mod=$tmp/lintmod
mkdir -p "$mod"
printf 'module bothy.example.com/lintfixture\n\ngo 1.26.0\n' >"$mod/go.mod"
cat >"$mod/doc.go" <<'GO'
// Package lintfixture is a clean package for the lint gate proof.
package lintfixture

// Greeting says hello to Alex; documented, formatted, nothing to report.
func Greeting() string { return "hello Alex" }
GO
lint() { (cd "$mod" && GOWORK=off "$bin/golangci-lint" run --config "$root/.golangci.yml" ./...); }
fmtcheck() { (cd "$mod" && GOWORK=off "$bin/golangci-lint" fmt --config "$root/.golangci.yml" --diff ./...); }
expect_pass 'clean package (lint)' lint
expect_pass 'clean package (fmt-check)' fmtcheck
cat >"$mod/undocumented.go" <<'GO'
package lintfixture

func Undocumented() string { return "no doc comment" }
GO
expect_fail 'exported function without doc comment' 'exported function Undocumented should have comment' lint
rm "$mod/undocumented.go"
cat >"$mod/port.go" <<'GO'
package lintfixture

// Store is a port whose method lacks the doc comment spec 07 asks for.
type Store interface {
	Get(id string) (string, error)
}
GO
expect_fail 'port method without doc comment' 'public interface method Store.Get should be commented' lint
rm "$mod/port.go"
cat >"$mod/perm.go" <<'GO'
package lintfixture

import "os"

// WriteSecret writes a token world-readable, which gosec reports.
func WriteSecret(p string) error { return os.WriteFile(p, []byte("token"), 0o644) }
GO
expect_fail 'gosec finding (world-readable file)' 'G306' lint
rm "$mod/perm.go"
printf 'package lintfixture\n\nimport (\n"strings"\n"fmt"\n)\n\n// Joined is badly formatted.\nvar Joined = fmt.Sprint(strings.ToUpper("x"))\n' >"$mod/unformatted.go"
expect_fail 'unformatted file, unsorted imports' 'unformatted.go' fmtcheck
rm "$mod/unformatted.go"

echo '==> npm-lock-check (part of api-lint)'
mkdir -p "$tmp/npm"
printf '{"packages": {"node_modules/x": {"version": "1.0.0", "integrity": "sha512-x"}}}\n' >"$tmp/npm/package-lock.json"
expect_pass 'lock without download URLs' "$make_cmd" --no-print-directory npm-lock-check NPM_DIR="$tmp/npm"
printf '{"packages": {"node_modules/x": {"version": "1.0.0", "resolved": "https://example.com/x/-/x-1.0.0.tgz"}}}\n' >"$tmp/npm/package-lock.json"
expect_fail 'lock recording a download URL' 'records download URLs' "$make_cmd" --no-print-directory npm-lock-check NPM_DIR="$tmp/npm"

echo '==> api-lint'
cat >"$tmp/api-ok.yaml" <<'YAML'
openapi: 3.0.3
info:
  title: gate fixture
  version: 1.0.0
  description: A minimal API that passes the lint gate.
  license:
    name: Apache-2.0
    url: https://example.com/license
servers:
  - url: /
paths:
  /healthz:
    get:
      operationId: getHealth
      summary: Health
      description: Liveness.
      security: []
      responses:
        '200':
          description: Alive.
        '400':
          description: Never sent; the lint rules want a 4xx response.
YAML
sed 's|description: Alive.|description: Alive.\n          content:\n            application/json:\n              schema:\n                $ref: "#/components/schemas/Missing"|' \
  "$tmp/api-ok.yaml" >"$tmp/api-bad.yaml"
apilint() { "$make_cmd" --no-print-directory api-lint OPENAPI="$1"; }
expect_pass 'valid OpenAPI document' apilint "$tmp/api-ok.yaml"
expect_fail 'unresolved $ref' 'no-unresolved-refs' apilint "$tmp/api-bad.yaml"
async=$tmp/async
mkdir -p "$async"
cp api/openapi.yaml "$async/openapi.yaml"
sed 's|openapi.yaml#/components/schemas/Snapshot"|openapi.yaml#/components/schemas/Missing"|' api/gateway.asyncapi.yaml >"$async/gateway.asyncapi.yaml"
grep -q 'schemas/Missing"' "$async/gateway.asyncapi.yaml" || { echo 'gate-fixtures: api/gateway.asyncapi.yaml refers to no Snapshot to break'; exit 1; }
expect_fail 'AsyncAPI frame referring to a missing OpenAPI schema' 'invalid' \
  "$make_cmd" --no-print-directory api-lint OPENAPI="$tmp/api-ok.yaml" ASYNCAPI="$async/gateway.asyncapi.yaml"

echo '==> api-conformance'
# The real document with one response member retyped: bothy's answer no longer matches it, and
# Prism's validating proxy must say so. (The clean run is the gate itself, earlier in make check.)
awk '/^    Principal:$/ {p=1} p && /^        handle:$/ {h=1} h && /type: string/ {sub(/type: string/, "type: integer"); h=0; p=0} {print}' \
  "$root/api/openapi.yaml" >"$tmp/openapi-drifted.yaml"
expect_fail 'a response member the document types otherwise' 'body","handle' \
  "$make_cmd" --no-print-directory api-conformance OPENAPI="$tmp/openapi-drifted.yaml"
echo '==> sdk-check'
sdkgen=$tmp/sdk/openapi.ts
mkdir -p "$(dirname "$sdkgen")"
cp clients/typescript/src/gen/openapi.ts "$sdkgen"
sdkframes=$tmp/sdk/frames.ts
sdkasync=$tmp/sdk/gateway.asyncapi.yaml
cp clients/typescript/src/gen/frames.ts "$sdkframes"
cp api/gateway.asyncapi.yaml "$sdkasync"
sdk_check() { "$make_cmd" --no-print-directory sdk-check SDK_GEN="$sdkgen" SDK_FRAMES="$sdkframes" ASYNCAPI="$sdkasync"; }
expect_pass 'the SDK types match api/openapi.yaml and the frame types api/gateway.asyncapi.yaml' sdk_check
sed -i '1s/^./X/' "$sdkgen" # one byte changed
expect_fail 'stale SDK types (one byte changed)' 'openapi.ts is stale' sdk_check
cp clients/typescript/src/gen/openapi.ts "$sdkgen"
sed -i '1s/^./X/' "$sdkframes" # one byte changed
expect_fail 'stale SDK frame types (one byte changed)' 'frames.ts is stale' sdk_check
cp clients/typescript/src/gen/frames.ts "$sdkframes"
# A new member of a frame in the document, the frame types not regenerated.
awk '{print} /^    heartbeat:$/ {h=1} h && /enum: \[heartbeat\]$/ {print "            cursor:"; print "              type: integer"; h=0}' \
  api/gateway.asyncapi.yaml >"$sdkasync"
! cmp -s api/gateway.asyncapi.yaml "$sdkasync" || { echo 'gate-fixtures: api/gateway.asyncapi.yaml has no heartbeat frame to extend'; exit 1; }
expect_fail 'a frame changed in the AsyncAPI document, its types not regenerated' 'frames.ts is stale' sdk_check

echo '==> web-test'
# The browser tests' first case (the page is served, explains tokens, refuses a bad one) on the
# real build, where it must pass, and on a drifted copy of it (the sign-in heading of its
# bundle changed, as a build that no longer matches its sources would be), where the browser
# assertion must fail. Both runs build the client, start bothy serve and drive Chromium.
webdist=$tmp/web/dist
web_test() { NO_COLOR=1 "$make_cmd" --no-print-directory web-test WEB_TEST_DIST="$webdist" WEB_TEST_ARGS=--testNamePattern=Content-Security-Policy; }
"$make_cmd" --no-print-directory web-build >"$tmp/out" 2>&1 || { cat "$tmp/out"; echo 'gate-fixtures: make web-build failed'; exit 1; }
mkdir -p "$tmp/web"
cp -R services/web/dist "$webdist"
expect_pass 'the web client as built' web_test
grep -lq 'Sign in to bothy' "$webdist"/assets/*.js || { echo 'gate-fixtures: the web build has no sign-in heading to drift'; exit 1; }
sed -i 's/Sign in to bothy/Sign in to b0thy/' "$webdist"/assets/*.js
expect_fail 'a drifted web build (its sign-in heading changed)' 'FAIL  test/browser.test.ts' web_test

echo '==> vuln-check'
# A throwaway module (no workspace) that calls language.ParseAcceptLanguage of golang.org/x/text,
# the function of GO-2022-1059 (fixed in v0.3.8): at a fixed version the gate passes, at v0.3.7
# it must fail naming the vulnerability. Its toolchain line is the repository's, so that the
# standard library it is checked with is the one of the other modules. go.sum is written here.
vmod=$tmp/vulnmod
mkdir -p "$vmod"
cat >"$vmod/main.go" <<'GO'
// Command vulnfixture parses an Accept-Language header, the call of the known vulnerability.
package main

import (
	"fmt"
	"os"

	"golang.org/x/text/language"
)

func main() {
	tags, _, err := language.ParseAcceptLanguage(os.Getenv("ACCEPT_LANGUAGE"))
	fmt.Println(tags, err)
}
GO
toolchain=$(sed -n 's/^toolchain //p' go.work)
[[ -n $toolchain ]] || { echo 'gate-fixtures: go.work names no toolchain'; exit 1; }
vuln_module() { # vuln_module VERSION: the throwaway module requiring golang.org/x/text VERSION
  printf 'module bothy.example.com/vulnfixture\n\ngo 1.26.0\n\ntoolchain %s\n\nrequire golang.org/x/text %s\n' "$toolchain" "$1" >"$vmod/go.mod"
  rm -f "$vmod/go.sum"
  (cd "$vmod" && GOWORK=off go mod tidy) >"$tmp/out" 2>&1 || { cat "$tmp/out"; echo "gate-fixtures: go mod tidy of the vuln-check fixture (golang.org/x/text $1) failed"; exit 1; }
}
vulncheck() { "$make_cmd" --no-print-directory vuln-check VULN_MODULES="$vmod" VULN_TOOLS_MODULE=; }
vuln_module v0.43.0
expect_pass 'a module whose dependencies have no known vulnerability it reaches' vulncheck
vuln_module v0.3.7
expect_fail 'a module calling a vulnerable function (golang.org/x/text v0.3.7)' 'GO-2022-1059' vulncheck

echo
if [[ $failed -gt 0 ]]; then
  printf 'gate-fixtures: %d proof(s) held, %d FAILED: a gate no longer behaves as spec 07 requires\n' "$passed" "$failed"
  exit 1
fi
printf 'gate-fixtures: all %d proofs held (each gate passes its clean input and rejects its violation)\n' "$passed"
