# bothy: the make targets of operators and engineers. `make` alone lists them.
#
# A fresh machine needs only Go, the PostgreSQL 15 binaries, node/npm, git and make: the pinned
# tools are installed by the targets that need them (Go tools from the `tool` directives of
# tools/go.mod into .bin/, npm packages from tools/npm/package-lock.json).

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:
MAKEFLAGS += --no-builtin-rules --no-print-directory

GO ?= go
NPM ?= npm

# The Go toolchain: every go.mod and go.work names it (`toolchain go1.26.11`, ADR 0036), and the
# go command switches to it, downloading it from the module proxy, when the installed Go is
# older. GOTOOLCHAIN=local in the environment would keep the older Go and its standard
# library's known vulnerabilities, so the targets run with auto (make GOTOOLCHAIN=local
# overrides it on the command line).
export GOTOOLCHAIN := auto

# Build output and scratch files (ignored by git).
BIN_DIR := bin
BOTHY := $(BIN_DIR)/bothy

# Pinned tools.
TOOLS_BIN := $(CURDIR)/.bin
OAPI_CODEGEN := $(TOOLS_BIN)/oapi-codegen
GOLANGCI_LINT := $(TOOLS_BIN)/golangci-lint
GO_ARCH_LINT := $(TOOLS_BIN)/go-arch-lint
GOVULNCHECK := $(TOOLS_BIN)/govulncheck
GO_TOOLS := $(OAPI_CODEGEN) $(GOLANGCI_LINT) $(GO_ARCH_LINT) $(GOVULNCHECK)
# The vulnerability database of vuln-check (ADR 0036): built under .bin/ from the pinned module
# golang.org/x/vulndb (tools/vulndb/go.mod, a module of its own so that its dependencies move
# no tool's) by its cmd/indexdb, rebuilt when the pin changes; govulncheck reads it through
# file://, since the online database is not reachable from every machine.
VULNDB_MODULE := tools/vulndb
INDEXDB := $(TOOLS_BIN)/indexdb
VULN_DB ?= $(TOOLS_BIN)/vulndb
VULN_DB_INDEX := $(VULN_DB)/index/db.json
# The Go modules vuln-check scans: every module of go.work (./..., in the workspace) and the
# tools module (its tools, GOWORK=off); gate-fixtures points VULN_MODULES at a throwaway module.
VULN_MODULES ?= services/server architecture examples/agents/echo
VULN_TOOLS_MODULE ?= tools
NPM_DIR := tools/npm
NPM_STAMP := $(NPM_DIR)/node_modules/.package-lock.json
REDOCLY := $(NPM_DIR)/node_modules/.bin/redocly
# The conformance run of api/openapi.yaml (api-conformance): its own npm project.
CONFORMANCE_DIR := api/conformance
CONFORMANCE_STAMP := $(CONFORMANCE_DIR)/node_modules/.package-lock.json
# Every npm lock file of the repository; npm-lock-check keeps each free of download URLs.
NPM_LOCKS := $(NPM_DIR)/package-lock.json $(CONFORMANCE_DIR)/package-lock.json clients/typescript/package-lock.json services/web/package-lock.json
export REDOCLY_TELEMETRY := off
export REDOCLY_SUPPRESS_UPDATE_NOTICE := true

# Every Go module of go.work (the tools module is separate and always built with GOWORK=off),
# the example agent (examples/agents/echo, a module of its own) included.
GO_PACKAGES := ./services/server/... ./architecture/... ./examples/agents/echo/...
# The directories fmt-check looks for Go files in: those of GO_PACKAGES.
GO_DIRS := services architecture examples

# Version stamped into the binary: `git describe` when there is a commit to describe, through
# -X on VERSION_VAR; and VCS stamping (commit, dirty flag, read by `bothy version` from the build
# info) whenever the work tree has a commit, since stamping fails in a repository without one.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
VERSION_VAR ?= main.version
LDFLAGS = -X '$(VERSION_VAR)=$(VERSION)'
BUILDVCS = $(shell git rev-parse --verify --quiet HEAD >/dev/null 2>&1 && echo true || echo false)

# Tests and coverage.
COVER_DIR := .coverage
COVER_PROFILE ?= $(COVER_DIR)/profile.out
TEST_LOG := $(COVER_DIR)/test.log
TEST_PACKAGES ?= $(GO_PACKAGES)
TEST_FLAGS ?=
COVER_FLOORS := architecture/coverage-floors.yaml

