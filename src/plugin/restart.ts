// `rollout restart`, pure: the merge patch and an honest statement of what it will do to the pods.
//
// A restart is a template change the controller rolls out like any other, so it respects partition,
// maxUnavailable, maxSurge, paused, priorities and lifecycle hooks. Like `kubectl rollout restart` it stamps the
// template annotation `kubectl.kubernetes.io/restartedAt`. An annotation alone is a metadata-only in-place update:
// the pod is patched, no container restarts. What really restarts, per mode:
//
// - `recreate`: the env var KUBECTL_CLONESET_RESTARTED_AT=<time> (a literal value) is set in every container. An
//   env value cannot change in place, so ReCreate and InPlaceIfPossible delete and recreate every pod (new
//   processes, new pod names); InPlaceOnly cannot do that and is refused up front.
// - `in-place`: the env var takes its value from the annotation through the downward API
//   (`metadata.annotations['kubectl.kubernetes.io/restartedAt']`). Kruise's in-place engine treats a change of
//   such an annotation as an in-place update of the containers that read it (gate InPlaceUpdateEnvFromMetadata):
//   the pod is marked not ready, patched, and kruise-daemon — Kruise's node agent — restarts exactly those
//   containers (same pod, name, IP, node and volumes). The kubelet alone never restarts a container for a
//   downward-API change: without kruise-daemon the controller would wait for ever for the restart (Kruise's
//   completion check: "runtime-container-meta not found") and the rollout would stall, so in-place is refused then.
//   The first in-place restart adds the env var itself, which cannot be applied in place: it recreates the pods
//   once (InPlaceIfPossible) — later restarts are in place. InPlaceOnly is refused until the env var is there.
// - `auto` (default): ReCreate → recreate; InPlaceIfPossible/InPlaceOnly → in-place when kruise-daemon runs on the
//   pods' nodes (their `apps.kruise.io/runtime-containers-meta` annotation), otherwise an error that says so and
//   points at --mode=recreate.
import type { CloneSet } from '../api/cloneset.ts';
import { updatePolicyOf } from '../cloneset/inplace/plan.ts';
import { ANNOTATION_RUNTIME_CONTAINERS_META } from '../cloneset/inplace/completion.ts';
import type { Container, Pod } from '../kube/types.ts';

export const ANNOTATION_RESTARTED_AT = 'kubectl.kubernetes.io/restartedAt';
export const ENV_RESTARTED_AT = 'KUBECTL_CLONESET_RESTARTED_AT';
const FIELD_PATH = `metadata.annotations['${ANNOTATION_RESTARTED_AT}']`;

export type RestartMode = 'auto' | 'recreate' | 'in-place';

export function parseRestartMode(text: string | undefined): RestartMode {
  if (text === undefined || text === 'auto') return 'auto';
  if (text === 'recreate' || text === 'in-place') return text;
  throw new Error(`invalid argument "${text}" for "--mode" flag: must be auto, recreate or in-place`);
}

export type RestartPlan =
  | { readonly ok: true; readonly patch: Record<string, unknown>; readonly mode: 'recreate' | 'in-place'; readonly effect: string }
  | { readonly ok: false; readonly message: string };

type EnvVar = { readonly name?: unknown; readonly value?: unknown; readonly valueFrom?: unknown };

function envOf(c: Container): EnvVar[] {
  const env = c['env'];
  return Array.isArray(env) ? (env as EnvVar[]) : [];
}

function readsAnnotation(c: Container): boolean {
  return envOf(c).some((e) => e.name === ENV_RESTARTED_AT && JSON.stringify(e.valueFrom) === JSON.stringify({ fieldRef: { fieldPath: FIELD_PATH } }));
}

function withEnv(c: Container, entry: Record<string, unknown>): Container {
  return { ...c, env: [...envOf(c).filter((e) => e.name !== ENV_RESTARTED_AT), entry] };
}

