// Container launch priorities of a pod, for the container batches of an in-place update (docs/features.md#in-place-update; Kruise pkg/util/inplaceupdate/inplace_update_defaults.go). Pure.
//
// Kruise reads a container's priority only from the `KRUISE_CONTAINER_BARRIER` env var that its pod webhook
// injects at creation (`pkg/webhook/pod/mutating/container_launch_priority_initialization.go`, read back by
// `pkg/util/containerlaunchpriority/container_launch_priority.go`). That env var takes its value from a
// `<pod>-barrier` ConfigMap that only kruise-daemon creates, so injecting it here would keep pods from starting
// on clusters without Kruise. Instead the priorities are derived the way the webhook derives them, from what
// the pod carries anyway:
//   1. a pod Kruise created: the barrier env (`configMapKeyRef.key` = `p_<priority>`; an unparsable key is 0,
//      as Go's ignored `strconv.Atoi` error gives); containers without it have no priority;
//   2. pods with one container: no priorities (the webhook skips them);
//   3. annotation `apps.kruise.io/container-launch-priority: Ordered`: container i has priority −i;
//   4. env `KRUISE_CONTAINER_PRIORITY` (an integer; a container without it is 0), unless every container has the
//      same priority; a value that is not an integer (the webhook refuses such a pod) means no priorities.
// The annotation is read from the pod (it comes from the template the pod was created from).
import type { Container, Pod } from '../../kube/types.ts';

export const ENV_CONTAINER_BARRIER = 'KRUISE_CONTAINER_BARRIER';
export const ENV_CONTAINER_PRIORITY = 'KRUISE_CONTAINER_PRIORITY';
export const ANNOTATION_CONTAINER_LAUNCH_PRIORITY = 'apps.kruise.io/container-launch-priority';
export const CONTAINER_LAUNCH_ORDERED = 'Ordered';

const GO_INT = /^[+-]?\d+$/;

interface EnvVar {
  readonly name?: unknown;
  readonly value?: unknown;
  readonly valueFrom?: { readonly configMapKeyRef?: { readonly key?: unknown } };
}

function envOf(c: Container, name: string): EnvVar | undefined {
  const env = c['env'];
  if (!Array.isArray(env)) return undefined;
  let found: EnvVar | undefined;
  // The last one wins, as in the webhook's loop.
  for (const e of env as unknown[]) if (typeof e === 'object' && e !== null && (e as EnvVar).name === name) found = e as EnvVar;
  return found;
}

/** The priority of the barrier env of a pod Kruise's webhook mutated, or undefined without one. */
export function barrierPriority(c: Container): number | undefined {
  const env = envOf(c, ENV_CONTAINER_BARRIER);
  if (env === undefined) return undefined;
  const key = env.valueFrom?.configMapKeyRef?.key;
  const digits = typeof key === 'string' ? key.slice(2) : '';
  return GO_INT.test(digits) ? Number(digits) : 0;
}

/** Container name → launch priority; containers absent from the map have none (they go in the first batch). */
export function containerLaunchPriorities(pod: Pod): ReadonlyMap<string, number> {
  const containers = pod.spec.containers;
  const out = new Map<string, number>();
  if (containers.some((c) => envOf(c, ENV_CONTAINER_BARRIER) !== undefined)) {
    for (const c of containers) {
      const p = barrierPriority(c);
      if (p !== undefined) out.set(c.name, p);
    }
    return out;
  }
  if (containers.length <= 1) return out;
  if (pod.metadata.annotations?.[ANNOTATION_CONTAINER_LAUNCH_PRIORITY] === CONTAINER_LAUNCH_ORDERED) {
    containers.forEach((c, i) => {
      out.set(c.name, i === 0 ? 0 : -i);
    });
    return out;
  }
  const priorities: number[] = [];
  for (const c of containers) {
    const env = envOf(c, ENV_CONTAINER_PRIORITY);
    if (env === undefined) {
      priorities.push(0);
      continue;
    }
    const v = typeof env.value === 'string' ? env.value : '';
    if (!GO_INT.test(v)) return out;
    priorities.push(Number(v));
  }
  if (priorities.every((p) => p === priorities[0])) return out;
  containers.forEach((c, i) => {
    out.set(c.name, priorities[i] ?? 0);
  });
  return out;
}
