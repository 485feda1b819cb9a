#!/usr/bin/env bash
# Compiles src/ to plain JavaScript in dist/ (tsconfig.build.json) when anything it is built from changed since the
# last build; does nothing otherwise, so callers (bin/cloneset-controller, the benchmarks, the tests, the demo) run it
# before every start. The image builds it the same way. Why dist/ at all: Node runs the .ts sources directly, but
# type stripping loads a TypeScript transformer into the process, ~30 MiB of RSS for the controller's whole life
# (docs/performance.md). Concurrent callers serialise on a lock; progress and errors go to stderr.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$(bash hack/ensure-node.sh):$PATH"
[ -x node_modules/.bin/tsc ] || { echo "hack/build.sh: node_modules is missing; run npm ci first" >&2; exit 1; }
mkdir -p dist
exec 9>dist/.lock
flock 9
STAMP=dist/.built
if [ -f "$STAMP" ] && [ -z "$(find src tsconfig.json tsconfig.build.json package.json package-lock.json -newer "$STAMP" -print -quit)" ]; then
  exit 0
fi
printf 'building dist/ from src/ (tsc -p tsconfig.build.json)… ' >&2
touch "$STAMP.next" # sources edited while tsc runs make the next call build again
if ! node_modules/.bin/tsc -p tsconfig.build.json >&2; then
  echo "hack/build.sh: the TypeScript build failed (errors above); fix them, or run src/main.ts directly with node" >&2
  exit 1
fi
mv "$STAMP.next" "$STAMP"
echo ok >&2