/** kruise-daemon reports each pod's runtime containers in this annotation; none on any pod = no daemon there. */
export function kruiseDaemonSeen(pods: readonly Pod[]): boolean {
  return pods.some((p) => p.metadata.annotations?.[ANNOTATION_RUNTIME_CONTAINERS_META] !== undefined);
}

export function planRestart(cs: CloneSet, pods: readonly Pod[], requested: RestartMode, nowIso: string): RestartPlan {
  const name = cs.metadata.name ?? '';
  const policy = updatePolicyOf(cs);
  const containers = cs.spec.template.spec.containers;
  let mode: 'recreate' | 'in-place';
  if (requested !== 'auto') mode = requested;
  else mode = policy === 'ReCreate' ? 'recreate' : 'in-place';
  if (mode === 'in-place' && !kruiseDaemonSeen(pods)) {
    return {
      ok: false,
      message: `cloneset "${name}" cannot be restarted in place: no pod shows kruise-daemon (annotation ${ANNOTATION_RUNTIME_CONTAINERS_META}). ` +
        'Only kruise-daemon restarts a container whose env var reads a changed annotation; without it the in-place update would wait for ever ' +
        '("runtime-container-meta not found", as in Kruise) and the rollout would stall. ' +
        `Use --mode=recreate to recreate the pods (within maxUnavailable)${policy === 'InPlaceOnly' ? ' after switching updateStrategy.type away from InPlaceOnly' : ''}, or install kruise-daemon`,
    };
  }
  if (mode === 'recreate' && policy === 'InPlaceOnly') {
    return { ok: false, message: `cloneset "${name}" has updateStrategy.type InPlaceOnly: a restart by recreation would be refused by the controller; use --mode=in-place (needs kruise-daemon) or change the update type` };
  }
  const firstInPlace = mode === 'in-place' && !containers.every(readsAnnotation);
  if (firstInPlace && policy === 'InPlaceOnly') {
    return {
      ok: false,
      message: `cloneset "${name}" is InPlaceOnly and its containers do not read ${ANNOTATION_RESTARTED_AT} yet: adding that env var cannot be applied in place. ` +
        `Add to every container: env: [{name: ${ENV_RESTARTED_AT}, valueFrom: {fieldRef: {fieldPath: "${FIELD_PATH}"}}}] in a change you roll out by other means, then restart again`,
    };
  }
  const entry = mode === 'recreate' ? { name: ENV_RESTARTED_AT, value: nowIso } : { name: ENV_RESTARTED_AT, valueFrom: { fieldRef: { fieldPath: FIELD_PATH } } };
  const needsContainers = mode === 'recreate' || firstInPlace;
  const patch = {
    metadata: { resourceVersion: cs.metadata.resourceVersion },
    spec: {
      template: {
        metadata: { annotations: { [ANNOTATION_RESTARTED_AT]: nowIso } },
        ...(needsContainers ? { spec: { containers: containers.map((c) => withEnv(c, entry)) } } : {}),
      },
    },
  };
  const budget = describeBudget(cs);
  const effect = mode === 'recreate'
    ? `every pod is deleted and created anew (${policy}: an env value cannot change in place), ${budget}`
    : firstInPlace
      ? `this first in-place restart adds the env var ${ENV_RESTARTED_AT} (from the annotation), which cannot be applied in place: the pods are recreated once, ${budget}; later restarts restart the containers in place`
      : `every pod is updated in place, ${budget}: marked not ready, its annotation patched, and kruise-daemon restarts the containers (same pod, node, IP and volumes)`;
  return { ok: true, patch, mode, effect };
}

function describeBudget(cs: CloneSet): string {
  const us = cs.spec.updateStrategy;
  const parts = [`at most maxUnavailable ${String(us?.maxUnavailable ?? '20%')} at a time`];
  if (us?.maxSurge !== undefined) parts.push(`maxSurge ${String(us.maxSurge)}`);
  if (us?.partition !== undefined) parts.push(`partition ${String(us.partition)} pods stay as they are`);
  if (us?.paused === true) parts.push('the rollout is paused: nothing happens until kubectl cloneset rollout resume');
  return parts.join(', ');
}