# API sources and generated code; codegen-check takes them as variables so that the gate
# fixtures can point it at a copy.
OPENAPI ?= api/openapi.yaml
ASYNCAPI ?= api/gateway.asyncapi.yaml
CODEGEN_CONFIG ?= api/oapi-codegen.yaml
GEN_FILE ?= services/server/internal/apigen/apigen.gen.go

# What `.ci/run` runs through `make check`, in this order.
CHECK_GATES := fmt-check vet lint arch register-check limit-check codegen-check api-lint api-conformance sdk-check text-rules vuln-check test sdk-test web-test bench-client-test cover-floor gate-fixtures

.PHONY: help
help: ## List the targets with a one-line description (the default goal).
	@echo 'bothy make targets (a fresh machine needs only Go, PostgreSQL 15, node/npm, git and make):'
	@awk 'BEGIN {FS = ":.*## "} \
	  /^##@ / {printf "\n%s\n", substr($$0, 5)} \
	  /^[a-z][a-zA-Z0-9_-]*:.*## / {printf "  %-15s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

##@ Run

.PHONY: build
build: ## Build bin/bothy (version from git describe).
	$(GO) build -buildvcs=$(BUILDVCS) -ldflags "$(LDFLAGS)" -o $(BOTHY) ./services/server/cmd/bothy

# The owner make bootstrap creates (all three required) and make run creates on the first start
# (Alex, alex, alex@example.com unless given), e.g. make bootstrap NAME=Sam HANDLE=sam EMAIL=sam@example.com.
# Taken from the command line only: an EMAIL or NAME variable of the environment is not an owner.
OWNER_NAME := $(if $(filter command line,$(origin NAME)),$(NAME))
OWNER_HANDLE := $(if $(filter command line,$(origin HANDLE)),$(HANDLE))
OWNER_EMAIL := $(if $(filter command line,$(origin EMAIL)),$(EMAIL))

.PHONY: run
run: web-build build ## Build the web client and bothy, and serve on 127.0.0.1:8080 (embedded PostgreSQL under .bothy/ unless database.url is set); the first start creates the owner and prints their token and a first curl.
	@echo 'make run: open http://$(or $(BOTHY_HTTP_ADDR),127.0.0.1:8080)/ in a browser and sign in with the token printed below (make demo prints more)'
	$(BOTHY) serve --bootstrap-owner --owner-name "$(or $(OWNER_NAME),Alex)" --owner-handle "$(or $(OWNER_HANDLE),alex)" --owner-email "$(or $(OWNER_EMAIL),alex@example.com)"

.PHONY: migrate
migrate: build ## Apply pending database migrations (embedded default unless database.url is set).
	$(BOTHY) migrate

.PHONY: bootstrap
bootstrap: build ## Create the first owner: make bootstrap NAME=Alex HANDLE=alex EMAIL=alex@example.com; prints {"principal_id","token"}.
	@if [[ -z "$(OWNER_NAME)" || -z "$(OWNER_HANDLE)" || -z "$(OWNER_EMAIL)" ]]; then \
	  echo 'bootstrap: give the owner: make bootstrap NAME=Alex HANDLE=alex EMAIL=alex@example.com'; exit 2; \
	fi
	$(BOTHY) admin bootstrap --name "$(OWNER_NAME)" --handle "$(OWNER_HANDLE)" --email "$(OWNER_EMAIL)"

# The example agent make demo starts (examples/agents/echo), with its token, pid and log under
# .bothy/ (make run's data directory), against make run's address.
ECHO_AGENT := $(BIN_DIR)/echo-agent
DEMO_DIR := .bothy
ECHO_TOKEN := $(DEMO_DIR)/echo.token
ECHO_PID := $(DEMO_DIR)/echo.pid
ECHO_LOG := $(DEMO_DIR)/echo.log
ECHO_URL := http://$(or $(BOTHY_HTTP_ADDR),127.0.0.1:8080)

.PHONY: demo
demo: build echo-build ## Build or complete the demo world (Alex, Sam, Robin, the agents Helper and Echo; Support and Marketing; threads, mentions, read states, drafts) on make run's database, print fresh tokens, and start the echo agent in the background (make demo-stop). Safe to rerun.
	@mkdir -p $(DEMO_DIR)
	$(BOTHY) admin demo --echo-token-file $(ECHO_TOKEN)
	@$(MAKE) demo-stop
	@nohup $(ECHO_AGENT) --url $(ECHO_URL) --token-file $(ECHO_TOKEN) >> $(ECHO_LOG) 2>&1 < /dev/null & echo $$! > $(ECHO_PID)
	@echo "make demo: the echo agent runs in the background (pid $$(cat $(ECHO_PID)), log $(ECHO_LOG)) against $(ECHO_URL); post \"@echo hello\" as Sam with the curl above; make demo-stop stops it"

