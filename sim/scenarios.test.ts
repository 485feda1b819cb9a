// Whole stories on the simulation (sim/script.ts): the real controller process — informers, work queue,
// expectations, executor, planner — against the in-memory API server and kubelet, without faults, with the
// CloneSet and the edits each test states. The checker's invariants (sim/checker.ts: surge, unavailable,
// over-deletion, instance ids, PVCs, leader) judge every change, as in a seed's run; the tests look at the outcome.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Mutation } from './api-server.ts';
import { available } from './checker.ts';
import { Script, type ScriptOptions, type SpecEdit } from './script.ts';

type IntOrString = number | string;

interface Shape {
  readonly replicas: number;
  readonly partition?: IntOrString;
  readonly maxSurge?: IntOrString;
  readonly maxUnavailable?: IntOrString;
  readonly paused?: boolean;
  readonly onDelete?: boolean;
  readonly progressDeadlineSeconds?: number;
}

/** CloneSet `web` (v1beta1, ReCreate, image app:v1) of the given shape. */
function web(s: Shape): ScriptOptions['cloneSet'] {
  const rollingUpdate = {
    podUpdatePolicy: 'ReCreate',
    ...(s.partition !== undefined ? { partition: s.partition } : {}),
    ...(s.maxSurge !== undefined ? { maxSurge: s.maxSurge } : {}),
    ...(s.maxUnavailable !== undefined ? { maxUnavailable: s.maxUnavailable } : {}),
    ...(s.paused !== undefined ? { paused: s.paused } : {}),
  };
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'CloneSet',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      replicas: s.replicas,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'app:v1' }] } },
      updateStrategy: s.onDelete === true ? { type: 'OnDelete' } : { type: 'RollingUpdate', rollingUpdate },
      ...(s.progressDeadlineSeconds !== undefined ? { progressDeadlineSeconds: s.progressDeadlineSeconds } : {}),
    },
  };
}

const image =
  (name: string): SpecEdit =>
  (spec) => ({ ...spec, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: name }] } } });

const rolling =
  (fields: Record<string, unknown>): SpecEdit =>
  (spec) => {
    const us = (spec['updateStrategy'] ?? {}) as { rollingUpdate?: Record<string, unknown> };
    return { ...spec, updateStrategy: { ...us, rollingUpdate: { ...us.rollingUpdate, ...fields } } };
  };

const replicas =
  (n: number): SpecEdit =>
  (spec) => ({ ...spec, replicas: n });

/** Runs `story` on a fresh simulation, then checks that no invariant was broken on the way. */
async function story(opts: Omit<ScriptOptions, 'cloneSet'> & { readonly shape: Shape }, fn: (s: Script) => Promise<void>): Promise<void> {
  const s = new Script({ ...opts, cloneSet: web(opts.shape) });
  try {
    await fn(s);
    assert.deepEqual(s.violations, [], s.trace());
  } finally {
    s.stop();
  }
}

/** `n` pods, all available, and none terminating, with these images. */
const settledOn = (s: Script, images: Record<string, number>): (() => boolean) => {
  const want = JSON.stringify(Object.entries(images).sort());
  return () => {
    const pods = s.server.all('pods').filter((p) => (p.metadata.ownerReferences ?? []).some((r) => r.name === 'web'));
    return pods.every(available) && JSON.stringify(Object.entries(s.images()).sort()) === want;
  };
};

async function settle(s: Script, images: Record<string, number>, withinMs = 120_000): Promise<void> {
  const ok = await s.runUntil(settledOn(s, images), withinMs);
  assert.ok(ok, `not settled on ${JSON.stringify(images)} within ${withinMs / 1000}s: ${JSON.stringify(s.images())}\n${s.trace()}`);
}

/** Controller writes to pods from now on, e.g. ['delete web-abcde']. */
function podWrites(s: Script, verbs: readonly Mutation['verb'][]): string[] {
  const out: string[] = [];
  s.observe((m) => {
    if (m.plural === 'pods' && m.origin.startsWith('controller-') && verbs.includes(m.verb)) out.push(`${m.verb} ${m.after?.metadata.name ?? m.before?.metadata.name ?? ''}`);
  });
  return out;
}

describe('partition (docs/features.md#partition)', () => {
  test('a ReCreate rollout of 5 pods with partition 3 ends with exactly 2 pods on the new image; currentRevision stays', async () => {
    await story({ shape: { replicas: 5, partition: 3 } }, async (s) => {
      await s.converge();
      const current = s.status()['currentRevision'];
      s.edit(image('app:v2'));
      await s.converge();
      await s.runFor(10_000);
      assert.deepEqual(s.images(), { 'app:v1': 3, 'app:v2': 2 });
      const st = s.status();
      assert.deepEqual([st['updatedReplicas'], st['expectedUpdatedReplicas'], st['currentRevision']], [2, 2, current]);
      assert.notEqual(st['updateRevision'], current);
    });
  });

  test('partition 0 updates every pod and moves currentRevision, never more than one pod unavailable or marked (maxUnavailable 20 % of 5)', async () => {
    await story({ shape: { replicas: 5 } }, async (s) => {
      await s.converge();
      let worstUnavailable = 0;
      let worstMarked = 0;
      s.observe(() => {
        const pods = s.pods();
        worstUnavailable = Math.max(worstUnavailable, 5 - pods.filter(available).length);
        worstMarked = Math.max(worstMarked, pods.filter((p) => p.metadata.labels?.['apps.kruise.io/specified-delete'] !== undefined).length);
      });
      s.edit(image('app:v2'));
      await s.converge();
      assert.deepEqual(s.images(), { 'app:v2': 5 });
      assert.equal(s.status()['currentRevision'], s.status()['updateRevision']);
      assert.deepEqual([worstUnavailable, worstMarked], [1, 1]);
    });
  });

  for (const [partition, updated] of [
    ['60%', 2],
    ['40%', 3],
    ['99%', 1],
    ['100%', 0],
    ['0%', 5],
  ] as const) {
    test(`partition "${partition}" of 5 leaves ${updated} pods updated`, async () => {
      await story({ shape: { replicas: 5, partition, maxSurge: 1 } }, async (s) => {
        await s.converge();
        s.edit(image('app:v2'));
        await s.converge();
        await s.runFor(10_000);
        assert.deepEqual(s.images(), updated === 0 ? { 'app:v1': 5 } : updated === 5 ? { 'app:v2': 5 } : { 'app:v1': 5 - updated, 'app:v2': updated });
      });
    });
  }

  test('lowering the partition later continues the rollout', async () => {
    await story({ shape: { replicas: 4, partition: 3 } }, async (s) => {
      await s.converge();
      s.edit(image('app:v2'));
      await settle(s, { 'app:v1': 3, 'app:v2': 1 });
      s.edit(rolling({ partition: 1 }));
      await s.converge();
      await s.runFor(10_000);
      assert.deepEqual(s.images(), { 'app:v1': 1, 'app:v2': 3 });
    });
  });
});

