// The workload of a chaos run: four CloneSets that between them use every mechanism the faults can break, the
// random changes made to them (each one a user's action), and the user's lifecycle-hook handler.
//
//   recreate   ReCreate, maxUnavailable 2, maxSurge 1, a volumeClaimTemplate with PVC reuse off
//   inplace    InPlaceIfPossible, maxUnavailable 25%, preDelete and inPlaceUpdate hooks (finalizer handler)
//   reuse      ReCreate, maxUnavailable 1, a volumeClaimTemplate with PVC reuse on (pods get their PVCs back)
//   surge      ReCreate, maxSurge 50%, maxUnavailable 0, preDelete hook
//
// Changes: scale (½× … 1½× the base size), a new image (with a random partition one time in three), pods named in
// scaleStrategy.podsToDelete, a pod labelled apps.kruise.io/specified-delete.
import type { CloneSet, CloneSetSpec } from '../src/api/cloneset.ts';
import { LABEL_LIFECYCLE_STATE, LABEL_SPECIFIED_DELETE } from '../src/api/well-known.ts';
import { isNotFound } from '../src/kube/api-error.ts';
import type { KubeClient } from '../src/kube/client.ts';
import { CLONESETS, PODS } from '../src/kube/resources.ts';
import type { Pod } from '../src/kube/types.ts';
import { follow, isLive } from './chaos-checker.ts';

/** The finalizer the hook handler (the "user") owns. */
export const HOOK_FINALIZER = 'chaos.example.io/hook';
const IMAGES = ['nginx:1.25', 'nginx:1.26', 'nginx:1.27', 'nginx:alpine', 'nginx:mainline'];

export type Random = () => number;
export const pick = <T>(random: Random, xs: readonly T[]): T => {
  const x = xs[Math.floor(random() * xs.length)];
  if (x === undefined) throw new Error('pick from an empty list');
  return x;
};
export const between = (random: Random, lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1));

interface Shape {
  readonly name: string;
  readonly spec: Partial<CloneSetSpec>;
  readonly claim: boolean;
  readonly hooked: boolean;
}

const hook = { finalizersHandler: [HOOK_FINALIZER] };
const SHAPES: readonly Shape[] = [
  { name: 'recreate', claim: true, hooked: false, spec: { updateStrategy: { type: 'ReCreate', maxUnavailable: 2, maxSurge: 1 }, scaleStrategy: { disablePVCReuse: true } } },
  {
    name: 'inplace',
    claim: false,
    hooked: true,
    spec: { updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: '25%' }, lifecycle: { preDelete: hook, inPlaceUpdate: hook } },
  },
  { name: 'reuse', claim: true, hooked: false, spec: { updateStrategy: { type: 'ReCreate', maxUnavailable: 1 } } },
  { name: 'surge', claim: false, hooked: true, spec: { updateStrategy: { type: 'ReCreate', maxSurge: '50%', maxUnavailable: 0 }, lifecycle: { preDelete: hook } } },
];

export const CLONESET_NAMES: readonly string[] = SHAPES.map((s) => s.name);

function manifest(ns: string, s: Shape, replicas: number): CloneSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: s.name, namespace: ns },
    spec: {
      replicas,
      selector: { matchLabels: { app: s.name } },
      template: {
        metadata: { labels: { app: s.name }, ...(s.hooked ? { finalizers: [HOOK_FINALIZER] } : {}) },
        spec: {
          terminationGracePeriodSeconds: 0,
          containers: [{ name: 'main', image: 'nginx:alpine', ...(s.claim ? { volumeMounts: [{ name: 'data', mountPath: '/data' }] } : {}) }],
        },
      },
      ...(s.claim ? { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }] } : {}),
      ...s.spec,
    },
  };
}

export async function createCloneSets(client: KubeClient, ns: string, size: number): Promise<void> {
  for (const s of SHAPES) await client.create(CLONESETS, ns, manifest(ns, s, size));
}

