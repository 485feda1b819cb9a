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

/** The CloneSet `bench` with `replicas` nginx:alpine pods. */
export function benchCloneSet(ns: string, replicas: number, updateStrategy?: CloneSetSpec['updateStrategy']): object {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: APP, namespace: ns },
    spec: {
      replicas,
      selector: { matchLabels: { app: APP } },
      template: { metadata: { labels: { app: APP } }, spec: { containers: [{ name: 'nginx', image: 'nginx:alpine' }] } },
      ...(updateStrategy !== undefined ? { updateStrategy } : {}),
    },
  };
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
      await client.watch(r, ns, { resourceVersion: rv, timeoutSeconds: 300, allowWatchBookmarks: true, ...sel }, (e) => {
        if (e.type === 'ERROR') return;
        rv = e.object.metadata?.resourceVersion ?? rv;
        if (e.type !== 'BOOKMARK') onEvent(e);
      }, signal);
    } catch (e) {
      if (signal.aborted) return;
      log(`watch ${r.plural} restarted: ${e instanceof Error ? e.message : String(e)}`);
      rv = ''; // relist (e.g. 410 Gone, or a CRD whose storage is still initializing)
      await new Promise((res) => setTimeout(res, 500));
    }
  }
}

/** The pods of `bench` by name and the CloneSet, kept current by watches until `signal` aborts. */
export class CloneSetView {
  readonly pods = new Map<string, Pod>();
  cloneSet: CloneSet | undefined;

  /** `onPodEvent` runs after each pod event has been applied to `pods`. */
  constructor(client: KubeClient, ns: string, signal: AbortSignal, onPodEvent?: (type: WatchEvent['type']) => void) {
    void follow(client, PODS, ns, `app=${APP}`, (e) => {
      const pod = e.object as Pod;
      if (e.type === 'DELETED') this.pods.delete(pod.metadata.name ?? '');
      else this.pods.set(pod.metadata.name ?? '', pod);
      onPodEvent?.(e.type);
    }, signal);
    void follow(client, CLONESETS, ns, undefined, (e) => {
      if (e.type !== 'DELETED') this.cloneSet = e.object as CloneSet;
    }, signal);
  }
}

/** Until the status counts `n` available pods, all updated and Ready. */
export async function waitForAvailable(view: CloneSetView, n: number, timeoutMs: number): Promise<void> {
  await until(`${n} available pods`, () => {
    const s = view.cloneSet?.status;
    return s?.availableReplicas === n && s.updatedReadyReplicas === n && s.replicas === n ? true : undefined;
  }, timeoutMs);
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
  const allUpdatedReadyMs = await until('every pod on the new revision and Ready', () => {
    const rev = view.cloneSet?.status?.updateRevision;
    if (view.cloneSet?.status?.observedGeneration !== generation || rev === undefined) return undefined;
    const active = [...view.pods.values()].filter(isActive);
    return active.length === n && active.every((p) => isReady(p) && p.metadata.labels?.['controller-revision-hash'] === rev) ? Date.now() - t1 : undefined;
  }, timeoutMs, 50);
  const rolloutMs = await until('the status to report the rollout complete', () => {
    const s = view.cloneSet?.status;
    return s !== undefined && s.observedGeneration === generation && s.updatedReadyReplicas === n && s.replicas === n && s.currentRevision === s.updateRevision
      ? Date.now() - t1
      : undefined;
  }, timeoutMs, 50);
  return { allUpdatedReadyMs, rolloutMs };
}