.PHONY: demo-stop
demo-stop: ## Stop the echo agent make demo started (its pid in .bothy/echo.pid).
	@if [[ -f $(ECHO_PID) ]]; then \
	  pid=$$(cat $(ECHO_PID)); \
	  if kill -0 "$$pid" 2>/dev/null && tr '\0' ' ' < /proc/$$pid/cmdline 2>/dev/null | grep -q 'echo-agent'; then \
	    kill "$$pid" && echo "demo-stop: stopped the echo agent (pid $$pid)"; \
	  fi; \
	  rm -f $(ECHO_PID); \
	fi

.PHONY: echo-build
echo-build: ## Build bin/echo-agent, the example agent of examples/agents/echo (its own module, bothy's public API only).
	$(GO) build -o $(ECHO_AGENT) ./examples/agents/echo

.PHONY: ingest-git
ingest-git: build ## Write a repository's pull requests, issues and commits into a channel: make ingest-git REPO=. CHANNEL=<id> [PRS_JSON=f] [ISSUES_JSON=f] [MAX_ITEMS=n]; prints the JSON report. Safe to rerun.
	@if [[ -z "$(REPO)" || -z "$(CHANNEL)" ]]; then \
	  echo 'ingest-git: give the clone and the channel: make ingest-git REPO=. CHANNEL=<channel id>'; exit 2; \
	fi
	$(BOTHY) ingest git --repo "$(REPO)" --channel "$(CHANNEL)" $(if $(PRS_JSON),--prs-json "$(PRS_JSON)") $(if $(ISSUES_JSON),--issues-json "$(ISSUES_JSON)") $(if $(MAX_ITEMS),--max-items "$(MAX_ITEMS)")

.PHONY: backup
backup: build ## Write the database (embedded default unless database.url is set) into a pg_dump archive: make backup [FILE=bothy.dump]; safe while bothy serves; prints the JSON report.
	$(BOTHY) admin backup $(if $(FILE),--file "$(FILE)")

.PHONY: restore
restore: build ## Replace the database with a backup and rotate the sync epoch (every client resyncs): make restore FILE=bothy.dump [ALLOW_OTHER_INSTANCE=1]; stop bothy first (refused while it runs); a backup of another instance needs ALLOW_OTHER_INSTANCE=1; prints the JSON report.
	@if [[ -z "$(FILE)" ]]; then \
	  echo 'restore: give the backup: make restore FILE=bothy-20261201T120000Z.dump (stop bothy first)'; exit 2; \
	fi
	$(BOTHY) admin restore --file "$(FILE)" $(if $(ALLOW_OTHER_INSTANCE),--allow-other-instance)

# The client cases (sdk, sidebar) run the SDK in Node and the web client in Chromium: bench installs
# the npm packages and builds the web client first, and fails without Chromium (make browser-install).
# The written docs/benchmarks.md then goes through the text gates of make check (limit-check,
# text-rules), so a report that would fail them fails here, before it is committed.
.PHONY: bench
bench: sdk-install web-build ## Benchmark the event log, authorization, catch-up, the snapshot, the SDK's cold start and the web client's sidebar on a throwaway PostgreSQL (fsync on; a few minutes); writes docs/benchmarks.md and .json.
	@[[ -x $(CHROMIUM) ]] || { echo "bench: no Chromium at $(CHROMIUM) for the sidebar case; run make browser-install"; exit 1; }
	CHROMIUM=$(CHROMIUM) $(GO) run ./services/server/cmd/bothybench -out docs
	$(MAKE) --no-print-directory limit-check text-rules

##@ Tools

.PHONY: tools
tools: $(GO_TOOLS) $(VULN_DB_INDEX) $(NPM_STAMP) ## Install the pinned Go tools and the vulnerability database into .bin/ and the npm tools into tools/npm/.

# One rule per tool, each building just its own package from the tools module (GOWORK=off), so
# that a target builds only the tool it runs: make test needs none, make arch only go-arch-lint,
# make codegen only oapi-codegen. A tool is rebuilt when tools/go.mod or go.sum change.
# touch: go build may leave an up-to-date binary untouched, which would keep it older than go.mod.
TOOL_BUILD = mkdir -p $(TOOLS_BIN) && cd tools && GOWORK=off $(GO) build -o $@
$(OAPI_CODEGEN): tools/go.mod tools/go.sum
	$(TOOL_BUILD) github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen
	touch $@
