#!/usr/bin/env bash
# Waits (up to 60 s) until the CloneSet CRD is Established. `kubectl wait --for condition=established` alone fails at
# once, instead of waiting, while a just-created CRD has no status.conditions yet ("accessor error: <nil>").
set -euo pipefail
for _ in $(seq 60); do
  if [ "$(kubectl get crd clonesets.apps.kruise.io -o 'jsonpath={.status.conditions[?(@.type=="Established")].status}' 2>/dev/null)" = "True" ]; then
    exit 0
  fi
  sleep 1
done
echo "the CRD clonesets.apps.kruise.io is not Established after 60 s: kubectl describe crd clonesets.apps.kruise.io" >&2
exit 1
