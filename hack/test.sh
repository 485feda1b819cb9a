#!/usr/bin/env bash
# The one test command (README, CI): type-check, unit tests, then integration tests against a real local
# control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, KWOK) that this script
# starts and always stops again.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$(bash hack/ensure-node.sh):$PATH"
[ -d node_modules ] || npm ci --no-audit --no-fund
step() { printf '\n=== %s\n' "$*" >&2; }

step "type-check"
npx tsc -p tsconfig.json --noEmit

step "unit tests"
node --disable-warning=ExperimentalWarning --test --test-concurrency=2 "src/**/*.test.ts" "bench/**/*.test.ts"

step "local control plane"
bash hack/build-control-plane.sh
STATE="$ROOT/.cluster/test"
node src/localcluster/cli.ts down --state-dir "$STATE" >/dev/null 2>&1 || true
trap 'node src/localcluster/cli.ts down --state-dir "$STATE" >&2 || true' EXIT
node src/localcluster/cli.ts up --state-dir "$STATE" >/dev/null
export KUBECONFIG="$STATE/kubeconfig"
kubectl apply -f config/crd/apps.kruise.io_clonesets.yaml >&2
kubectl wait --for condition=established --timeout=60s crd/clonesets.apps.kruise.io >&2

step "integration tests"
node --disable-warning=ExperimentalWarning --test --test-concurrency=1 --test-timeout=900000 "test/integration/**/*.test.ts"
