#!/usr/bin/env bash
# The alert rules as promtool sees them: `promtool check rules` on config/prometheus/alerts.yaml, then
# `promtool test rules` on the unit tests of config/prometheus/tests/, one file per alert (a missing one fails).
# promtool comes from hack/build-prometheus.sh (built once into the cache from the Go module proxy).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BIN="$(bash hack/build-prometheus.sh)"
RULES=config/prometheus/alerts.yaml
"$BIN/promtool" check rules "$RULES"
missing=0
for alert in $(sed -n 's/^ *- alert: *//p' "$RULES"); do
  if [ ! -f "config/prometheus/tests/$alert.test.yaml" ]; then
    echo "alert $alert has no unit test: write config/prometheus/tests/$alert.test.yaml" >&2
    missing=1
  fi
done
[ "$missing" = 0 ]
"$BIN/promtool" test rules config/prometheus/tests/*.test.yaml
