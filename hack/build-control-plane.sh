#!/usr/bin/env bash
# Builds the local control plane binaries from the Go module proxy, once, into a cache outside the repo:
#   kube-apiserver, kube-controller-manager, kube-scheduler (k8s.io/kubernetes), etcd, kwok.
# A binary already present (or provided through KUBEBUILDER_ASSETS / TEST_ASSET_*) is not rebuilt.
# Cold build on a 2-core machine: about 9 min (k8s 5m40s, etcd 40s, kwok 2m30s; measured 2026-11-22).
# Concurrent invocations are serialised with flock on $CACHE/.build.lock.
set -euo pipefail
K8S=${K8S_VERSION:-v1.34.4}
ETCD=${ETCD_VERSION:-v3.6.16}
KWOK=${KWOK_VERSION:-v0.8.0}
CACHE=${CLONESET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cloneset-controller}
export GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0
export GOMODCACHE=${GOMODCACHE:-$CACHE/gomod} GOCACHE=${GOCACHE:-$CACHE/gobuild}
BIN=$CACHE/bin
mkdir -p "$BIN"
log() { printf '[build-control-plane] %s\n' "$*" >&2; }
have() { # name: true when an override or a cached build exists
  local n=$1 env
  env="TEST_ASSET_$(echo "$n" | tr 'a-z-' 'A-Z_')"
  [ -n "${!env:-}" ] && [ -x "${!env}" ] && return 0
  [ -n "${KUBEBUILDER_ASSETS:-}" ] && [ -x "$KUBEBUILDER_ASSETS/$n" ] && return 0
  [ -x "$BIN/$n" ]
}
# One build at a time per cache dir: a second invocation waits for the first, then finds the binaries built.
if command -v flock >/dev/null; then
  exec 9>"$CACHE/.build.lock"
  if ! flock -n 9; then
    log "another build is running (lock $CACHE/.build.lock); waiting for it"
    flock 9
  fi
fi
if have kube-apiserver && have kube-controller-manager && have kube-scheduler && have etcd && have kwok; then
  log "control plane binaries ready in $BIN"; exit 0
fi
if ! command -v go >/dev/null; then log "Go is required to build the control plane (or set KUBEBUILDER_ASSETS)"; exit 1; fi

if ! have kube-apiserver || ! have kube-controller-manager || ! have kube-scheduler; then
  SV=v0.${K8S#v1.}; MINOR=$(echo "$K8S" | cut -d. -f2)
  SRC=$CACHE/src/k8s-$K8S; mkdir -p "$SRC"; cd "$SRC"
  [ -f go.mod ] || go mod init kbuild.local >/dev/null 2>&1
  log "downloading k8s.io/kubernetes@$K8S module graph (first time: several minutes)"
  KMOD=$(go mod download -json "k8s.io/kubernetes@$K8S" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
  for m in $(awk '/^\tk8s\.io\/[a-z0-9-]+ v0\.0\.0( |$)/ {print $1}' "$KMOD"); do
    go mod edit -replace="$m=$m@$SV"
  done
  go mod edit -require="k8s.io/kubernetes@$K8S"
  LDF="-s -w -X k8s.io/component-base/version.gitVersion=$K8S -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$MINOR -X k8s.io/component-base/version.gitTreeState=clean"
  log "building kube-apiserver, kube-controller-manager, kube-scheduler $K8S (first time: 10-25 min)"
  go build -trimpath -p 2 -ldflags "$LDF" -o "$BIN/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler
  log "built $("$BIN/kube-apiserver" --version)"
fi

if ! have etcd; then
  SRC=$CACHE/src/etcd-$ETCD; mkdir -p "$SRC"; cd "$SRC"
  [ -f go.mod ] || go mod init etcdbuild.local >/dev/null 2>&1
  go mod edit -require="go.etcd.io/etcd/server/v3@$ETCD"
  log "building etcd $ETCD"
  go build -trimpath -ldflags "-s -w" -o "$BIN/etcd" go.etcd.io/etcd/server/v3
  log "built $("$BIN/etcd" --version | head -1)"
fi

if ! have kwok; then
  log "building kwok $KWOK"
  GOBIN=$BIN go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK"
  log "built kwok $KWOK"
fi
log "control plane binaries ready in $BIN"
