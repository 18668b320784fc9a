# palace: `make demo` walks the lifecycle on the demo data; `make test` runs every test.
GO         ?= go
BIN        := bin/palace
TOOLS      := $(CURDIR)/.tools
STATICCHECK_VERSION := v0.8.2
# VERSION is what `palace --version` prints: the tag (or commit) of this
# checkout. `go install …@vX.Y.Z` builds get the module version instead.
VERSION    ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo unknown)
LDFLAGS    := -X main.version=$(VERSION)
export CGO_ENABLED := 0

.PHONY: all build test test-go test-vscode demo bench lint plugins tools vscode-package clean quality quality-feedback

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/palace

demo: build
	./examples/demo/demo.sh

# test runs every Go test — unit, Rego through OPA, CLI end-to-end against the
# built binary, WASM guests, the LSP with headless Neovim and Emacs, MCP with
# the official TypeScript SDK client, the Inspector and ajv, the mailbox hook
# with pre-commit, the reviewer's desk and VS Code in headless Chromium — then
# compiles the VS Code extension and runs its wire-level smoke test. Suites
# whose external tool is missing skip with a message, and the run ends with a
# summary of what ran and what was skipped and why; .ci/run installs every
# tool.
SUMMARY := $(CURDIR)/bin/test-summary.txt
test: build
	@rm -f $(SUMMARY); status=0; \
	$(MAKE) --no-print-directory test-go || status=1; \
	$(MAKE) --no-print-directory test-vscode || status=1; \
	$(GO) run ./internal/testreport -print $(SUMMARY) || status=1; \
	exit $$status

# test-go runs go test through internal/testreport, which prints a line per
# package and the output of failing tests, and notes the skips for the summary.
test-go:
	@mkdir -p bin; $(GO) build -o bin/testreport ./internal/testreport
	@$(GO) test -count=1 -timeout 25m -json ./... 2>&1 | bin/testreport -summary $(SUMMARY)

VSCODE := examples/editors/vscode
# test-vscode compiles the extension and runs its tests against the real
# server. No npm, or an npm registry out of reach, skips it with a message
# (the summary says so); any other failure fails.
test-vscode: build
	@mkdir -p bin; if ! command -v npm >/dev/null 2>&1; then \
		echo "skip VS Code extension: npm not found"; echo "skip: VS Code extension: npm not found" >> $(SUMMARY); exit 0; fi; \
	cd $(VSCODE) && if [ ! -d node_modules ]; then \
		if ! out=$$(npm ci --no-audit --no-fund 2>&1); then echo "$$out"; \
			if echo "$$out" | grep -qE 'ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|npm error network'; then \
				echo "skip VS Code extension: npm ci could not reach the npm registry"; \
				echo "skip: VS Code extension: npm ci could not reach the npm registry" >> $(SUMMARY); exit 0; fi; \
			exit 1; fi; fi; \
	if npm run compile && PALACE_BIN=$(CURDIR)/$(BIN) npm test; then \
		echo "ran: VS Code extension: compile, smoke and activation tests (npm test)" >> $(SUMMARY); \
	else echo "fail: VS Code extension: npm run compile or npm test" >> $(SUMMARY); exit 1; fi

vscode-package: test-vscode
	cd $(VSCODE) && npx --no-install vsce package --out palace.vsix

bench: build
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./...

lint: tools
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(TOOLS)/staticcheck ./...
	@$(GO) mod tidy -diff >/dev/null || { echo "go.mod or go.sum is not tidy: run 'go mod tidy'"; $(GO) mod tidy -diff; exit 1; }

tools: $(TOOLS)/staticcheck

$(TOOLS)/staticcheck:
	GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# quality runs the retrieval-quality benchmark (a copy of shared/ beside the
# clone) on the dev tasks, once as dry runs and once replayed 3 times as
# real requests, and fails when a figure drops below its floor or the
# replay loses more than 5 points (.ci/quality_check.py).
QUALITY ?= ../shared/quality
quality: build
	@if [ ! -f $(QUALITY)/run.py ]; then echo "skip quality: $(QUALITY)/run.py not found (set QUALITY=)"; exit 0; fi; \
	out=$$(mktemp -d) && python3 $(QUALITY)/run.py --palace $(BIN) --no-ablation --out $$out $(QUALITY)/dev/tasks.jsonl && \
	python3 $(QUALITY)/run.py --palace $(BIN) --no-ablation --replay 3 --out $$out/replay $(QUALITY)/dev/tasks.jsonl && \
	python3 .ci/quality_check.py $$out/dev-*.json --replay $$out/replay/dev-*-replay3.json

# quality-feedback replays the dev tasks with simulated adoption signals
# (.ci/quality_feedback.py) and fails unless R@inline and P@inline rise.
quality-feedback: build
	@if [ ! -f $(QUALITY)/run.py ]; then echo "skip quality-feedback: $(QUALITY)/run.py not found (set QUALITY=)"; exit 0; fi; \
	python3 .ci/quality_feedback.py --palace $(BIN) --quality $(QUALITY)

plugins:
	$(MAKE) -C examples/plugins

clean:
	rm -rf bin .tools