/** One random user action on one random CloneSet; returns what it did. */
export async function randomChange(client: KubeClient, ns: string, size: number, random: Random, livePods: (cs: string) => readonly Pod[]): Promise<string> {
  const cs = pick(random, CLONESET_NAMES);
  const roll = random();
  if (roll < 0.35) {
    const replicas = between(random, Math.max(1, Math.floor(size / 2)), Math.ceil(size * 1.5));
    await client.patch(CLONESETS, ns, cs, { spec: { replicas } }, 'merge');
    return `scale ${cs} to ${replicas}`;
  }
  if (roll < 0.75) {
    const image = pick(random, IMAGES);
    const partition = random() < 0.33 ? between(random, 1, Math.floor(size / 2)) : 0;
    await client.patch(
      CLONESETS,
      ns,
      cs,
      {
        spec: { updateStrategy: { partition }, template: { spec: { containers: [{ name: 'main', image }] } } },
      },
      'merge',
    );
    return `roll ${cs} out to ${image}${partition > 0 ? ` (partition ${partition})` : ''}`;
  }
  const pods = livePods(cs).filter((p) => p.metadata.labels?.[LABEL_LIFECYCLE_STATE] === 'Normal' || p.metadata.labels?.[LABEL_LIFECYCLE_STATE] === undefined);
  if (pods.length === 0) return `no pod of ${cs} to delete`;
  if (roll < 0.88) {
    const victims = [...new Set([pick(random, pods), pick(random, pods)].map((p) => p.metadata.name ?? ''))];
    await client.patch(CLONESETS, ns, cs, { spec: { scaleStrategy: { podsToDelete: victims } } }, 'merge');
    return `podsToDelete ${cs}: ${victims.join(', ')}`;
  }
  const victim = pick(random, pods).metadata.name ?? '';
  await client.patch(PODS, ns, victim, { metadata: { labels: { [LABEL_SPECIFIED_DELETE]: 'true' } } }, 'merge').catch((e: unknown) => {
    if (!isNotFound(e)) throw e;
  });
  return `specified-delete label on ${victim}`;
}

/**
 * The user's hook handler: releases a pod waiting in PreparingDelete or PreparingUpdate by removing the hook
 * finalizer (a JSON patch that tests the entry first), and hooks a Normal or Updated pod again by adding it.
 */
export function runHookHandler(client: KubeClient, ns: string, signal: AbortSignal, log: (m: string) => void): void {
  const handle = (pod: Pod): void => {
    const state = pod.metadata.labels?.[LABEL_LIFECYCLE_STATE];
    if (state === undefined || !(pod.metadata.ownerReferences ?? []).some((r) => r.kind === 'CloneSet')) return;
    const name = pod.metadata.name ?? '';
    const finalizers = pod.metadata.finalizers ?? [];
    const i = finalizers.indexOf(HOOK_FINALIZER);
    let write: Promise<unknown> | undefined;
    if ((state === 'PreparingDelete' || state === 'PreparingUpdate') && i >= 0) {
      const path = `/metadata/finalizers/${String(i)}`;
      write = client.patch(
        PODS,
        ns,
        name,
        [
          { op: 'test', path, value: HOOK_FINALIZER },
          { op: 'remove', path },
        ],
        'json',
      );
    } else if ((state === 'Normal' || state === 'Updated') && i < 0 && isLive(pod) && pod.metadata.labels?.app !== 'recreate' && pod.metadata.labels?.app !== 'reuse') {
      write = client.patch(PODS, ns, name, { metadata: { finalizers: [HOOK_FINALIZER] } }, 'strategic');
    }
    // a conflict, a pod already gone or a failed test: the next event of the pod brings it here again
    write?.catch((e: unknown) => log(`hook handler: ${name}: ${e instanceof Error ? e.message : String(e)}`));
  };
  void follow(
    client,
    PODS,
    ns,
    (e) => {
      if (e.type === 'ADDED' || e.type === 'MODIFIED') handle(e.object as Pod);
    },
    (items) => {
      for (const pod of items) handle(pod as Pod);
    },
    signal,
  );
}
