#!/usr/bin/env bash
# Runs Node 24 (provided from the npm registry when the system Node is older) on the project's .ts files:
#   bash hack/node.sh tools/localcluster/cli.ts up
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$(bash "$ROOT/hack/ensure-node.sh"):$PATH"
exec node --disable-warning=ExperimentalWarning "$@"
