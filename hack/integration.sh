#!/usr/bin/env bash
# Integration tests against a real local control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, KWOK) that this script starts and always stops again; the last step of `npm test`.
#   bash hack/integration.sh                                      # every file of test/integration/
#   bash hack/integration.sh test/integration/lifecycle.test.ts   # one file (or several)
#   STATE_DIR=.cluster/mine bash hack/integration.sh …            # its own cluster, next to another run
# Extra node --test flags go in NODE_TEST_FLAGS, e.g. NODE_TEST_FLAGS='--test-name-pattern=preNormal'.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$(bash hack/ensure-node.sh):$PATH"
step() { printf '\n=== %s\n' "$*" >&2; }
FILES=("$@")
[ ${#FILES[@]} -gt 0 ] || FILES=("test/integration/**/*.test.ts")

step "build dist/ (the controller as it ships: bin/cloneset-controller and the image run it)"
bash hack/build.sh

step "local control plane"
bash hack/build-control-plane.sh
bash hack/build-helm.sh >/dev/null   # Helm for test/integration/helm-chart.test.ts (cached like the control plane)
STATE="$(realpath -m "${STATE_DIR:-$ROOT/.cluster/test}")"
node tools/localcluster/cli.ts down --state-dir "$STATE" >/dev/null 2>&1 || true
WEBHOOK_PID=""
trap '[ -z "$WEBHOOK_PID" ] || kill "$WEBHOOK_PID" 2>/dev/null || true; node tools/localcluster/cli.ts down --state-dir "$STATE" >&2 || true' EXIT
node tools/localcluster/cli.ts up --state-dir "$STATE" >/dev/null
export KUBECONFIG="$STATE/kubeconfig"
kubectl apply -f config/crd/apps.kruise.io_clonesets.yaml >&2
bash hack/wait-crd.sh

# The admission/conversion webhook runs as its own process for the whole run, so that tests which stop or kill
# controllers never take admission down. URL mode (the API server calls 127.0.0.1); a 2-minute certificate validity
# makes the CA and serving certificate rotate every 80 s while the suite runs (test/integration/webhook-certs.test.ts).
step "webhook server"
kubectl apply -f config/manager/namespace.yaml >&2
WEBHOOK_PORT="$(bash hack/free-port.sh)"
export WEBHOOK_CERT_VALIDITY=2m   # the tests start further webhook processes with the same validity
node dist/main.js webhook --kubeconfig "$KUBECONFIG" --webhook-host 127.0.0.1 \
  --webhook-port "$WEBHOOK_PORT" --webhook-cert-validity="$WEBHOOK_CERT_VALIDITY" >"$STATE/webhook.log" 2>&1 &
WEBHOOK_PID=$!
bash hack/wait-webhook.sh "$WEBHOOK_PORT" "$WEBHOOK_PID" "$STATE/webhook.log"

step "integration tests"
# shellcheck disable=SC2086 # NODE_TEST_FLAGS is a list of flags
node --disable-warning=ExperimentalWarning --test --test-concurrency=1 --test-timeout=900000 ${NODE_TEST_FLAGS:-} "${FILES[@]}"
