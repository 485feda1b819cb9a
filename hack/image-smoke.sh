#!/usr/bin/env bash
# npm run image:smoke — runs the image built by `npm run image` the way a kubelet would run its pod, against a
# local control plane, and checks that it reconciles a CloneSet and stops cleanly on SIGTERM.
#
# Runtime (SMOKE_RUNTIME): `podman` loads the OCI archive and runs it (runc; installed with apt-get when absent):
# --read-only (tmpfs /tmp), --cap-drop ALL, no-new-privileges, the image's user (65532) and entrypoint; `podman stop`
# sends SIGTERM. `unshare` runs the image's OCI runtime bundle (`umoci unpack`: rootfs + config.json) with unshare(1)
# doing what the runtime would: mount and PID namespaces (the entrypoint is PID 1), the root filesystem read-only, a
# tmpfs on /tmp, the entrypoint, env, cwd and user from config.json. `auto` (default): podman when it can run a
# container here, else unshare. Either way, as in a pod:
#   - a ServiceAccount token, ca.crt and namespace mounted read-only at /var/run/secrets/kubernetes.io/serviceaccount
#     and KUBERNETES_SERVICE_HOST/PORT set: the in-cluster configuration;
#   - the ServiceAccount bound to the shipped least-privilege RBAC (config/rbac), moved into a scratch namespace.
# The network namespace is the host's, so that the controller reaches the local API server on 127.0.0.1.
#
# Needs root. Uses $KUBECONFIG when set, else starts (and stops) its own local control plane in
# .cluster/image-smoke. Builds the image first when the archive is missing. About 30 s once built.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$(bash hack/ensure-node.sh):$PATH"
ARCHIVE=${IMAGE_ARCHIVE:-$ROOT/.local/image/cloneset-controller.oci.tar}
NS=${SMOKE_NAMESPACE:-image-smoke}
RUNTIME=${SMOKE_RUNTIME:-auto}
CONTAINER=cloneset-controller-$NS
WORK=$(dirname "$ARCHIVE")/smoke
log() { printf '[image-smoke] %s\n' "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root: the smoke test runs a container (podman) or mounts the image's root filesystem (unshare)"
command -v umoci >/dev/null || die "umoci is missing: run npm run image first (it installs it)"
case "$RUNTIME" in auto | podman | unshare) ;; *) die "SMOKE_RUNTIME must be auto, podman or unshare, got $RUNTIME" ;; esac
[ -f "$ARCHIVE" ] || { log "no image archive at $ARCHIVE: building it"; bash hack/build-image.sh >/dev/null; }

# --- cluster -----------------------------------------------------------------------------------------------------
STATE=""
CTRL_PID=""
WEBHOOK_PID=""
cleanup() {
  [ -n "$CTRL_PID" ] && kill -TERM "$CTRL_PID" 2>/dev/null || true
  [ -n "$WEBHOOK_PID" ] && kill -TERM "$WEBHOOK_PID" 2>/dev/null || true
  if command -v podman >/dev/null; then
    podman rm -f "$CONTAINER" >/dev/null 2>&1 || true
    podman rmi "localhost/cloneset-controller:smoke-$NS" >/dev/null 2>&1 || true
  fi
  kubectl delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  kubectl delete clusterrolebinding "cloneset-controller-$NS" --ignore-not-found >/dev/null 2>&1 || true
  [ -n "$STATE" ] && node --disable-warning=ExperimentalWarning tools/localcluster/cli.ts down --state-dir "$STATE" >&2 || true
}
trap cleanup EXIT
if [ -z "${KUBECONFIG:-}" ]; then
  STATE=$ROOT/.cluster/image-smoke
  bash hack/build-control-plane.sh
  node --disable-warning=ExperimentalWarning tools/localcluster/cli.ts down --state-dir "$STATE" >/dev/null 2>&1 || true
  node --disable-warning=ExperimentalWarning tools/localcluster/cli.ts up --state-dir "$STATE" >/dev/null
  export KUBECONFIG=$STATE/kubeconfig
