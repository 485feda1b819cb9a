#!/usr/bin/env bash
# The demo: local control plane + CRD + controller + the manual's sample CloneSet, on a fresh machine.
#   bash hack/demo.sh        bring everything up and wait until the sample is Ready (re-running is fine)
#   bash hack/demo.sh down   stop the controller and the control plane
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$(bash hack/ensure-node.sh):$PATH"
STATE="$ROOT/.cluster/demo"
say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

stop_webhook() {
  if [ -f "$STATE/webhook.pid" ]; then
    kill "$(cat "$STATE/webhook.pid")" 2>/dev/null || true
    rm -f "$STATE/webhook.pid"
  fi
}

stop_controller() {
  if [ -f "$STATE/controller.pid" ]; then
    kill "$(cat "$STATE/controller.pid")" 2>/dev/null || true
    rm -f "$STATE/controller.pid"
  fi
}

if [ "${1:-up}" = "down" ]; then
  stop_controller
  stop_webhook
  node tools/localcluster/cli.ts down --state-dir "$STATE"
  exit 0
fi

say "installing npm dependencies"
[ -d node_modules ] || npm ci --no-audit --no-fund
say "building the controller (src/ → dist/, hack/build.sh)"
bash hack/build.sh
say "control plane binaries (built once from the Go module proxy, then cached)"
bash hack/build-control-plane.sh
say "starting the local control plane"
node tools/localcluster/cli.ts up --state-dir "$STATE" >/dev/null
export KUBECONFIG="$STATE/kubeconfig"
say "installing the CloneSet CRD"
if kubectl get crd clonesets.apps.kruise.io >/dev/null 2>&1; then
  # Re-run: the webhook (URL mode) swapped the conversion webhook's service for a url; a client-side apply would add
  # the service back next to it (invalid). Replace, then the webhook started below writes url and caBundle again.
  kubectl replace -f config/crd/apps.kruise.io_clonesets.yaml
else
  kubectl apply -f config/crd/apps.kruise.io_clonesets.yaml
fi
bash hack/wait-crd.sh
say "starting the admission/conversion webhook (log: $STATE/webhook.log)"
kubectl apply -f config/manager/namespace.yaml >/dev/null
stop_webhook
WEBHOOK_PORT="$(bash hack/free-port.sh)"
nohup bin/cloneset-controller webhook --kubeconfig "$KUBECONFIG" \
  --webhook-host 127.0.0.1 --webhook-port "$WEBHOOK_PORT" >"$STATE/webhook.log" 2>&1 &
echo $! >"$STATE/webhook.pid"
bash hack/wait-webhook.sh "$WEBHOOK_PORT" "$(cat "$STATE/webhook.pid")" "$STATE/webhook.log"
say "starting cloneset-controller (log: $STATE/controller.log)"
stop_controller
# Free ports: a fixed :8080 would collide with kubectl's fallback to localhost:8080 when KUBECONFIG is not set.
METRICS_PORT="$(bash hack/free-port.sh)"
PROBE_PORT="$(bash hack/free-port.sh)"
nohup bin/cloneset-controller --kubeconfig "$KUBECONFIG" --webhook-port=0 --log-format=text \
  --metrics-bind-address="127.0.0.1:$METRICS_PORT" --health-probe-bind-address="127.0.0.1:$PROBE_PORT" >"$STATE/controller.log" 2>&1 &
echo $! >"$STATE/controller.pid"
echo "http://127.0.0.1:$METRICS_PORT/metrics" >"$STATE/metrics-url"
say "applying the sample CloneSet (config/samples/cloneset-sample.yaml)"
kubectl apply -f config/samples/cloneset-sample.yaml
say "waiting for 5 ready pods"
for i in $(seq 1 120); do
  ready=$(kubectl get clone sample -o jsonpath='{.status.readyReplicas}' 2>/dev/null || true)
  printf '\r   ready %s/5 ' "${ready:-0}" >&2
  [ "${ready:-0}" = "5" ] && break
  if ! kill -0 "$(cat "$STATE/controller.pid")" 2>/dev/null; then echo; tail -20 "$STATE/controller.log"; say "the controller exited; see above"; exit 1; fi
  sleep 1
done
echo >&2
kubectl get clone sample
kubectl get pods -l app=sample -o wide
cat >&2 <<EOT

The sample is running. Try:
  export KUBECONFIG=$KUBECONFIG
  kubectl get clone -o wide
  kubectl scale clone sample --replicas=8
  kubectl patch clone sample --type=merge -p '{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:mainline"}]}}}}'
  kubectl get controllerrevisions
  curl -s http://127.0.0.1:$METRICS_PORT/metrics | grep ^cloneset_    # rollout metrics (why a rollout is blocked)
  tail -f $STATE/controller.log
Stop everything with: npm run demo -- down
EOT
