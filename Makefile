# uptime-operator — run `make help` for the targets.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

export GOFLAGS ?= -buildvcs=false
CONTROLLER_GEN ?= go tool controller-gen
K8S_VERSION ?= 1.37.2
LOCALBIN ?= $(CURDIR)/bin
STATE_DIR ?= $(CURDIR)/.uptime-dev
API_LISTEN ?= 127.0.0.1:8080
# OIDC_TEST_PROVIDER (127.0.0.1:PORT) makes `make run` start a local OpenID
# provider for sso status pages (docs/status-pages.md).
OIDC_TEST_PROVIDER ?=
GEN_PATHS := paths="./api/...;./controllers/...;./webhooks/...;./internal/bootstrap/..."

.DEFAULT_GOAL := help

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: ## Generate CRDs, RBAC and webhook configuration into config/ (and the chart's CRD templates).
	$(CONTROLLER_GEN) rbac:roleName=uptime-operator-manager crd:allowDangerousTypes=true webhook $(GEN_PATHS) \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac output:webhook:artifacts:config=config/webhook
	@hack/sync-chart-crds.sh
	@hack/sync-chart-rbac.sh
	go run ./hack/gen-crd-docs
	go run ./hack/gen-openapi

.PHONY: generate
generate: ## Generate deepcopy code.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths="./api/..."

.PHONY: fmt
fmt: ## Run gofmt on the code.
	gofmt -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet, also over the suites behind build tags (chaos, e2e), so they keep compiling.
	go vet ./...
	go vet -tags chaos,e2e ./test/...

.PHONY: lint
lint: vet ## Run the linters (gofmt check and go vet).
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: verify
verify: ## Fail when generated code is stale, code is unformatted or vet complains.
	@echo "verify: regenerating deepcopy, CRDs, RBAC and webhook manifests"
	@$(MAKE) --no-print-directory generate manifests >/dev/null
	@if [ -n "$$(git status --porcelain -- api config charts/uptime-operator/templates/crds docs/crd-reference.md docs/openapi.json docs/api-reference.md internal/apiserver/openapi.json)" ]; then \
		echo "generated files are stale; run 'make generate manifests' and commit:"; \
		git status --porcelain -- api config charts/uptime-operator/templates/crds docs/crd-reference.md docs/openapi.json docs/api-reference.md internal/apiserver/openapi.json; git --no-pager diff --stat -- api config charts docs; exit 1; fi
	@hack/verify-kustomize.sh
	@hack/verify-chart.sh
	@hack/verify-dockerfile.sh
	@hack/verify-oapiclient.sh
	@$(MAKE) --no-print-directory lint-dashboard
	@$(MAKE) --no-print-directory lint
	@echo "verify: ok"

