// CloneSets and their pods as the integration tests see them: a CloneSet manifest (selector and template labels
// app=<name>, one nginx:alpine container unless told otherwise), pod predicates, and reads of the pods, PVCs,
// the CloneSet and its events.
import type { CloneSet, CloneSetSpec } from '../../src/api/cloneset.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { CLONESETS, CLONESETS_V1BETA1, EVENTS, PODS, PVCS } from '../../src/kube/resources.ts';
import type { Container, PersistentVolumeClaim, Pod } from '../../src/kube/types.ts';
import { eventually } from './kube.ts';

export interface CloneSetOptions {
  /** the CloneSet's own labels */
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly annotations?: Readonly<Record<string, string>> | undefined;
  /** the template's only container; default nginx (nginx:alpine) */
  readonly container?: Container | undefined;
  /** template finalizers: every new pod carries them */
  readonly podFinalizers?: readonly string[] | undefined;
  /** volumeClaimTemplates (1Gi, ReadWriteOnce), each mounted at /mnt/<name> */
  readonly claims?: readonly string[] | undefined;
  /** further spec fields: strategies, lifecycle, minReadySeconds… */
  readonly spec?: Partial<CloneSetSpec> | undefined;
}

export function newCloneSet(namespace: string, name: string, replicas: number, o: CloneSetOptions = {}): CloneSet {
  const { claims } = o;
  const container = o.container ?? { name: 'nginx', image: 'nginx:alpine' };
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: {
      name,
      namespace,
      ...(o.labels !== undefined ? { labels: { ...o.labels } } : {}),
      ...(o.annotations !== undefined ? { annotations: { ...o.annotations } } : {}),
    },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, ...(o.podFinalizers !== undefined ? { finalizers: [...o.podFinalizers] } : {}) },
        spec: {
          containers: [{ ...container, ...(claims !== undefined ? { volumeMounts: claims.map((c) => ({ name: c, mountPath: `/mnt/${c}` })) } : {}) }],
        },
      },
      ...(claims !== undefined
        ? { volumeClaimTemplates: claims.map((c) => ({ metadata: { name: c }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } })) }
        : {}),
      ...o.spec,
    },
  };
}

export const isActive = (p: Pod): boolean => p.metadata.deletionTimestamp === undefined && p.status?.phase !== 'Failed' && p.status?.phase !== 'Succeeded';
export const isReady = (p: Pod): boolean => p.status?.phase === 'Running' && (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
export const revisionOf = (p: Pod): string => p.metadata.labels?.['controller-revision-hash'] ?? '';
/** The objects' names, sorted. */
export const names = (list: readonly { metadata: { name?: string } }[]): string[] => list.map((o) => o.metadata.name ?? '').sort();

/** Every pod labelled app=<app>, terminating and finished ones included. */
export async function allPods(client: KubeClient, ns: string, app: string): Promise<Pod[]> {
  return [...(await client.list<Pod>(PODS, ns, { labelSelector: `app=${app}` })).items];
}

/** The active pods labelled app=<app>. */
export async function activePods(client: KubeClient, ns: string, app: string): Promise<Pod[]> {
  return (await allPods(client, ns, app)).filter(isActive);
}

/** Exactly `n` active pods, all Ready; undefined otherwise (for `eventually`). */
export async function readyPods(client: KubeClient, ns: string, app: string, n: number): Promise<Pod[] | undefined> {
  const pods = await activePods(client, ns, app);
  return pods.length === n && pods.every(isReady) ? pods : undefined;
}

export async function pvcsOf(client: KubeClient, ns: string, app: string): Promise<PersistentVolumeClaim[]> {
  return [...(await client.list<PersistentVolumeClaim>(PVCS, ns, { labelSelector: `app=${app}` })).items];
}

export async function getCloneSet(client: KubeClient, ns: string, name: string): Promise<CloneSet> {
  return client.get<CloneSet>(CLONESETS, ns, name);
}

export interface EventSummary {
  readonly type?: string;
  readonly reason?: string;
  readonly message?: string;
  /** How often the recorder saw it (repeats are folded into one Event). */
  readonly count?: number;
}

/** The events whose involvedObject is named `name`. */
export async function eventsOf(client: KubeClient, ns: string, name: string): Promise<EventSummary[]> {
  const list = await client.list<EventSummary & { involvedObject?: { name?: string } }>(EVENTS, ns);
  return list.items.filter((e) => e.involvedObject?.name === name);
}

/**
 * Returns once the controller has made full passes (plan, execute, status) over the CloneSet as it is now, so that
 * a test can then assert that nothing changed — a positive signal where a quiet window would pass vacuously on a slow
 * controller. The probe: a behaviour-neutral spec change (revisionHistoryLimit, which only bounds how many unused
 * ControllerRevisions are kept) bumps metadata.generation, and status.observedGeneration reaches it only from a pass
 * that read the CloneSet after the change and planned (a pass still waiting for expectations writes no status).
 * Two passes by default, so that a decision taking two passes has shown at least its first step.
 */
export async function controllerPassed(client: KubeClient, ns: string, name: string, passes = 2): Promise<void> {
  for (let i = 0; i < passes; i++) {
    const cs = await getCloneSet(client, ns, name);
    const limit = cs.spec.revisionHistoryLimit === 11 ? 10 : 11;
    // through v1beta1, whose admission checks no template rule: the probe works on a CloneSet v1alpha1 would refuse
    const bumped = await client.patch<CloneSet>(CLONESETS_V1BETA1, ns, name, { spec: { revisionHistoryLimit: limit } }, 'merge');
    const generation = bumped.metadata.generation ?? 0;
    await eventually(
      `the controller to reconcile ${ns}/${name} at generation ${generation}`,
      async () => {
        const now = await getCloneSet(client, ns, name);
        return (now.status?.observedGeneration ?? 0) >= generation ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
  }
}