$(GOLANGCI_LINT): tools/go.mod tools/go.sum
	$(TOOL_BUILD) github.com/golangci/golangci-lint/v2/cmd/golangci-lint
	touch $@
$(GO_ARCH_LINT): tools/go.mod tools/go.sum
	$(TOOL_BUILD) github.com/fe3dback/go-arch-lint
	touch $@
$(GOVULNCHECK): tools/go.mod tools/go.sum
	$(TOOL_BUILD) golang.org/x/vuln/cmd/govulncheck
	touch $@
$(INDEXDB): $(VULNDB_MODULE)/go.mod $(VULNDB_MODULE)/go.sum
	mkdir -p $(TOOLS_BIN) && cd $(VULNDB_MODULE) && GOWORK=off $(GO) build -o $@ golang.org/x/vulndb/cmd/indexdb
	touch $@
# The database, from the OSV reports of the pinned module's data/osv (about a minute); written
# beside and moved into place, so an interrupted build leaves no half database.
$(VULN_DB_INDEX): $(INDEXDB)
	@src=$$(cd $(VULNDB_MODULE) && GOWORK=off $(GO) mod download golang.org/x/vulndb && GOWORK=off $(GO) list -m -f '{{.Dir}}' golang.org/x/vulndb); \
	[[ -d $$src/data/osv ]] || { echo "vuln-check: no data/osv in golang.org/x/vulndb ($$src)"; exit 1; }; \
	rm -rf $(VULN_DB).tmp; \
	$(INDEXDB) -vulns $$src/data/osv -out $(VULN_DB).tmp; \
	rm -rf $(VULN_DB) && mv $(VULN_DB).tmp $(VULN_DB); \
	echo "vuln-check: database built from golang.org/x/vulndb $$(cd $(VULNDB_MODULE) && GOWORK=off $(GO) list -m -f '{{.Version}}' golang.org/x/vulndb) into $(VULN_DB)"
	touch $@

$(NPM_STAMP): $(NPM_DIR)/package.json $(NPM_DIR)/package-lock.json $(NPM_DIR)/.npmrc
	@$(MAKE) npm-lock-check
	$(NPM) ci --prefix $(NPM_DIR)
	touch $@

.PHONY: npm-lock-check
npm-lock-check: ## Fail when an npm lock file records a download URL (each must stay host-free).
	@for lock in $(NPM_LOCKS); do \
	  if grep -nE '"resolved"[[:space:]]*:[[:space:]]*"[a-zA-Z+]+:' $$lock; then \
	    echo "npm-lock-check: $$lock records download URLs; regenerate it with omit-lockfile-registry-resolved=true (the .npmrc beside it)"; \
	    exit 1; \
	  fi; \
	done

##@ Code generation

.PHONY: generate
generate: codegen ## Run every generator: API code (codegen) and .go-arch-lint.yml (archgen).
	$(GO) run ./architecture/cmd/archgen

.PHONY: codegen
codegen: $(OAPI_CODEGEN) ## Write api/openapi.yaml's event schemas from the event type register, then regenerate services/server/internal/apigen from api/openapi.yaml.
	$(GO) run ./services/server/cmd/eventschemas -openapi $(OPENAPI)
	$(OAPI_CODEGEN) -config $(CODEGEN_CONFIG) $(OPENAPI)

.PHONY: codegen-check
codegen-check: $(OAPI_CODEGEN) ## Fail when api/openapi.yaml's event schemas differ from the event type register, or the committed generated API code from what api/ generates.
	@$(GO) run ./services/server/cmd/eventschemas -check -openapi $(OPENAPI)
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	if [[ $$(grep -c '^output:' $(CODEGEN_CONFIG)) != 1 ]]; then \
	  echo "codegen-check: $(CODEGEN_CONFIG) needs exactly one top-level output: line"; exit 2; \
	fi; \
	sed -E "s|^output:.*|output: $$tmp/generated.go|" $(CODEGEN_CONFIG) > $$tmp/oapi-codegen.yaml; \
	$(OAPI_CODEGEN) -config $$tmp/oapi-codegen.yaml $(OPENAPI); \
	if ! diff -u $(GEN_FILE) $$tmp/generated.go > $$tmp/diff; then \
	  head -n 40 $$tmp/diff; \
	  echo "codegen-check: $(GEN_FILE) is stale: it differs from what $(OPENAPI) and $(CODEGEN_CONFIG) generate; run make codegen and commit the result"; \
	  exit 1; \
	fi; \
	echo "codegen-check: $(GEN_FILE) matches $(OPENAPI)"