fi
# The CRD as it is when it exists (its conversion webhook may point elsewhere, e.g. the test suite's webhook).
kubectl get crd clonesets.apps.kruise.io >/dev/null 2>&1 || kubectl apply -f config/crd/apps.kruise.io_clonesets.yaml >/dev/null
bash hack/wait-crd.sh
if [ -n "$STATE" ]; then
  # Our own cluster: the CRD stores v1beta1 and converts through the webhook, run from the repository as npm test
  # does (the image under test runs the controller only).
  kubectl apply -f config/manager/namespace.yaml >/dev/null
  WEBHOOK_PORT="$(bash hack/free-port.sh)"
  bash bin/cloneset-controller webhook --kubeconfig "$KUBECONFIG" --webhook-host 127.0.0.1 \
    --webhook-port "$WEBHOOK_PORT" >"$STATE/webhook.log" 2>&1 &
  WEBHOOK_PID=$!
  bash hack/wait-webhook.sh "$WEBHOOK_PORT" "$WEBHOOK_PID" "$STATE/webhook.log"
fi
kubectl delete namespace "$NS" --ignore-not-found --wait=true >/dev/null
kubectl create namespace "$NS" >/dev/null
inns() { sed "s/namespace: cloneset-system/namespace: $NS/"; }
kubectl apply -f config/rbac/role.yaml >/dev/null
inns <config/rbac/service-account.yaml | kubectl apply -f - >/dev/null
inns <config/rbac/leader-election-role.yaml | kubectl apply -f - >/dev/null
inns <config/rbac/role-binding.yaml \
  | sed "0,/^  name: cloneset-controller$/s//  name: cloneset-controller-$NS/" | kubectl apply -f - >/dev/null

