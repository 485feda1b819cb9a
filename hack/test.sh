#!/usr/bin/env bash
# The one test command (README, CI): lint, format check, dependency rules, type-check, unit tests, then integration
# tests against a real local control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, KWOK)
# that this script starts and always stops again.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$(bash hack/ensure-node.sh):$PATH"
[ -d node_modules ] || npm ci --no-audit --no-fund
step() { printf '\n=== %s\n' "$*" >&2; }

step "lint (Biome, biome.jsonc)"
npm run --silent lint

step "format check (Biome; \`npm run format\` fixes it)"
npm run --silent format:check

step "dependency rules (dependency-cruiser, .dependency-cruiser.cjs)"
npm run --silent lint:deps

step "type-check"
npx tsc -p tsconfig.json --noEmit

step "unit tests"
node --disable-warning=ExperimentalWarning --test --test-concurrency=2 "src/**/*.test.ts" "tools/**/*.test.ts" "bench/**/*.test.ts" "sim/**/*.test.ts"

step "alert rules (promtool check rules, promtool test rules: hack/check-alerts.sh)"
bash hack/check-alerts.sh

bash hack/integration.sh