.PHONY: lint-dashboard
lint-dashboard: ## Check the chart's Grafana dashboard: every query parses as PromQL and names only metrics the product exports.
	@names="$$(mktemp)"; trap 'rm -f "$$names"' EXIT; \
		go run ./hack/metric-names >"$$names"; \
		cd hack/promtools && go vet . && go test -count=1 . >/dev/null && \
		go run . lint-dashboard -names "$$names" ../../charts/uptime-operator/dashboards/*.json

.PHONY: test-rules
test-rules: ## Test the chart's PrometheusRule with promtool (built once from its Go module; never skipped).
	@hack/test-rules.sh

.PHONY: envtest
envtest: ## Build kube-apiserver, etcd and kubectl from the Go module proxy (once; cached).
	@hack/envtest-binaries.sh >/dev/null

# Each checkout keeps its own logs, so two runs on one machine do not
# overwrite each other's.
TEST_LOG ?= $(CURDIR)/bin/test.log
E2E_LOG ?= $(CURDIR)/bin/e2e.log
# Extra flags of the e2e test binary, e.g. E2E_FLAGS='-ginkgo.focus=remote'
# to run one container's specs on a running cluster.
E2E_FLAGS ?=

.PHONY: test
test: envtest ## Run verify, then every test (envtest control plane, SQLite, PostgreSQL and headless Chromium).
	@$(MAKE) --no-print-directory verify
	@$(MAKE) --no-print-directory test-rules
	@$(MAKE) --no-print-directory test-release
	@hack/browser-deps.sh
	@eval "$$(hack/postgres.sh | tail -n 1)"; \
		export KUBEBUILDER_ASSETS="$$(hack/envtest-binaries.sh)"; \
		export UPTIME_BROWSER_TESTS=required; \
		echo "test: KUBEBUILDER_ASSETS=$$KUBEBUILDER_ASSETS"; \
		mkdir -p "$(dir $(TEST_LOG))"; \
		go test -count=1 -timeout 30m ./... 2>&1 | tee "$(TEST_LOG)"

.PHONY: test-release
test-release: ## Test hack/releasetool: a small two-architecture release built, signed and verified (and with the cosign CLI when COSIGN or PATH names one: hack/cosign-binary.sh).
	cd hack/releasetool && go vet ./... && go test -count=1 ./...

.PHONY: e2e
e2e: envtest ## End to end on a single-node Kubernetes built from source: release package, helm install, probe Pods, incidents (root; see README).
	@mkdir -p "$(dir $(E2E_LOG))"
	@# The HA spec runs the manager on hack/postgres.sh's server, so e2e starts
	@# it itself (idempotent) and does not rely on `make test` having run first;
	@# the bare agent's browser check needs Chromium on the host.
	@hack/browser-deps.sh
	@eval "$$(hack/postgres.sh | tail -n 1)"; \
		go test -tags e2e -count=1 -timeout 90m -v ./test/e2e/ $(E2E_FLAGS) 2>&1 | tee "$(E2E_LOG)"

.PHONY: cluster-up
cluster-up: ## Start the local single-node cluster (hack/cluster.sh up).
	@hack/cluster.sh up

.PHONY: cluster-down
cluster-down: ## Stop the local cluster and undo its changes to the host.
	@hack/cluster.sh down

.PHONY: bench
bench: envtest ## Run the benchmarks and print their figures.
	@eval "$$(hack/postgres.sh | tail -n 1)"; \
		export KUBEBUILDER_ASSETS="$$(hack/envtest-binaries.sh)"; \
		go test -run '^$$' -bench . -benchmem -timeout 30m ./... 2>&1 | grep -E 'Benchmark|ok|FAIL|^---'

CHAOS_FLAGS ?=
.PHONY: chaos
chaos: envtest ## Run the fault suite (test/chaos, own network and mount namespaces; root) and print its table of figures.
	@hack/host-deps.sh nft nftables "the fault suite (make chaos)"
	@export KUBEBUILDER_ASSETS="$$(hack/envtest-binaries.sh)"; \
		go build -o $(LOCALBIN)/uptime-operator . && \
		go test -c -tags chaos -o $(LOCALBIN)/chaos.test ./test/chaos && \
		cd test/chaos && unshare --net --mount --propagation private -- sh -c 'ip link set lo up && ip addr add 192.0.2.1/32 dev lo && ip route add default dev lo && exec "$$0" "$$@"' \
			$(LOCALBIN)/chaos.test -test.v -test.timeout 40m -test.parallel 6 -chaos.binary=$(LOCALBIN)/uptime-operator $(CHAOS_FLAGS) 2>&1 | tee /tmp/uptime-operator-chaos.log | \
			grep -E '^(=== RUN|--- |\s+\S+_test.go:|chaos figures|\|)|^(ok|FAIL|PASS)'

PEERS_DIR ?= $(CURDIR)/../shared/peers
BENCH_PEERS_FLAGS ?=

.PHONY: bench-peers
bench-peers: ## Measure the probe agent beside blackbox_exporter and Gatus (sources in PEERS_DIR) on 127.0.0.1.
	PEERS_DIR=$(PEERS_DIR) go run ./hack/bench-peers $(BENCH_PEERS_FLAGS)

BENCH_SCALE_FLAGS ?=
.PHONY: bench-scale
bench-scale: envtest ## Measure 100,000 HTTP Monitors (real CRs, manager, one agent) with SQLite, then PostgreSQL (BENCH_SCALE_FLAGS="-n 2000" for a short run).
	@eval "$$(hack/postgres.sh | tail -n 1)"; \
		export KUBEBUILDER_ASSETS="$$(hack/envtest-binaries.sh)"; \
		go run ./hack/bench-scale $(BENCH_SCALE_FLAGS)

##@ Build

.PHONY: build
build: kubectl-plugin ## Build the uptime-operator binary and the kubectl plugin into bin/.
	go build -o $(LOCALBIN)/uptime-operator .

.PHONY: kubectl-plugin
kubectl-plugin: ## Build the kubectl plugin bin/kubectl-uptime (put bin/ on PATH for `kubectl uptime`; docs/kubectl.md).
	go build -o $(LOCALBIN)/kubectl-uptime ./cmd/kubectl-uptime

.PHONY: run
run: envtest build ## Start a local control plane with the operator, a local probe region and the API.
	$(LOCALBIN)/uptime-operator dev --state-dir $(STATE_DIR) --api-listen $(API_LISTEN) $(if $(OIDC_TEST_PROVIDER),--oidc-test-provider $(OIDC_TEST_PROVIDER))

.PHONY: install
install: manifests ## Install the CRDs into the cluster of the current kubeconfig.
	kubectl apply --server-side -k config/crd

.PHONY: uninstall
uninstall: ## Remove the CRDs from the cluster of the current kubeconfig.
	kubectl delete -k config/crd --ignore-not-found

.PHONY: deploy
deploy: manifests ## Deploy the operator with kustomize to the current cluster.
	kubectl apply --server-side -k config/default

.PHONY: undeploy
undeploy: ## Remove the operator deployed with `make deploy`.
	kubectl delete -k config/default --ignore-not-found

.PHONY: docker-build
docker-build: ## Build the container image (needs a Docker engine).
	docker build -t uptime-operator:dev .

IMAGE_REPO ?= ghcr.io/uptime-operator/uptime-operator
IMAGE_TAG ?= $(shell sed -n 's/^appVersion: "\(.*\)"/\1/p' charts/uptime-operator/Chart.yaml)
IMAGE_TAR ?= $(LOCALBIN)/uptime-operator-image.tar
CA_BUNDLE ?= /etc/ssl/certs/ca-certificates.crt
IMAGE_DIGEST_FILE ?=
# make image builds one platform; a release builds both (hack/release.sh).
IMAGE_PLATFORMS ?= linux/amd64
IMAGE_LDFLAGS = -s -w -X github.com/uptime-operator/uptime-operator/internal/cli.Version=v$(IMAGE_TAG)

.PHONY: image
image: ## Build the image without a container engine or registry: $(IMAGE_TAR) (load it with ctr/podman/docker); IMAGE_PLATFORMS="linux/amd64 linux/arm64" for an image index.
	@test -s $(CA_BUNDLE) || { echo "image: no CA bundle at $(CA_BUNDLE) (apt-get install ca-certificates)"; exit 1; }
	for p in $(IMAGE_PLATFORMS); do \
		CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} go build -trimpath -ldflags "$(IMAGE_LDFLAGS)" \
			-o $(LOCALBIN)/image/$${p%/*}-$${p#*/}/uptime-operator . ; \
	done
	go run ./hack/ociimage -o $(IMAGE_TAR) -tag $(IMAGE_REPO):$(IMAGE_TAG) \
		$(foreach p,$(IMAGE_PLATFORMS),-platform $(p)) \
		-file '$(LOCALBIN)/image/{os}-{arch}/uptime-operator:/uptime-operator:0755' \
		-ca $(CA_BUNDLE) -nonroot -user 65532:65532 \
		-entrypoint /uptime-operator -cmd manager \
		-label org.opencontainers.image.title=uptime-operator \
		-label org.opencontainers.image.version=v$(IMAGE_TAG) \
		-label org.opencontainers.image.licenses=Apache-2.0 \
		$(if $(IMAGE_DIGEST_FILE),-digest-file $(IMAGE_DIGEST_FILE))

.PHONY: image-ldflags
image-ldflags: # The -ldflags of the image's binary (hack/release.sh records them in the provenance).
	@echo '$(IMAGE_LDFLAGS)'

##@ Release

VERSION ?=
RELEASE_DIR ?= $(CURDIR)/dist
# A cosign key (cosign generate-key-pair; its password in COSIGN_PASSWORD)
# signs the release; without one it is built unsigned.
COSIGN_KEY ?=
SIGNING_KEY ?= $(COSIGN_KEY)

.PHONY: release
release: ## Build release VERSION=vX.Y.Z [SIGNING_KEY=cosign.key] into $(RELEASE_DIR): chart, amd64+arm64 image index and binaries, kubectl plugin, SBOMs, provenance, signatures (hack/release.sh).
	@RELEASE_DIR=$(RELEASE_DIR) IMAGE_REPO=$(IMAGE_REPO) SIGNING_KEY=$(SIGNING_KEY) hack/release.sh "$(VERSION)"
