// `rollout restart`, pure: the merge patch and an honest statement of what it will do to the pods.
//
// A restart is a template change the controller rolls out like any other, so it respects partition,
// maxUnavailable, maxSurge, paused, priorities and lifecycle hooks. Like `kubectl rollout restart` it stamps the
// template annotation `kubectl.kubernetes.io/restartedAt`, and by default that is all it writes (nothing a GitOps
// tool would see as drift in the containers). What that does to the pods depends on the update type:
//
// - ReCreate: a new revision, so every pod is deleted and created anew — a real restart.
// - InPlaceIfPossible / InPlaceOnly: an annotation alone is a metadata-only in-place update: each pod's annotation
//   is patched, no container restarts, and no kruise-daemon is needed (only a container restart waits for it).
//   Containers restart in place only when they read the annotation through the downward API and kruise-daemon
//   runs (Kruise's in-place engine, gate InPlaceUpdateEnvFromMetadata; the controller waits for the daemon's
//   report). The command says which of the two happens.
// - OnDelete: the template changes; pods move to it when someone deletes them.
//
// Explicit modes, for what the annotation cannot do alone:
// - `--mode=recreate` on an in-place CloneSet: also sets the env var KUBECTL_CLONESET_RESTARTED_AT=<time> (a literal
//   value) in every container; an env value cannot change in place, so every pod is recreated. InPlaceOnly cannot
//   recreate and is refused.
// - `--mode=in-place`: containers restart in place: the env var takes its value from the annotation
//   (`valueFrom.fieldRef` on `metadata.annotations['kubectl.kubernetes.io/restartedAt']`) and kruise-daemon restarts
//   exactly those containers (same pod, name, IP, node and volumes). Without kruise-daemon the update would wait for
//   ever ("runtime-container-meta not found", as in Kruise), so it is refused then. The first such restart adds the
//   env var, which cannot be applied in place: the pods are recreated once (InPlaceIfPossible); InPlaceOnly is
//   refused until the env var is there.
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
  | { readonly ok: true; readonly patch: Record<string, unknown>; readonly mode: RestartMode; readonly effect: string }
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
  const onDelete = cs.spec.updateStrategy?.type === 'OnDelete';
  const policy = updatePolicyOf(cs);
  const containers = cs.spec.template.spec.containers;
  const daemon = kruiseDaemonSeen(pods);
  const annotationOnly = (mode: RestartMode): { readonly ok: true; readonly patch: Record<string, unknown>; readonly mode: RestartMode } => ({
    ok: true,
    mode,
    patch: { spec: { template: { metadata: { annotations: { [ANNOTATION_RESTARTED_AT]: nowIso } } } } },
  });
  const budget = describeBudget(cs);
  if (onDelete) {
    if (requested !== 'auto')
      return {
        ok: false,
        message: `cloneset "${name}" has updateStrategy.type OnDelete: the controller updates no pod by itself, so --mode=${requested} cannot apply; run without --mode and delete the pods to restart them`,
      };
    return { ...annotationOnly('auto'), effect: 'the template has a new revision; under OnDelete each pod moves to it (restarts) when you delete it' };
  }
  if (requested === 'auto' || (requested === 'recreate' && policy === 'ReCreate')) {
    if (policy === 'ReCreate') return { ...annotationOnly('recreate'), effect: `every pod is deleted and created anew, ${budget}` };
    if (daemon && containers.every(readsAnnotation)) {
      return {
        ...annotationOnly('in-place'),
        effect: `every pod is updated in place, ${budget}: marked not ready, its annotation patched, and kruise-daemon restarts the containers that read it (same pod, node, IP and volumes)`,
      };
    }
    return {
      ...annotationOnly('auto'),
      effect:
        `${policy}: a metadata-only in-place update, ${budget}: each pod gets the annotation, its containers keep running. ` +
        'To restart them: --mode=recreate (new pods), or --mode=in-place with kruise-daemon (see kubectl cloneset --help)',
    };
  }
  if (requested === 'in-place' && !daemon) {
    return {
      ok: false,
      message:
        `cloneset "${name}" cannot be restarted in place: no pod shows kruise-daemon (annotation ${ANNOTATION_RUNTIME_CONTAINERS_META}). ` +
        'Only kruise-daemon restarts a container whose env var reads a changed annotation; without it the in-place update would wait for ever ' +
        '("runtime-container-meta not found", as in Kruise) and the rollout would stall. ' +
        `Use --mode=recreate to recreate the pods (within maxUnavailable)${policy === 'InPlaceOnly' ? ' after switching updateStrategy.type away from InPlaceOnly' : ''}, or install kruise-daemon`,
    };
  }
  if (requested === 'recreate' && policy === 'InPlaceOnly') {
    return {
      ok: false,
      message: `cloneset "${name}" has updateStrategy.type InPlaceOnly: a restart by recreation would be refused by the controller; use --mode=in-place (needs kruise-daemon) or change the update type`,
    };
  }
  const firstInPlace = requested === 'in-place' && !containers.every(readsAnnotation);
  if (firstInPlace && policy === 'InPlaceOnly') {
    return {
      ok: false,
      message:
        `cloneset "${name}" is InPlaceOnly and its containers do not read ${ANNOTATION_RESTARTED_AT} yet: adding that env var cannot be applied in place. ` +
        `Add to every container: env: [{name: ${ENV_RESTARTED_AT}, valueFrom: {fieldRef: {fieldPath: "${FIELD_PATH}"}}}] in a change you roll out by other means, then restart again`,
    };
  }
  const entry = requested === 'recreate' ? { name: ENV_RESTARTED_AT, value: nowIso } : { name: ENV_RESTARTED_AT, valueFrom: { fieldRef: { fieldPath: FIELD_PATH } } };
  const needsContainers = requested === 'recreate' || firstInPlace;
  const patch = {
    // The containers list is replaced whole: guard it against a concurrent change.
    ...(needsContainers ? { metadata: { resourceVersion: cs.metadata.resourceVersion } } : {}),
    spec: {
      template: {
        metadata: { annotations: { [ANNOTATION_RESTARTED_AT]: nowIso } },
        ...(needsContainers ? { spec: { containers: containers.map((c) => withEnv(c, entry)) } } : {}),
      },
    },
  };
  const effect =
    requested === 'recreate'
      ? `every pod is deleted and created anew (${policy}: an env value cannot change in place; the env var ${ENV_RESTARTED_AT} stays in the template), ${budget}`
      : firstInPlace
        ? `this first in-place restart adds the env var ${ENV_RESTARTED_AT} (from the annotation), which cannot be applied in place: the pods are recreated once, ${budget}; later restarts restart the containers in place`
        : `every pod is updated in place, ${budget}: marked not ready, its annotation patched, and kruise-daemon restarts the containers (same pod, node, IP and volumes)`;
  return { ok: true, patch, mode: requested, effect };
}

function describeBudget(cs: CloneSet): string {
  const us = cs.spec.updateStrategy;
  const parts = [`at most maxUnavailable ${String(us?.maxUnavailable ?? '20%')} at a time`];
  if (us?.maxSurge !== undefined) parts.push(`maxSurge ${String(us.maxSurge)}`);
  if (us?.partition !== undefined) parts.push(`partition ${String(us.partition)} pods stay as they are`);
  if (us?.paused === true) parts.push('the rollout is paused: nothing happens until kubectl cloneset rollout resume');
  return parts.join(', ');
}