describe('paused (docs/features.md#update-types)', () => {
  test('paused stops updates, but scaling continues (new pods get the new image), and resuming finishes the rollout', async () => {
    await story({ shape: { replicas: 3, paused: true } }, async (s) => {
      await s.converge();
      const writes = podWrites(s, ['delete', 'remove']);
      s.edit(image('app:v2'));
      await s.runFor(30_000);
      assert.deepEqual([s.images(), writes], [{ 'app:v1': 3 }, []]);
      s.edit(replicas(5));
      await settle(s, { 'app:v1': 3, 'app:v2': 2 });
      await s.runFor(10_000);
      assert.deepEqual([s.images(), writes], [{ 'app:v1': 3, 'app:v2': 2 }, []]);
      s.edit(rolling({ paused: false }));
      await s.converge();
      assert.deepEqual(s.images(), { 'app:v2': 5 });
    });
  });

  test('scaling in while paused removes old pods first', async () => {
    await story({ shape: { replicas: 4, partition: 2 } }, async (s) => {
      await s.converge();
      s.edit(image('app:v2'));
      await settle(s, { 'app:v1': 2, 'app:v2': 2 });
      // Paused without a partition: the two old pods stay old, but scaling in to 2 takes them first.
      s.edit((spec) => rolling({ paused: true, partition: 0 })(replicas(2)(spec)));
      await settle(s, { 'app:v2': 2 });
    });
  });
});

describe('rollouts (docs/features.md#update-order, #maxunavailable)', () => {
  test('a second rollout while the first is under way moves every pod to the newest image', async () => {
    await story({ shape: { replicas: 4 } }, async (s) => {
      await s.converge();
      s.edit(image('app:v2'));
      await s.runUntil(() => (s.images()['app:v2'] ?? 0) > 0, 60_000);
      assert.ok((s.images()['app:v1'] ?? 0) > 0, `the first rollout is still under way: ${JSON.stringify(s.images())}`);
      s.edit(image('app:v3'));
      await s.converge();
      assert.deepEqual(s.images(), { 'app:v3': 4 });
      assert.equal(s.status()['currentRevision'], s.status()['updateRevision']);
    });
  });

  test('a rollout whose new pods never become ready stops after maxUnavailable pods', async () => {
    await story({ shape: { replicas: 5, maxUnavailable: 2 }, brokenImages: ['app:v2'] }, async (s) => {
      await s.converge();
      s.edit(image('app:v2'));
      await s.runFor(120_000);
      assert.deepEqual(s.images(), { 'app:v1': 3, 'app:v2': 2 });
      assert.equal(s.pods().filter(available).length, 3);
    });
  });
});

describe('updateStrategy OnDelete (v1beta1, docs/features.md#ondelete)', () => {
  test('a new template moves no pod; the status expects every pod on the new revision', async () => {
    await story({ shape: { replicas: 3, onDelete: true } }, async (s) => {
      await s.converge();
      const current = s.status()['currentRevision'];
      const writes = podWrites(s, ['delete', 'remove', 'create']);
      s.edit(image('app:v2'));
      await s.runFor(30_000);
      assert.deepEqual([s.images(), writes], [{ 'app:v1': 3 }, []]);
      const st = s.status();
      assert.deepEqual([st['observedGeneration'], st['updatedReplicas'], st['expectedUpdatedReplicas'], st['currentRevision']], [2, 0, 3, current]);
    });
  });

  test('a pod deleted by someone is replaced on the new revision, the others stay', async () => {
    await story({ shape: { replicas: 3, onDelete: true } }, async (s) => {
      await s.converge();
      s.edit(image('app:v2'));
      await s.runFor(5_000);
      const victim = s.pods()[0]?.metadata.name ?? '';
      s.deletePod(victim);
      await settle(s, { 'app:v1': 2, 'app:v2': 1 });
      await s.runUntil(() => s.status()['updatedReplicas'] === 1, 30_000);
      assert.equal(s.status()['updatedReplicas'], 1);
    });
  });

  test('scaling out creates pods on the new revision, scaling in removes old pods first', async () => {
    await story({ shape: { replicas: 3, onDelete: true } }, async (s) => {
      await s.converge();
      s.edit((spec) => replicas(5)(image('app:v2')(spec)));
      await settle(s, { 'app:v1': 3, 'app:v2': 2 });
      s.edit(replicas(2));
      await settle(s, { 'app:v2': 2 });
    });
  });
});
