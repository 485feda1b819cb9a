// A minimal "user controller" for CloneSet lifecycle hooks (user manual "Example for user controller logic").
//
// The CloneSet (cloneset.yaml) names one finalizer, `example.io/drain-blocker`, as the handler of its preNormal,
// preDelete and inPlaceUpdate hooks, and a Service selects its pods on `example.io/traffic: "on"`. This loop:
//
//   PreparingNormal / Normal / Updated   → label `example.io/traffic: "on"` (the Service selects the pod) and add
//                                          the finalizer: the CloneSet controller then moves the pod to Normal
//   PreparingDelete / PreparingUpdate    → label `example.io/traffic: "off"` (the Service drops the pod from its
//                                          endpoints); once the pod is in none of the Service's EndpointSlices
//                                          and `--drain-seconds` have passed, remove the finalizer: the CloneSet
//                                          controller then deletes the pod / updates it in place
//   Updating                             → nothing (the in-place update is running)
//
// It is level-triggered: every pass lists the pods and looks at each one as it is now, so a crash or a missed
// event never leaves a pod stuck. Run it with:
//   node examples/drain-on-predelete/drain.ts --namespace default --selector app=web --service web
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { KubeClient } from '../../src/kube/client.ts';
import { loadKubeConfig } from '../../src/kube/kubeconfig.ts';
import { PODS, type ResourceRef } from '../../src/kube/resources.ts';
import type { Pod } from '../../src/kube/types.ts';

const ENDPOINT_SLICES: ResourceRef = { group: 'discovery.k8s.io', version: 'v1', plural: 'endpointslices', namespaced: true };
const STATE_LABEL = 'lifecycle.apps.kruise.io/state';
const DRAINED_AT = 'example.io/drained-at';

export interface DrainOptions {
  readonly finalizer: string;
  /** The label the Service selects on, with value "on" (in the Service) or "off" (drained). */
  readonly trafficLabel: string;
  /** Time to wait after the pod left the endpoints (connections finish, load balancers catch up). */
  readonly drainSeconds: number;
}

export type Step =
  | { readonly kind: 'none'; readonly why: string }
  /** Label traffic=on and add the finalizer (strategic merge: the finalizer list is merged, not replaced). */
  | { readonly kind: 'admit' }
  /** Label traffic=off and note when. */
  | { readonly kind: 'drain' }
  /** Remove our finalizer: the CloneSet controller goes on with the deletion / the update. */
  | { readonly kind: 'release' };

/** What to do with one pod, from the pod and whether the Service still lists it (pure; unit-testable). */
export function decide(pod: Pod, opts: DrainOptions, inEndpoints: boolean, nowMs: number): Step {
  const labels = pod.metadata.labels ?? {};
  const hasFinalizer = (pod.metadata.finalizers ?? []).includes(opts.finalizer);
  if (pod.metadata.deletionTimestamp !== undefined) return { kind: 'none', why: 'terminating' };
  switch (labels[STATE_LABEL] ?? '') {
    case '':
    case 'PreparingNormal':
    case 'Normal':
    case 'Updated':
      return labels[opts.trafficLabel] === 'on' && hasFinalizer ? { kind: 'none', why: 'serving' } : { kind: 'admit' };
    case 'PreparingDelete':
    case 'PreparingUpdate': {
      if (labels[opts.trafficLabel] !== 'off') return { kind: 'drain' };
      if (!hasFinalizer) return { kind: 'none', why: 'released, waiting for the CloneSet controller' };
      if (inEndpoints) return { kind: 'none', why: 'still in the endpoints' };
      const since = Date.parse(pod.metadata.annotations?.[DRAINED_AT] ?? '');
      if (Number.isNaN(since)) return { kind: 'drain' };
      if (nowMs < since + opts.drainSeconds * 1000) return { kind: 'none', why: 'draining' };
      return { kind: 'release' };
    }
    default:
      return { kind: 'none', why: `state ${labels[STATE_LABEL] ?? ''}` };
  }
}

