# palace: `make demo` walks the lifecycle on the demo data; `make test` runs every test.
GO         ?= go
BIN        := bin/palace
TOOLS      := $(CURDIR)/.tools
STATICCHECK_VERSION := v0.8.2
export CGO_ENABLED := 0

.PHONY: all build test demo bench lint plugins tools clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/palace

demo: build
	./examples/demo/demo.sh

# test runs every Go test (unit, CLI end-to-end against the built binary,
# Rego unit tests through OPA) plus the external-tool end-to-end suites.
test:
	$(GO) test -count=1 ./...

bench: build
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./...

lint: tools
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(TOOLS)/staticcheck ./...

tools: $(TOOLS)/staticcheck

$(TOOLS)/staticcheck:
	GOBIN=$(TOOLS) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

plugins:
	$(MAKE) -C examples/plugins

clean:
	rm -rf bin .tools
