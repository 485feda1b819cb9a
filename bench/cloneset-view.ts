// The benchmarked CloneSet (`bench`, nginx pods labelled app=bench) as the benchmark sees it: its manifest, a
// list+watch view of its pods and of the CloneSet (the benchmark's own client: none of it counts as controller
// requests), and the waits of a rollout measured on that view.
import type { CloneSet, CloneSetSpec } from '../src/api/cloneset.ts';
import type { KubeClient, WatchEvent } from '../src/kube/client.ts';
import { CLONESETS, PODS, type ResourceRef } from '../src/kube/resources.ts';
import type { KubeObject, Pod } from '../src/kube/types.ts';
import { log, until } from './harness.ts';

export const APP = 'bench';

export const isActive = (p: Pod): boolean => p.metadata.deletionTimestamp === undefined && p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded';
export const isReady = (p: Pod): boolean => isActive(p) && (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/**
 * The CloneSet `name` (default `bench`) with `replicas` nginx:alpine pods labelled app=bench; its selector also
 * matches its own `cloneset` label, so that several benchmarked CloneSets never select each other's pods.
 */
export function benchCloneSet(ns: string, replicas: number, updateStrategy?: CloneSetSpec['updateStrategy'], name = APP): object {
  const labels = { app: APP, cloneset: name };
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name, namespace: ns },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'nginx', image: 'nginx:alpine' }] } },
      ...(updateStrategy !== undefined ? { updateStrategy } : {}),
    },
  };
}

/** `pods` spread over `count` CloneSets (`bench` alone, or `bench-0` … `bench-<count-1>`): name → replicas. */
export function fleet(pods: number, count: number): Map<string, number> {
  const out = new Map<string, number>();
  for (let i = 0; i < count; i++) out.set(count === 1 ? APP : `${APP}-${i}`, Math.floor(pods / count) + (i < pods % count ? 1 : 0));
  return out;
}

/** Sum of a status counter over the CloneSets of the view (undefined counts as 0). */
export function statusSum(view: CloneSetView, field: 'replicas' | 'readyReplicas' | 'availableReplicas' | 'updatedReadyReplicas'): number {
  let n = 0;
  for (const cs of view.cloneSets.values()) n += cs.status?.[field] ?? 0;
  return n;
}

/** List then watch `r`, resuming after each stream end, until `signal` aborts. */
async function follow(client: KubeClient, r: ResourceRef, ns: string, labelSelector: string | undefined, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<void> {
  const sel = labelSelector !== undefined ? { labelSelector } : {};
  let rv = '';
  while (!signal.aborted) {
    try {
      if (rv === '') {
        const list = await client.list<KubeObject>(r, ns, sel);
        for (const object of list.items) onEvent({ type: 'ADDED', object });
        rv = list.metadata.resourceVersion ?? '';
      }
      await client.watch(
        r,
        ns,
        { resourceVersion: rv, timeoutSeconds: 300, allowWatchBookmarks: true, ...sel },
        (e) => {
          if (e.type === 'ERROR') return;
          rv = e.object.metadata?.resourceVersion ?? rv;
          if (e.type !== 'BOOKMARK') onEvent(e);
        },
        signal,
      );
    } catch (e) {
      if (signal.aborted) return;
      log(`watch ${r.plural} restarted: ${e instanceof Error ? e.message : String(e)}`);
      rv = ''; // relist (e.g. 410 Gone, or a CRD whose storage is still initializing)
      await new Promise((res) => setTimeout(res, 500));
    }
  }
}

/** The pods labelled app=bench by name and the CloneSets by name, kept current by watches until `signal` aborts. */
export class CloneSetView {
  readonly pods = new Map<string, Pod>();
  readonly cloneSets = new Map<string, CloneSet>();

  /** The CloneSet `bench` (the single-CloneSet benchmarks). */
  get cloneSet(): CloneSet | undefined {
    return this.cloneSets.get(APP);
  }

  /** `onPodEvent` runs after each pod event has been applied to `pods`. */
  constructor(client: KubeClient, ns: string, signal: AbortSignal, onPodEvent?: (type: WatchEvent['type'], pod: Pod) => void) {
    void follow(
      client,
      PODS,
      ns,
      `app=${APP}`,
      (e) => {
        const pod = e.object as Pod;
        if (e.type === 'DELETED') this.pods.delete(pod.metadata.name ?? '');
        else this.pods.set(pod.metadata.name ?? '', pod);
        onPodEvent?.(e.type, pod);
      },
      signal,
    );
    void follow(
      client,
      CLONESETS,
      ns,
      undefined,
      (e) => {
        const cs = e.object as CloneSet;
        if (e.type === 'DELETED') this.cloneSets.delete(cs.metadata.name ?? '');
        else this.cloneSets.set(cs.metadata.name ?? '', cs);
      },
      signal,
    );
  }
}

/** Until the status counts `n` available pods, all updated and Ready. */
export async function waitForAvailable(view: CloneSetView, n: number, timeoutMs: number): Promise<void> {
  await until(
    `${n} available pods`,
    () => {
      const s = view.cloneSet?.status;
      return s?.availableReplicas === n && s.updatedReadyReplicas === n && s.replicas === n ? true : undefined;
    },
    timeoutMs,
  );
}

export interface RolloutTimes {
  /** image patch → every active pod Ready on the new revision (as the watch saw the pods) */
  readonly allUpdatedReadyMs: number;
  /** image patch → the status reports the rollout complete */
  readonly rolloutMs: number;
}

/** Patches a new image into the template and measures the rollout on the view. */
export async function rollOutNewImage(client: KubeClient, ns: string, view: CloneSetView, n: number, timeoutMs: number): Promise<RolloutTimes> {
  const t1 = Date.now();
  const patched = await client.patch<CloneSet>(CLONESETS, ns, APP, { spec: { template: { spec: { containers: [{ name: 'nginx', image: 'nginx:mainline' }] } } } }, 'merge');
  const generation = patched.metadata.generation;
  const allUpdatedReadyMs = await until(
    'every pod on the new revision and Ready',
    () => {
      const rev = view.cloneSet?.status?.updateRevision;
      if (view.cloneSet?.status?.observedGeneration !== generation || rev === undefined) return undefined;
      const active = [...view.pods.values()].filter(isActive);
      return active.length === n && active.every((p) => isReady(p) && p.metadata.labels?.['controller-revision-hash'] === rev) ? Date.now() - t1 : undefined;
    },
    timeoutMs,
    50,
  );
  const rolloutMs = await until(
    'the status to report the rollout complete',
    () => {
      const s = view.cloneSet?.status;
      return s !== undefined && s.observedGeneration === generation && s.updatedReadyReplicas === n && s.replicas === n && s.currentRevision === s.updateRevision
        ? Date.now() - t1
        : undefined;
    },
    timeoutMs,
    50,
  );
  return { allUpdatedReadyMs, rolloutMs };
}
