#!/usr/bin/env bash
# Waits until the webhook process answers /readyz (certificates loaded, webhook configurations and CRD conversion
# in place) and the API server routes CloneSet admission through it (a server-side dry run comes back defaulted).
#   bash hack/wait-webhook.sh PORT PID LOGFILE
set -euo pipefail
PORT="$1" PID="$2" LOG="$3"
PROBE='{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","metadata":{"generateName":"webhook-probe-"},
"spec":{"selector":{"matchLabels":{"app":"probe"}},"template":{"metadata":{"labels":{"app":"probe"}},
"spec":{"containers":[{"name":"c","image":"nginx:alpine"}]}}}}'
for i in $(seq 1 120); do
  if ! kill -0 "$PID" 2>/dev/null; then tail -20 "$LOG" >&2; echo "the webhook process exited; see $LOG" >&2; exit 1; fi
  if curl -fsk "https://127.0.0.1:$PORT/readyz" >/dev/null 2>&1; then
    policy=$(kubectl create --dry-run=server -n default -o 'jsonpath={.spec.template.spec.containers[0].imagePullPolicy}' \
      -f - 2>/dev/null <<<"$PROBE" || true)
    if [ "$policy" = "Always" ]; then echo "webhook ready on https://127.0.0.1:$PORT (log: $LOG)" >&2; exit 0; fi
  fi
  sleep 0.5
done
tail -20 "$LOG" >&2
echo "the webhook did not become ready in 60 s; see $LOG" >&2
exit 1
