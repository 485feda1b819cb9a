#!/usr/bin/env bash
# Builds Prometheus and promtool from the Go module proxy, once, into the cache the control plane binaries use
# (~/.cache/cloneset-controller/bin, like hack/build-helm.sh), and prints the directory that holds both binaries.
# The rule checks (promtool check/test rules, hack/test.sh) and test/integration/prometheus.test.ts use them.
# Service discovery providers are left out (build tag remove_all_sd, Prometheus ≥ 3.10): the tests scrape static
# targets, and the cloud SDKs would triple the build time. Binaries given through $PROMETHEUS and $PROMTOOL
# (executable paths) are used as they are. Cold build on 2 cores: about 10 min.
# Concurrent invocations are serialised with flock on $CACHE/.build-prometheus.lock.
set -euo pipefail
# Prometheus 3.x is published as Go module v0.3xx.y (v0.316.0 = Prometheus 3.16.0).
PROMETHEUS_MODULE_VERSION=${PROMETHEUS_MODULE_VERSION:-v0.316.0}
CACHE=${CLONESET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cloneset-controller}
BIN=$CACHE/bin
log() { printf '[build-prometheus] %s\n' "$*" >&2; }
if [ -n "${PROMETHEUS:-}" ] && [ -x "$PROMETHEUS" ] && [ -n "${PROMTOOL:-}" ] && [ -x "$PROMTOOL" ]; then
  dir=$(mktemp -d); ln -s "$PROMETHEUS" "$dir/prometheus"; ln -s "$PROMTOOL" "$dir/promtool"; echo "$dir"; exit 0
fi
OUT=$BIN/prometheus-$PROMETHEUS_MODULE_VERSION
mkdir -p "$OUT"
if command -v flock >/dev/null; then
  exec 9>"$CACHE/.build-prometheus.lock"
  if ! flock -n 9; then log "another build is running (lock $CACHE/.build-prometheus.lock); waiting for it"; flock 9; fi
fi
if [ ! -x "$OUT/prometheus" ] || [ ! -x "$OUT/promtool" ]; then
  if ! command -v go >/dev/null; then log "Go is required to build Prometheus (or set PROMETHEUS and PROMTOOL)"; exit 1; fi
  export GOTOOLCHAIN=local CGO_ENABLED=0
  export GOMODCACHE=${GOMODCACHE:-$CACHE/gomod} GOCACHE=${GOCACHE:-$CACHE/gobuild}
  SRC=$CACHE/src/prometheus-$PROMETHEUS_MODULE_VERSION; mkdir -p "$SRC"; cd "$SRC"
  [ -f go.mod ] || go mod init prometheusbuild.local >/dev/null 2>&1
  log "building prometheus and promtool $PROMETHEUS_MODULE_VERSION from the Go module proxy (first time: several minutes)"
  export GOFLAGS="-mod=mod -tags=remove_all_sd"
  RELEASE=$(echo "$PROMETHEUS_MODULE_VERSION" | sed -E 's/^v0\.3([0-9]{2})\.([0-9]+)$/3.\1.\2/; s/^3\.0([0-9])/3.\1/')
  go get "github.com/prometheus/prometheus/cmd/prometheus@$PROMETHEUS_MODULE_VERSION" >&2
  for cmd in prometheus promtool; do
    go build -trimpath -p 2 -ldflags "-s -w -X github.com/prometheus/common/version.Version=$RELEASE" \
      -o "$OUT/$cmd.tmp" "github.com/prometheus/prometheus/cmd/$cmd"
    mv "$OUT/$cmd.tmp" "$OUT/$cmd"
  done
  log "built $("$OUT/prometheus" --version | head -1)"
fi
echo "$OUT"
