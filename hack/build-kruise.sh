#!/usr/bin/env bash
# Builds OpenKruise's own manager from the Go module proxy, once, for the side-by-side benchmark
# (`npm run bench:scale -- --kruise`, docs/performance.md "Side by side with Kruise"), into the cache the control
# plane binaries use (~/.cache/cloneset-controller), and prints the directory that holds it:
#   <dir>/kruise-manager                    the manager binary (github.com/openkruise/kruise, main package)
#   <dir>/crds/                             Kruise's own CRDs of that version (its manager needs them all: it
#                                           registers field indexes on several kinds before it starts)
# Nothing of Kruise is committed here: its source comes from the proxy's module zip (its go.mod's replace
# directives apply, so it is built inside the module, not with `go install`). A directory given through
# $KRUISE_DIR that holds both is used as is. Cold build on 2 cores, from an empty cache: 4.5–10 min.
set -euo pipefail
KRUISE_VERSION=${KRUISE_VERSION:-v1.8.2}
CACHE=${CLONESET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cloneset-controller}
log() { printf '[build-kruise] %s\n' "$*" >&2; }
if [ -n "${KRUISE_DIR:-}" ] && [ -x "$KRUISE_DIR/kruise-manager" ] && [ -f "$KRUISE_DIR/crds/apps.kruise.io_clonesets.yaml" ]; then
  echo "$KRUISE_DIR"; exit 0
fi
OUT=$CACHE/kruise-$KRUISE_VERSION
mkdir -p "$CACHE"
if command -v flock >/dev/null; then
  exec 9>"$CACHE/.build-kruise.lock"
  if ! flock -n 9; then log "another build is running (lock $CACHE/.build-kruise.lock); waiting for it"; flock 9; fi
fi
if [ ! -x "$OUT/kruise-manager" ] || [ ! -f "$OUT/crds/apps.kruise.io_clonesets.yaml" ]; then
  if ! command -v go >/dev/null; then log "Go is required to build Kruise's manager (or set KRUISE_DIR)"; exit 1; fi
  export GOTOOLCHAIN=local CGO_ENABLED=0
  export GOMODCACHE=${GOMODCACHE:-$CACHE/gomod} GOCACHE=${GOCACHE:-$CACHE/gobuild}
  log "downloading github.com/openkruise/kruise@$KRUISE_VERSION from the Go module proxy"
  MOD=$(cd "$CACHE" && go mod download -json "github.com/openkruise/kruise@$KRUISE_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  if [ -z "$MOD" ] || [ ! -f "$MOD/go.mod" ]; then log "the proxy did not serve github.com/openkruise/kruise@$KRUISE_VERSION"; exit 1; fi
  SRC=$CACHE/src/kruise-$KRUISE_VERSION
  rm -rf "$SRC"; mkdir -p "$(dirname "$SRC")"; cp -r "$MOD" "$SRC"; chmod -R u+w "$SRC"
  log "building the manager (first time: 5 to 10 minutes on 2 cores)"
  mkdir -p "$OUT"
  (cd "$SRC" && go build -trimpath -p 2 -ldflags "-s -w" -o "$OUT/kruise-manager.tmp" .)
  rm -rf "$OUT/crds"; mkdir -p "$OUT/crds"; cp "$SRC"/config/crd/bases/*.yaml "$OUT/crds/"
  mv "$OUT/kruise-manager.tmp" "$OUT/kruise-manager"
  log "built $OUT/kruise-manager"
fi
echo "$OUT"