interface EndpointSlice {
  readonly endpoints?: readonly { readonly targetRef?: { readonly kind?: string; readonly name?: string } }[] | null;
}

async function podsInEndpoints(client: KubeClient, ns: string, service: string): Promise<Set<string>> {
  const slices = await client.list<EndpointSlice>(ENDPOINT_SLICES, ns, { labelSelector: `kubernetes.io/service-name=${service}` });
  const names = new Set<string>();
  for (const s of slices.items) for (const e of s.endpoints ?? []) if (e.targetRef?.kind === 'Pod' && e.targetRef.name !== undefined) names.add(e.targetRef.name);
  return names;
}

async function act(client: KubeClient, ns: string, pod: Pod, step: Step, opts: DrainOptions): Promise<void> {
  const name = pod.metadata.name ?? '';
  switch (step.kind) {
    case 'none':
      return;
    case 'admit':
      await client.patch(PODS, ns, name, { metadata: { labels: { [opts.trafficLabel]: 'on' }, finalizers: [opts.finalizer] } }, 'strategic');
      return;
    case 'drain':
      await client.patch(PODS, ns, name, { metadata: { labels: { [opts.trafficLabel]: 'off' }, annotations: { [DRAINED_AT]: new Date().toISOString() } } }, 'strategic');
      return;
    case 'release': {
      // A JSON patch that first tests the entry: if the list changed meanwhile, nothing is removed by mistake.
      const i = (pod.metadata.finalizers ?? []).indexOf(opts.finalizer);
      const path = `/metadata/finalizers/${i}`;
      await client.patch(
        PODS,
        ns,
        name,
        [
          { op: 'test', path, value: opts.finalizer },
          { op: 'remove', path },
        ],
        'json',
      );
      return;
    }
  }
}

/** One level-triggered pass over the pods; returns what was done, for logs and tests. */
export async function pass(client: KubeClient, ns: string, selector: string, service: string, opts: DrainOptions): Promise<string[]> {
  const [pods, endpoints] = await Promise.all([client.list<Pod>(PODS, ns, { labelSelector: selector }), podsInEndpoints(client, ns, service)]);
  const done: string[] = [];
  for (const pod of pods.items) {
    const name = pod.metadata.name ?? '';
    const step = decide(pod, opts, endpoints.has(name), Date.now());
    if (step.kind === 'none') continue;
    try {
      await act(client, ns, pod, step, opts);
      done.push(`${step.kind} ${name}`);
    } catch (e) {
      // A conflict or a vanished pod: the next pass sees the new state.
      done.push(`${step.kind} ${name} failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return done;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      kubeconfig: { type: 'string' },
      namespace: { type: 'string', short: 'n', default: 'default' },
      selector: { type: 'string', short: 'l' },
      service: { type: 'string' },
      finalizer: { type: 'string', default: 'example.io/drain-blocker' },
      'traffic-label': { type: 'string', default: 'example.io/traffic' },
      'drain-seconds': { type: 'string', default: '2' },
      'interval-ms': { type: 'string', default: '500' },
    },
  });
  if (values.selector === undefined || values.service === undefined) {
    process.stderr.write('usage: drain.ts --namespace NS --selector app=web --service web [--finalizer F] [--traffic-label L] [--drain-seconds S]\n');
    process.exit(2);
  }
  const opts: DrainOptions = { finalizer: values.finalizer, trafficLabel: values['traffic-label'], drainSeconds: Number(values['drain-seconds']) };
  const client = await KubeClient.fromKubeConfig(loadKubeConfig(values.kubeconfig), { qps: 20, burst: 40, userAgent: 'drain-on-predelete' });
  const stop = new AbortController();
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
  const interval = Number(values['interval-ms']);
  while (!stop.signal.aborted) {
    try {
      for (const line of await pass(client, values.namespace, values.selector, values.service, opts)) process.stdout.write(`${new Date().toISOString()} ${line}\n`);
    } catch (e) {
      process.stderr.write(`${new Date().toISOString()} pass failed: ${e instanceof Error ? e.message : String(e)}\n`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
  client.close();
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
