# atoll — see README.md. `make test` is the one test command (CI runs it).
GO        ?= go
BIN       := bin/atoll
GOFLAGS   ?=
export GOFLAGS

# The embedded kube-apiserver reports this version on /version (kubectl and
# client libraries parse it); without it Kubernetes reports v0.0.0-master.
KUBE_VERSION := $(shell $(GO) list -m -f '{{.Version}}' k8s.io/kubernetes)
KUBE_MINOR   := $(word 2,$(subst ., ,$(KUBE_VERSION)))
ATOLL_VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
VERSION_PKG  := k8s.io/component-base/version
LDFLAGS := -X $(VERSION_PKG).gitVersion=$(KUBE_VERSION) -X $(VERSION_PKG).gitMajor=1 \
           -X $(VERSION_PKG).gitMinor=$(KUBE_MINOR) -X $(VERSION_PKG).gitTreeState=clean \
           -X $(VERSION_PKG).gitCommit=$(ATOLL_VERSION)

.PHONY: all build run test unit integration verify lint generate bench karmada-e2e clean

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/atoll

# The README's run command: the embedded control plane in ./.atoll.
run: build
	$(BIN) up $(ARGS)

# Everything CI checks: static checks, generated-code drift, unit tests and
# the integration/e2e tests against real API servers started by bin/atoll.
# Tests run with client-go's cache mutation detector: every informer (in
# the test process and in the atoll processes it starts) keeps a copy of
# what it stores and panics when a cached object is changed in place.
# Controllers read bindings from the cache without copying them (design
# 0013, decision 33); a change made in place would be a change no API
# server saw. Benchmarks, run by hand, go without it.
TEST_ENV := KUBE_CACHE_MUTATION_DETECTOR=true

test: verify build
	$(TEST_ENV) ATOLL_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 30m ./...

unit:
	$(TEST_ENV) $(GO) test -count=1 ./apis/... ./config/... ./pkg/...

integration: build
	$(TEST_ENV) ATOLL_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 30m ./test/...

verify: lint
	hack/verify-codegen.sh

# golangci-lint (.golangci.yml) is pinned in hack/tools/go.mod, like
# controller-gen: the first run fetches it through the Go module proxy and
# builds it (about a minute), later runs use the build cache.
GOLANGCI_LINT := $(GO) tool -modfile=hack/tools/go.mod golangci-lint

lint:
	@fmt_out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null; git ls-files --others --exclude-standard '*.go' 2>/dev/null)); \
	  if [ -n "$$fmt_out" ]; then echo "gofmt needed:"; echo "$$fmt_out"; exit 1; fi
	$(GO) vet ./...
	$(GOLANGCI_LINT) run ./...

generate:
	hack/update-codegen.sh

# Heavy measurements run on purpose, not in `make test`.
bench: build
	ATOLL_BIN=$(CURDIR)/$(BIN) $(GO) test -run '^$$' -bench . -benchtime 3x -timeout 30m ./bench/...

# Karmada's own e2e suite against `atoll up --members 3` (about half an hour;
# docs/karmada-compat.md). Results in _output/karmada-e2e/summary.md.
karmada-e2e:
	test/karmada-e2e/run.sh

clean:
	rm -rf bin
