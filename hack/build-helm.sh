#!/usr/bin/env bash
# Builds Helm from the Go module proxy, once, into the cache the control plane binaries use
# (~/.cache/cloneset-controller/bin, like hack/build-control-plane.sh), and prints the path of the binary.
# A `helm` given through $HELM (an executable path) is used as is. Cold build on 2 cores: about 3 min.
# Concurrent invocations are serialised with flock on $CACHE/.build-helm.lock.
set -euo pipefail
HELM_VERSION=${HELM_VERSION:-v3.22.0}
CACHE=${CLONESET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cloneset-controller}
BIN=$CACHE/bin
log() { printf '[build-helm] %s\n' "$*" >&2; }
if [ -n "${HELM:-}" ] && [ -x "$HELM" ]; then echo "$HELM"; exit 0; fi
mkdir -p "$BIN"
OUT=$BIN/helm-$HELM_VERSION
if command -v flock >/dev/null; then
  exec 9>"$CACHE/.build-helm.lock"
  if ! flock -n 9; then log "another build is running (lock $CACHE/.build-helm.lock); waiting for it"; flock 9; fi
fi
if [ ! -x "$OUT" ]; then
  if ! command -v go >/dev/null; then log "Go is required to build Helm (or set HELM=/path/to/helm)"; exit 1; fi
  export GOTOOLCHAIN=local CGO_ENABLED=0
  export GOMODCACHE=${GOMODCACHE:-$CACHE/gomod} GOCACHE=${GOCACHE:-$CACHE/gobuild}
  SRC=$CACHE/src/helm-$HELM_VERSION; mkdir -p "$SRC"; cd "$SRC"
  [ -f go.mod ] || go mod init helmbuild.local >/dev/null 2>&1
  log "building helm $HELM_VERSION from the Go module proxy (first time: a few minutes)"
  export GOFLAGS=-mod=mod
  go get "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2
  go build -trimpath -p 2 -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" \
    -o "$OUT.tmp" helm.sh/helm/v3/cmd/helm
  mv "$OUT.tmp" "$OUT"
  log "built $("$OUT" version --short)"
fi
ln -sf "helm-$HELM_VERSION" "$BIN/helm"
echo "$OUT"