##@ Gates (make check runs them all, in this order)

.PHONY: check
check: ## Everything CI runs: fmt-check vet lint arch register-check limit-check codegen-check api-lint api-conformance sdk-check text-rules vuln-check test sdk-test web-test bench-client-test cover-floor gate-fixtures.
	@summary=(); start_all=$$SECONDS; \
	for gate in $(CHECK_GATES); do \
	  printf '\n==> make %s\n' "$$gate"; start=$$SECONDS; \
	  if ! $(MAKE) $$gate; then \
	    printf '\nmake check: FAILED at %s (after %ss); gates passed before it: %s\n' "$$gate" "$$((SECONDS - start_all))" "$${summary[*]:-none}"; \
	    exit 1; \
	  fi; \
	  summary+=("$$gate($$((SECONDS - start))s)"); \
	done; \
	printf '\nmake check: all %d gates passed in %ss: %s\n' "$${#summary[@]}" "$$((SECONDS - start_all))" "$${summary[*]}"

.PHONY: fmt
fmt: $(GOLANGCI_LINT) ## Format Go code in place (gofmt and goimports with the bothy.example.com group).
	$(GOLANGCI_LINT) fmt --config $(CURDIR)/.golangci.yml $(GO_PACKAGES)

.PHONY: fmt-check
fmt-check: $(GOLANGCI_LINT) ## Fail when a Go file is not gofmt/goimports clean (prints the diff).
	@unformatted=$$(find $(GO_DIRS) -name '*.go' -not -path '*/testdata/*' -print0 | xargs -0 -r "$$($(GO) env GOROOT)/bin/gofmt" -l); \
	if [[ -n $$unformatted ]]; then echo "fmt-check: not gofmt-clean (run make fmt):"; echo "$$unformatted"; exit 1; fi
	@$(GOLANGCI_LINT) fmt --config $(CURDIR)/.golangci.yml --diff $(GO_PACKAGES) || { echo "fmt-check: goimports/gofmt differences above (run make fmt)"; exit 1; }
	@echo "fmt-check: clean"

.PHONY: vet
vet: ## Run go vet over every module (the archgate-tagged proof of make arch and the benchclients-tagged smoke tests of the bench's client cases included).
	$(GO) vet -tags archgate,benchclients $(GO_PACKAGES)

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint (revive exported docs, gosec, ...) over every module.
	$(GOLANGCI_LINT) run --config $(CURDIR)/.golangci.yml $(GO_PACKAGES)

.PHONY: arch
arch: $(GO_ARCH_LINT) ## Fail when .go-arch-lint.yml drifts from architecture/modules.yaml or an import breaks it (and prove it fails on its fixtures).
	$(GO) run ./architecture/cmd/archgen -check
	$(GO_ARCH_LINT) check --project-path services/server --arch-file $(CURDIR)/.go-arch-lint.yml --output-color=false
	ARCH_LINT_BIN=$(GO_ARCH_LINT) $(GO) test -tags archgate -count=1 -run '^TestArchGate$$' ./architecture/cmd/archgen/

.PHONY: register-check
register-check: ## Check modules.yaml, operations.yaml, openapi.yaml, SQL schemas and documented configuration keys agree.
	$(GO) run ./architecture/cmd/registercheck
	cd services/server && $(GO) test -count=1 -run TestConfiguration ./internal/wire/

# The tree limit-check reads; the gate fixtures point it at a miniature repository.
LIMITCHECK_ROOT ?= .

.PHONY: limit-check
limit-check: ## Fail on a limit in code that is no configuration key, or a number printed beside a key in docs or comments (ADR 0007).
	$(GO) run ./architecture/cmd/limitcheck -root $(LIMITCHECK_ROOT)

$(CONFORMANCE_STAMP): $(CONFORMANCE_DIR)/package.json $(CONFORMANCE_DIR)/package-lock.json $(CONFORMANCE_DIR)/.npmrc
	@$(MAKE) npm-lock-check
	$(NPM) ci --prefix $(CONFORMANCE_DIR)
	touch $@

.PHONY: api-conformance
api-conformance: build $(CONFORMANCE_STAMP) ## Run every operation of api/openapi.yaml through a generated TypeScript client (openapi-typescript, openapi-fetch) and Prism's validating proxy against a real bothy; any violation fails.
	cd $(CONFORMANCE_DIR) && node_modules/.bin/openapi-typescript $(abspath $(OPENAPI)) -o gen/schema.d.ts >/dev/null
	cd $(CONFORMANCE_DIR) && node_modules/.bin/tsc -p .
	cd $(CONFORMANCE_DIR) && node dist/src/main.js $(abspath $(BOTHY)) $(abspath $(OPENAPI))