# --- the pod's view: service account volume and service environment ---------------------------------------------
rm -rf "$WORK"; mkdir -p "$WORK/oci" "$WORK/sa"
SA_DIR=/var/run/secrets/kubernetes.io/serviceaccount
kubectl create token cloneset-controller -n "$NS" --duration=1h >"$WORK/sa/token"
ca=$(kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
if [ -n "$ca" ]; then printf '%s' "$ca" | base64 -d >"$WORK/sa/ca.crt"
else cp "$(kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')" "$WORK/sa/ca.crt"; fi
printf '%s' "$NS" >"$WORK/sa/namespace"
chmod -R a+rX "$WORK/sa" # readable by the image's user, like a projected volume with the pod's fsGroup
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
hostport=${server#https://}; hostport=${hostport%%/*}
free_port() { node -e 'const s=require("node:net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
HEALTH=$(free_port); METRICS=$(free_port)
FLAGS=(--leader-elect --leader-election-namespace="$NS" -n "$NS"
  --health-probe-bind-address="127.0.0.1:$HEALTH" --metrics-bind-address="127.0.0.1:$METRICS")
# The controller only: its webhook server (Service mode) would repoint the cluster's webhook configurations at a
# Service this cluster does not have, and needs RBAC the smoke does not grant. The image is built from this src/.
if grep -q "'webhook-port'" src/config.ts; then FLAGS+=(--webhook-port=0); fi
LOG=$WORK/controller.log
IMAGE=localhost/cloneset-controller:smoke-$NS

# podman's default ulimits exceed what this machine's hard limits allow; these are a pod's usual ones.
PODMAN_RUN=(podman --cgroup-manager=cgroupfs run --ulimit nofile=8192:8192 --ulimit nproc=4096:4096)
podman_works() {
  if ! command -v podman >/dev/null; then
    log "installing podman with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends podman >&2 || return 1
  fi
  local existed=false loaded ref
  ref=$(tar -xOf "$ARCHIVE" --wildcards '*index.json' | node -p 'JSON.parse(require("node:fs").readFileSync(0, "utf8")).manifests[0].annotations["org.opencontainers.image.ref.name"]')
  case $ref in */*) ;; *) ref=localhost/$ref ;; esac
  podman image exists "$ref" && existed=true
  loaded=$(podman load -q -i "$ARCHIVE" 2>&1 | sed -n 's/^Loaded image[^:]*: *//p' | head -1)
  # Run under a name of our own (removed at the end); the load name is removed too unless it was there before.
  [ -n "$loaded" ] && podman tag "$loaded" "$IMAGE" || return 1
  [ "$existed" = true ] || podman untag "$IMAGE" "$loaded"
  "${PODMAN_RUN[@]}" --rm --network none --entrypoint /usr/local/bin/node "$IMAGE" --version >/dev/null 2>&1
}
if [ "$RUNTIME" != unshare ]; then
  if podman_works; then RUNTIME=podman
  elif [ "$RUNTIME" = podman ]; then die "podman cannot run a container on this machine; try SMOKE_RUNTIME=unshare"
  else log "podman cannot run a container here: using unshare"; RUNTIME=unshare; fi
fi

running() { # the controller is still running
  if [ "$RUNTIME" = podman ]; then [ "$(podman inspect -f '{{.State.Running}}' "$CONTAINER" 2>/dev/null)" = true ]
  else kill -0 "$UNSHARE_PID" 2>/dev/null; fi
}
logs() { if [ "$RUNTIME" = podman ]; then podman logs "$CONTAINER" >"$LOG" 2>&1 || true; fi; }

if [ "$RUNTIME" = podman ]; then
  log "runtime: podman $(podman version -f '{{.Client.Version}}'), image $IMAGE"
  "${PODMAN_RUN[@]}" -d --name "$CONTAINER" --network host --read-only --cap-drop ALL --security-opt no-new-privileges \
    -v "$WORK/sa:$SA_DIR:ro" -e "KUBERNETES_SERVICE_HOST=${hostport%:*}" -e "KUBERNETES_SERVICE_PORT=${hostport##*:}" \
    "$IMAGE" "${FLAGS[@]}" >/dev/null
  [ "$(podman inspect -f '{{.Config.User}}' "$CONTAINER")" = 65532:65532 ] || die "the image does not run as 65532:65532"
  pid1=$(podman top "$CONTAINER" pid args | awk '$1 == 1 { print $2 }')
  [ "${pid1##*/}" = node ] || die "PID 1 of the container is '$pid1', not node: signals would not reach the controller"
else
  tar -xf "$ARCHIVE" -C "$WORK/oci"
  ref=$(node -p 'JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8")).manifests[0].annotations["org.opencontainers.image.ref.name"]' "$WORK/oci/index.json")
  umoci unpack --image "$WORK/oci:$ref" "$WORK/bundle" >/dev/null
  R=$WORK/bundle/rootfs
  mkdir -p "$R$SA_DIR" # the mount point a container runtime would create
  # Entrypoint, env, cwd and user exactly as the image declares them.
  mapfile -t IMG < <(node -e '
    const c = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8")).process;
    console.log(`${c.user.uid}`); console.log(`${c.user.gid}`); console.log(c.cwd);
    console.log(JSON.stringify(c.args)); console.log(JSON.stringify(c.env.filter((e) => !e.startsWith("TERM="))));' "$WORK/bundle/config.json")
  UID_=${IMG[0]} GID_=${IMG[1]} CWD=${IMG[2]}
  [ "$UID_:$GID_" = 65532:65532 ] || die "the image does not run as 65532:65532"
  mapfile -t ARGS < <(node -e 'for (const a of JSON.parse(process.argv[1])) console.log(a)' "${IMG[3]}")
  mapfile -t ENVS < <(node -e 'for (const a of JSON.parse(process.argv[1])) console.log(a)' "${IMG[4]}")
  log "runtime: unshare; image user $UID_:$GID_, cwd $CWD, entrypoint ${ARGS[*]}"
  # shellcheck disable=SC2016 # the inner script is expanded by the inner bash
  unshare --mount --pid --fork --kill-child --propagation private bash -c '
    set -e; R=$1; SA=$2; SA_DIR=$3; shift 3
    mount --bind "$R" "$R"
    mount -t proc proc "$R/proc"
    mount --bind /dev "$R/dev"
    mount -t tmpfs -o mode=1777,size=64m tmpfs "$R/tmp"
    mount --bind "$SA" "$R$SA_DIR"; mount -o remount,bind,ro "$R$SA_DIR"
    mount -o remount,bind,ro "$R"
    exec "$@"
  ' _ "$R" "$WORK/sa" "$SA_DIR" \
    env -i "${ENVS[@]}" "KUBERNETES_SERVICE_HOST=${hostport%:*}" "KUBERNETES_SERVICE_PORT=${hostport##*:}" \
    /usr/bin/unshare --root="$R" --wd="$CWD" --setgid="$GID_" --setuid="$UID_" \
    "${ARGS[@]}" "${FLAGS[@]}" >"$LOG" 2>&1 &
  UNSHARE_PID=$!
  for _ in $(seq 50); do CTRL_PID=$(pgrep -P "$UNSHARE_PID" || true); [ -n "$CTRL_PID" ] && break; sleep 0.1; done
  [ -n "$CTRL_PID" ] || die "the entrypoint did not start: $(cat "$LOG")"
fi

# --- checks ------------------------------------------------------------------------------------------------------
wait_for() { # description, seconds, command...
  local what=$1 secs=$2; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    running || { logs; die "the controller exited while waiting for $what; its log:
$(tail -20 "$LOG")"; }
    [ $SECONDS -lt $deadline ] || { logs; die "$what not within ${secs}s; controller log:
$(tail -20 "$LOG")"; }
    sleep 1
  done
  log "ok: $what"
}
http_ok() { node -e 'fetch(process.argv[1]).then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))' "$1"; }
wait_for "/readyz answers 200 (informers synced)" 60 http_ok "http://127.0.0.1:$HEALTH/readyz"
logs
grep -q "\"server\":\"https://$hostport\"" "$LOG" || die "the controller did not use the in-cluster configuration"
sed "s/^  name: sample$/  name: sample\n  namespace: $NS/" config/samples/cloneset-sample.yaml \
  | sed 's/replicas: 5/replicas: 3/' | kubectl apply -f - >/dev/null
ready() { [ "$(kubectl get clone sample -n "$NS" -o jsonpath='{.status.readyReplicas}/{.status.updatedReadyReplicas}')" = "3/3" ]; }
wait_for "CloneSet $NS/sample reconciled: 3 pods Ready and counted in status" 120 ready
pods=$(kubectl get pods -n "$NS" -l app=sample -o name | wc -l)
[ "$pods" = 3 ] || die "expected 3 pods, found $pods"
logs
! grep -qiE 'forbidden|\b403\b' "$LOG" || die "a request was refused: $(grep -iE 'forbidden|\b403\b' "$LOG" | head -3)"

if [ "$RUNTIME" = podman ]; then
  podman stop -t 30 "$CONTAINER" >/dev/null # SIGTERM to the entrypoint (PID 1), SIGKILL after 30 s
  code=$(podman inspect -f '{{.State.ExitCode}}' "$CONTAINER")
  logs
else
  kill -TERM "$CTRL_PID"
  code=0; wait "$UNSHARE_PID" || code=$?
  CTRL_PID=""
fi
[ "$code" = 0 ] || die "the controller exited with $code after SIGTERM (want 0); log: $(tail -5 "$LOG")"
grep -q '"signal":"SIGTERM"' "$LOG" || die "the entrypoint did not see SIGTERM itself"
log "ok: SIGTERM reached the entrypoint (PID 1), which exited 0"
size=$(du -b "$ARCHIVE" | cut -f1)
log "PASS: $(basename "$ARCHIVE") ($((size / 1024 / 1024)) MiB) ran ($RUNTIME) read-only as 65532:65532 with in-cluster config and reconciled a CloneSet"
