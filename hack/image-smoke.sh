#!/usr/bin/env bash
# npm run image:smoke — runs the image built by `npm run image` the way a kubelet would run its pod, against a
# local control plane, and checks that it reconciles a CloneSet and stops cleanly on SIGTERM.
#
# There is no container runtime here (no daemon; crun/runc refuse this machine's hybrid cgroups), so the image's
# OCI runtime bundle (`umoci unpack`: rootfs + config.json) is run with unshare(1) doing what the runtime would:
#   - new mount and PID namespaces: the entrypoint is PID 1 and receives SIGTERM itself;
#   - the root filesystem mounted read-only (readOnlyRootFilesystem: true), an emptyDir-like tmpfs on /tmp;
#   - a ServiceAccount token, ca.crt and namespace mounted read-only at /var/run/secrets/kubernetes.io/serviceaccount
#     and KUBERNETES_SERVICE_HOST/PORT set: the in-cluster configuration, as in a pod;
#   - entrypoint, env, working directory and user (65532) taken from the image's config.json.
# The ServiceAccount is bound to the shipped least-privilege RBAC (config/rbac), moved into a scratch namespace.
# The network namespace is shared with the host so that the controller reaches the local API server on 127.0.0.1.
#
# Needs root (mount/unshare). Uses $KUBECONFIG when set, else starts (and stops) its own local control plane in
# .cluster/image-smoke. Builds the image first when the archive is missing. Takes about 30 s once built.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="$(bash hack/ensure-node.sh):$PATH"
ARCHIVE=${IMAGE_ARCHIVE:-$ROOT/.local/image/cloneset-controller.oci.tar}
# The tag defaults to the version in package.json, which is the chart's appVersion (its default image tag).
TAG=${IMAGE_TAG:-$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$ROOT/package.json")}
NS=${SMOKE_NAMESPACE:-image-smoke}
WORK=$(dirname "$ARCHIVE")/smoke
log() { printf '[image-smoke] %s\n' "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root: the smoke test mounts the image's root filesystem (unshare --mount)"
command -v umoci >/dev/null || die "umoci is missing: run npm run image first (it installs it)"
[ -f "$ARCHIVE" ] || { log "no image archive at $ARCHIVE: building it"; bash hack/build-image.sh >/dev/null; }

# --- cluster -----------------------------------------------------------------------------------------------------
STATE=""
CTRL_PID=""
cleanup() {
  [ -n "$CTRL_PID" ] && kill -TERM "$CTRL_PID" 2>/dev/null || true
  kubectl delete namespace "$NS" --ignore-not-found --wait=false >/dev/null 2>&1 || true
  kubectl delete clusterrolebinding "cloneset-controller-$NS" --ignore-not-found >/dev/null 2>&1 || true
  [ -n "$STATE" ] && node --disable-warning=ExperimentalWarning src/localcluster/cli.ts down --state-dir "$STATE" >&2 || true
}
trap cleanup EXIT
if [ -z "${KUBECONFIG:-}" ]; then
  STATE=$ROOT/.cluster/image-smoke
  bash hack/build-control-plane.sh
  node --disable-warning=ExperimentalWarning src/localcluster/cli.ts down --state-dir "$STATE" >/dev/null 2>&1 || true
  node --disable-warning=ExperimentalWarning src/localcluster/cli.ts up --state-dir "$STATE" >/dev/null
  export KUBECONFIG=$STATE/kubeconfig
fi
kubectl apply -f config/crd/apps.kruise.io_clonesets.yaml >/dev/null
kubectl wait --for condition=established --timeout=60s crd/clonesets.apps.kruise.io >/dev/null
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
tar -xf "$ARCHIVE" -C "$WORK/oci"
umoci unpack --image "$WORK/oci:$TAG" "$WORK/bundle" >/dev/null
R=$WORK/bundle/rootfs
SA_DIR=/var/run/secrets/kubernetes.io/serviceaccount
mkdir -p "$R$SA_DIR" # the mount point a container runtime would create
kubectl create token cloneset-controller -n "$NS" --duration=1h >"$WORK/sa/token"
ca=$(kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
if [ -n "$ca" ]; then printf '%s' "$ca" | base64 -d >"$WORK/sa/ca.crt"
else cp "$(kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority}')" "$WORK/sa/ca.crt"; fi
printf '%s' "$NS" >"$WORK/sa/namespace"
server=$(kubectl config view --minify -o jsonpath='{.clusters[0].cluster.server}')
hostport=${server#https://}; hostport=${hostport%%/*}
free_port() { node -e 'const s=require("node:net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
HEALTH=$(free_port); METRICS=$(free_port)

# Entrypoint, env, cwd and user exactly as the image declares them.
mapfile -t IMG < <(node -e '
  const c = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8")).process;
  console.log(`${c.user.uid}`); console.log(`${c.user.gid}`); console.log(c.cwd);
  console.log(JSON.stringify(c.args)); console.log(JSON.stringify(c.env.filter((e) => !e.startsWith("TERM="))));' "$WORK/bundle/config.json")
UID_=${IMG[0]} GID_=${IMG[1]} CWD=${IMG[2]}
mapfile -t ARGS < <(node -e 'for (const a of JSON.parse(process.argv[1])) console.log(a)' "${IMG[3]}")
mapfile -t ENVS < <(node -e 'for (const a of JSON.parse(process.argv[1])) console.log(a)' "${IMG[4]}")
log "image: user $UID_:$GID_, cwd $CWD, entrypoint ${ARGS[*]}"

LOG=$WORK/controller.log
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
  "${ARGS[@]}" --leader-elect --leader-election-namespace="$NS" -n "$NS" \
  --health-probe-bind-address="127.0.0.1:$HEALTH" --metrics-bind-address="127.0.0.1:$METRICS" >"$LOG" 2>&1 &
UNSHARE_PID=$!
for _ in $(seq 50); do CTRL_PID=$(pgrep -P "$UNSHARE_PID" || true); [ -n "$CTRL_PID" ] && break; sleep 0.1; done
[ -n "$CTRL_PID" ] || die "the entrypoint did not start: $(cat "$LOG")"

# --- checks ------------------------------------------------------------------------------------------------------
wait_for() { # description, seconds, command...
  local what=$1 secs=$2; shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    kill -0 "$UNSHARE_PID" 2>/dev/null || die "the controller exited while waiting for $what; its log:
$(tail -20 "$LOG")"
    [ $SECONDS -lt $deadline ] || die "$what not within ${secs}s; controller log:
$(tail -20 "$LOG")"
    sleep 1
  done
  log "ok: $what"
}
wait_for "/readyz answers 200 (informers synced)" 60 curl -fsS "http://127.0.0.1:$HEALTH/readyz"
grep -q "\"server\":\"https://$hostport\"" "$LOG" || die "the controller did not use the in-cluster configuration"
sed "s/^  name: sample$/  name: sample\n  namespace: $NS/" config/samples/cloneset-sample.yaml \
  | sed 's/replicas: 5/replicas: 3/' | kubectl apply -f - >/dev/null
ready() { [ "$(kubectl get clone sample -n "$NS" -o jsonpath='{.status.readyReplicas}/{.status.updatedReadyReplicas}')" = "3/3" ]; }
wait_for "CloneSet $NS/sample reconciled: 3 pods Ready and counted in status" 120 ready
pods=$(kubectl get pods -n "$NS" -l app=sample -o name | wc -l)
[ "$pods" = 3 ] || die "expected 3 pods, found $pods"
! grep -qiE 'forbidden|\b403\b' "$LOG" || die "a request was refused: $(grep -iE 'forbidden|\b403\b' "$LOG" | head -3)"

kill -TERM "$CTRL_PID"
code=0; wait "$UNSHARE_PID" || code=$?
CTRL_PID=""
[ "$code" = 0 ] || die "the controller exited with $code after SIGTERM (want 0); log: $(tail -5 "$LOG")"
grep -q '"signal":"SIGTERM"' "$LOG" || die "the entrypoint did not see SIGTERM itself"
log "ok: SIGTERM reached the entrypoint (PID 1), which exited 0"
size=$(du -b "$ARCHIVE" | cut -f1)
log "PASS: $(basename "$ARCHIVE") ($((size / 1024 / 1024)) MiB) ran read-only as $UID_:$GID_ with in-cluster config and reconciled a CloneSet"