.PHONY: api-lint
api-lint: $(NPM_STAMP) npm-lock-check ## Lint api/openapi.yaml with Redocly (recommended-strict, redocly.yaml) and validate api/gateway.asyncapi.yaml with @asyncapi/parser.
	$(REDOCLY) lint --config redocly.yaml --format stylish $(OPENAPI)
	node $(NPM_DIR)/asyncapi-validate.mjs $(ASYNCAPI)

.PHONY: vuln-check
vuln-check: $(GOVULNCHECK) $(VULN_DB_INDEX) ## Fail when govulncheck finds a known vulnerability reachable from the code of a Go module (server, architecture, echo agent, tools) or in the Go toolchain's standard library, against the database of the pinned golang.org/x/vulndb (ADR 0036).
	@failed=(); db=file://$(abspath $(VULN_DB)); \
	for mod in $(VULN_MODULES); do \
	  echo "vuln-check: $$mod ($$(cd $$mod && $(GO) env GOVERSION))"; \
	  (cd $$mod && $(GOVULNCHECK) -db $$db ./...) || failed+=("$$mod"); \
	done; \
	for mod in $(VULN_TOOLS_MODULE); do \
	  echo "vuln-check: $$mod, its tools ($$(cd $$mod && GOWORK=off $(GO) env GOVERSION))"; \
	  (cd $$mod && GOWORK=off $(GOVULNCHECK) -db $$db tool) || failed+=("$$mod"); \
	done; \
	if (( $${#failed[@]} > 0 )); then \
	  echo "vuln-check: known vulnerabilities reachable in $${failed[*]}: upgrade the module named above (the toolchain line of every go.mod and go.work for the standard library; ADR 0036)"; \
	  exit 1; \
	fi; \
	echo "vuln-check: no known vulnerability reachable in $(VULN_MODULES) $(VULN_TOOLS_MODULE)"

.PHONY: text-rules
text-rules: ## Fail on en/em dashes, non-example emails, placeholder names, home paths, registry hosts, committed compiled programs.
	$(GO) run ./architecture/cmd/textrules -root .

.PHONY: test
test: ## Run every test (-race, integration tests on throwaway PostgreSQL) with coverage.
	@mkdir -p $(COVER_DIR)
	@status=0; \
	$(GO) test -race -count=1 -timeout 20m -coverprofile=$(COVER_PROFILE) $(TEST_FLAGS) $(TEST_PACKAGES) 2>&1 | tee $(TEST_LOG) || status=$$?; \
	bash scripts/test-summary.sh $(TEST_LOG) $(COVER_PROFILE) $$status; \
	exit $$status

# The fast loop: every test of every package but the end-to-end suite (internal/e2e), the
# benchmark's cases and the two programs that start whole servers (cmd/bothy, the echo agent),
# without -race, coverage, npm or a browser; no test is skipped or shortened (spec 07), whole
# packages are left to make test. Go's test cache keeps what did not change. make test stays
# the whole suite, and make check runs that.
SHORT_SKIP := /internal/e2e/|/cmd/bothybench|/cmd/bothy$$|/examples/agents/echo
.PHONY: test-short
test-short: ## The fast loop: unit and fast integration tests (no -race, npm, browser or end-to-end suite); make test runs everything.
	$(GO) test $(TEST_FLAGS) $$($(GO) list $(GO_PACKAGES) | grep -vE '$(SHORT_SKIP)')

.PHONY: cover-floor
cover-floor: ## Fail when a package's coverage (from make test) is below architecture/coverage-floors.yaml.
	$(GO) run ./architecture/cmd/coverfloor -profile $(COVER_PROFILE) -floors $(COVER_FLOORS)

.PHONY: gate-fixtures
gate-fixtures: $(OAPI_CODEGEN) $(GOLANGCI_LINT) $(GOVULNCHECK) $(VULN_DB_INDEX) $(NPM_STAMP) ## Prove each gate rejects its violation (injected into temporary copies).
	MAKE="$(MAKE)" TOOLS_BIN="$(TOOLS_BIN)" bash scripts/gate-fixtures.sh

##@ TypeScript SDK (clients/typescript)

# The SDK is an npm package of its own, installed from its lock file (which, like tools/npm's,
# records no download URL), tested by vitest against a scripted fake and against a real
# `bothy serve` built here. make check runs sdk-check beside the API gates and sdk-test after test.
SDK_DIR := clients/typescript
SDK_STAMP := $(SDK_DIR)/node_modules/.package-lock.json
SDK_GEN := $(SDK_DIR)/src/gen/openapi.ts
# The gateway's frame types, written from api/gateway.asyncapi.yaml by architecture/cmd/frametypes.
SDK_FRAMES := $(SDK_DIR)/src/gen/frames.ts
SDK_BOTHY := $(SDK_DIR)/.test-tmp/bothy
SDK_BIN := $(SDK_DIR)/node_modules/.bin

$(SDK_STAMP): $(SDK_DIR)/package.json $(SDK_DIR)/package-lock.json $(SDK_DIR)/.npmrc
	@$(MAKE) sdk-lock-check
	$(NPM) ci --prefix $(SDK_DIR)
	touch $@

.PHONY: sdk-install
sdk-install: $(SDK_STAMP) ## Install the TypeScript SDK's npm packages from clients/typescript/package-lock.json (npm ci).

.PHONY: sdk-lock-check
sdk-lock-check: npm-lock-check ## Fail when clients/typescript/package-lock.json (or another npm lock file) records a download URL.

.PHONY: sdk-generate
sdk-generate: $(SDK_STAMP) ## Regenerate the SDK's types: src/gen/openapi.ts from api/openapi.yaml, src/gen/frames.ts (the gateway's frames) from api/gateway.asyncapi.yaml.
	$(SDK_BIN)/openapi-typescript $(OPENAPI) -o $(SDK_GEN)
	$(GO) run ./architecture/cmd/frametypes -asyncapi $(ASYNCAPI) -out $(SDK_FRAMES)

.PHONY: sdk-check
sdk-check: $(SDK_STAMP) sdk-lock-check ## Fail when the SDK's generated types differ from what api/openapi.yaml and api/gateway.asyncapi.yaml generate, or the SDK does not type-check.
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(SDK_BIN)/openapi-typescript $(OPENAPI) -o $$tmp/openapi.ts >/dev/null 2>&1; \
	if ! diff -u $(SDK_GEN) $$tmp/openapi.ts > $$tmp/diff; then \
	  head -n 40 $$tmp/diff; \
	  echo "sdk-check: $(SDK_GEN) is stale: it differs from what $(OPENAPI) generates; run make sdk-generate and commit the result"; \
	  exit 1; \
	fi; \
	$(GO) run ./architecture/cmd/frametypes -asyncapi $(ASYNCAPI) -out $$tmp/frames.ts; \
	if ! diff -u $(SDK_FRAMES) $$tmp/frames.ts > $$tmp/diff; then \
	  head -n 40 $$tmp/diff; \
	  echo "sdk-check: $(SDK_FRAMES) is stale: it differs from what $(ASYNCAPI) generates; run make sdk-generate and commit the result"; \
	  exit 1; \
	fi
	cd $(SDK_DIR) && node_modules/.bin/tsc --noEmit
	@echo "sdk-check: $(SDK_GEN) matches $(OPENAPI), $(SDK_FRAMES) matches $(ASYNCAPI); the SDK type-checks"

.PHONY: sdk-test
sdk-test: $(SDK_STAMP) ## Run the SDK's tests: reducers and engine against a scripted fake, then the engine against a real bothy serve (about a minute).
	$(GO) build -o $(SDK_BOTHY) ./services/server/cmd/bothy
	cd $(SDK_DIR) && BOTHY_BIN=$(CURDIR)/$(SDK_BOTHY) node_modules/.bin/vitest run

##@ Web client (services/web)

# The web client is an npm project of its own (Preact, Vite; the SDK from clients/typescript's
# sources through an alias), installed from its lock file, which records no download URL.
# web-build copies its build into the server's webui/dist, which go:embed takes into bin/bothy.
# Its browser tests drive Debian's Chromium through playwright-core (never a browser download).
WEB_DIR := services/web
WEB_STAMP := $(WEB_DIR)/node_modules/.package-lock.json
WEB_EMBED := services/server/internal/webui/dist
WEB_BOTHY := $(WEB_DIR)/.test-tmp/bothy
CHROMIUM ?= /usr/bin/chromium
# The build the browser tests serve (web.dir) and extra vitest arguments: gate-fixtures points
# them at a drifted copy of the build and one test to prove web-test fails on it.
WEB_TEST_DIST ?= $(CURDIR)/$(WEB_DIR)/dist
WEB_TEST_ARGS ?=

$(WEB_STAMP): $(WEB_DIR)/package.json $(WEB_DIR)/package-lock.json $(WEB_DIR)/.npmrc
	@$(MAKE) npm-lock-check
	$(NPM) ci --prefix $(WEB_DIR)
	touch $@

.PHONY: web-install
web-install: $(WEB_STAMP) ## Install the web client's npm packages from services/web/package-lock.json (npm ci).

.PHONY: web-build
web-build: $(WEB_STAMP) ## Type-check and build the web client (vite) and copy it into the server's webui/dist for go:embed.
	cd $(WEB_DIR) && node_modules/.bin/tsc --noEmit && node_modules/.bin/vite build --logLevel warn
	find $(WEB_EMBED) -mindepth 1 ! -name .gitkeep -delete
	cp -R $(WEB_DIR)/dist/. $(WEB_EMBED)/
	@echo "web-build: $(WEB_DIR)/dist copied into $(WEB_EMBED) (embedded by the next go build)"

.PHONY: browser-install
browser-install: ## Install Debian's Chromium and its colour emoji font for the browser tests (apt-get install chromium fonts-noto-color-emoji) when /usr/bin/chromium (CHROMIUM) or the font is missing.
	@if [[ -x $(CHROMIUM) ]] && fc-list 2>/dev/null | grep -q 'Noto Color Emoji'; then echo "browser-install: $$($(CHROMIUM) --version 2>/dev/null | head -n1) at $(CHROMIUM), with Noto Color Emoji"; \
	else \
	  sudo=$$([[ $$(id -u) == 0 ]] || echo sudo); \
	  $$sudo apt-get update && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-upgrade chromium fonts-noto-color-emoji; \
	fi

.PHONY: web-test
web-test: web-build ## Run the web client in headless Chromium against a real bothy serve: two people, live posts, edits, deletes, drafts, badges, offline, keyboard, phone (screenshots in services/web/.test-tmp/screenshots).
	@[[ -x $(CHROMIUM) ]] || { echo "web-test: no Chromium at $(CHROMIUM); run make browser-install"; exit 1; }
	$(GO) build -o $(WEB_BOTHY) ./services/server/cmd/bothy
	cd $(WEB_DIR) && BOTHY_BIN=$(CURDIR)/$(WEB_BOTHY) CHROMIUM=$(CHROMIUM) WEB_DIST=$(WEB_TEST_DIST) node_modules/.bin/vitest run $(WEB_TEST_ARGS)

# The smoke tests of the bench's client cases (sdk, sidebar: ADR 0038) run the SDK in Node and the
# web client in Chromium, so they build only with the benchclients tag and run here, a gate of
# make check beside web-test, never in make test (which needs no npm package or browser).
.PHONY: bench-client-test
bench-client-test: sdk-install web-build ## Run the smoke tests of the bench's client cases (the SDK's cold start in Node, the sidebar in headless Chromium) on pgtest databases.
	@[[ -x $(CHROMIUM) ]] || { echo "bench-client-test: no Chromium at $(CHROMIUM) for the sidebar case; run make browser-install"; exit 1; }
	CHROMIUM=$(CHROMIUM) $(GO) test -tags benchclients -count=1 -run 'Smoke' ./services/server/cmd/bothybench/internal/clientbench

##@ Docs and housekeeping

.PHONY: docs
docs: $(NPM_STAMP) ## Render the API reference from api/openapi.yaml into bin/docs/api/index.html (self-contained).
	$(REDOCLY) build-docs --config redocly.yaml --inlineBundle -o $(BIN_DIR)/docs/api/index.html $(OPENAPI)

.PHONY: clean
clean: ## Remove build output and coverage files (keeps .bothy/ data and the tools).
	rm -rf $(BIN_DIR) $(COVER_DIR)

.PHONY: clean-tools
clean-tools: ## Remove the installed tools (.bin/, tools/npm/node_modules/); make tools brings them back.
	rm -rf $(TOOLS_BIN) $(NPM_DIR)/node_modules

.PHONY: clean-data
clean-data: ## Delete the embedded cluster's data under .bothy/ (refuses while its PostgreSQL runs).
	@pidfile=.bothy/pgdata/postmaster.pid; \
	if [[ -f $$pidfile ]] && kill -0 "$$(head -n1 $$pidfile)" 2>/dev/null; then \
	  echo "clean-data: PostgreSQL (pid $$(head -n1 $$pidfile)) still runs on .bothy/; stop bothy first"; exit 1; \
	fi
	rm -rf .bothy
