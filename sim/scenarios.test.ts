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

/**
 * Runs `story` on a fresh simulation, then checks that no invariant was broken on the way and that the story ended
 * at rest: for 15 s the controller writes nothing more (its plans are empty).
 */
async function story(opts: Omit<ScriptOptions, 'cloneSet'> & { readonly shape: Shape }, fn: (s: Script) => Promise<void>): Promise<void> {
  const s = new Script({ ...opts, cloneSet: web(opts.shape) });
  try {
    await fn(s);
    const writes: string[] = [];
    s.observe((m) => {
      if (m.origin.startsWith('controller-') && m.plural !== 'leases' && m.plural !== 'events')
        writes.push(`${m.verb} ${m.plural}/${m.after?.metadata.name ?? m.before?.metadata.name ?? ''}`);
    });
    await s.runFor(15_000);
    assert.deepEqual(writes, [], 'the controller still writes at the end of the story');
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
      await s.runUntil(() => s.status()['updatedReplicas'] === 1 && s.status()['availableReplicas'] === 3, 30_000);
      assert.deepEqual([s.status()['updatedReplicas'], s.status()['availableReplicas']], [1, 3]);
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

describe('sustained surge (replica-diff.ts SurgeRule, beyond Kruise: kruise#1442, kruise#2491)', () => {
  interface Rollout {
    readonly tookMs: number;
    readonly maxPods: number;
    readonly minAvailable: number;
    /** Surge pods (pods beyond 50) on average over the time at least 10 old pods remained. */
    readonly meanSurge: number;
  }

  /** 50 ready pods, maxSurge 20 % (10), maxUnavailable 0, ReCreate, a new image; the controller with `rule`. */
  async function rollout50(rule: 'sustained' | 'kruise'): Promise<Rollout> {
    let result: Rollout | undefined;
    await story({ shape: { replicas: 50, maxSurge: '20%', maxUnavailable: 0 }, args: [`--cloneset-surge-rule=${rule}`] }, async (s) => {
      await s.converge();
      let maxPods = 0;
      let minAvailable = 50;
      let surgeMs = 0;
      let oldMs = 0;
      let last = s.clock.now();
      let surge = 0;
      let manyOld = false;
      s.observe(() => {
        const now = s.clock.now();
        if (manyOld) {
          surgeMs += (now - last) * surge;
          oldMs += now - last;
        }
        last = now;
        const pods = s.pods();
        manyOld = (s.images()['app:v1'] ?? 0) >= 10;
        surge = Math.max(0, pods.length - 50);
        maxPods = Math.max(maxPods, pods.length);
        minAvailable = Math.min(minAvailable, pods.filter(available).length);
      });
      const start = s.clock.now();
      s.edit(image('app:v2'));
      await s.converge(600_000);
      assert.deepEqual(s.images(), { 'app:v2': 50 });
      assert.equal(s.status()['currentRevision'], s.status()['updateRevision']);
      result = { tookMs: s.clock.now() - start, maxPods, minAvailable, meanSurge: surgeMs / Math.max(1, oldMs) };
    });
    assert.ok(result !== undefined);
    return result;
  }

  test("never more than 60 pods nor fewer than 50 available; the sustained rule keeps more surge pods than Kruise's while 10 or more old pods remain, and finishes sooner", async () => {
    const sustained = await rollout50('sustained');
    const kruise = await rollout50('kruise');
    const figures = JSON.stringify({ sustained, kruise });
    for (const r of [sustained, kruise]) assert.deepEqual([r.maxPods, r.minAvailable], [60, 50], figures);
    assert.ok(sustained.meanSurge > kruise.meanSurge, figures);
    assert.ok(sustained.tookMs < kruise.tookMs, figures);
  });

  // A rollout of random specs (replicas, partition, maxSurge, maxUnavailable, a third image mid-rollout) stays within
  // replicas + maxSurge pods and replicas − maxUnavailable available pods and converges: the simulation's surge,
  // unavailable and convergence invariants over seeds 1–2000 (sim/simulation.test.ts; the controller's rule is 'sustained').

  test('a rollback by partition (CloneSetPartitionRollback) uses the full surge and ends with the partition asked for', async () => {
    await story({ shape: { replicas: 20, maxSurge: 4, maxUnavailable: 0 }, args: ['--feature-gates=CloneSetPartitionRollback=true'] }, async (s) => {
      await s.converge();
      // v2 with partition 10 updates half of the pods; v1 stays the current revision.
      s.edit((spec) => rolling({ partition: 10 })(image('app:v2')(spec)));
      await s.converge(600_000);
      assert.deepEqual(s.images(), { 'app:v1': 10, 'app:v2': 10 });
      let maxPods = 0;
      s.observe(() => {
        maxPods = Math.max(maxPods, s.pods().length);
      });
      // Raising the partition to 18 rolls 8 pods back to v1, with the full surge of 4.
      s.edit(rolling({ partition: 18 }));
      await settle(s, { 'app:v1': 18, 'app:v2': 2 }, 600_000);
      assert.equal(maxPods, 24);
    });
  });
});

describe('Progressing over a whole rollout (docs/features.md#progress-deadline-and-conditions, deadline 60 s)', () => {
  test('a rollout whose pods never become ready times out; a new revision gets a fresh deadline and completes within it', async () => {
    await story({ shape: { replicas: 3, progressDeadlineSeconds: 60 }, brokenImages: ['app:v2'] }, async (s) => {
      await s.converge();
      const reasons: string[] = [];
      const progressing = () => s.status().conditions?.find((c) => c.type === 'Progressing');
      s.observe((m) => {
        const r = progressing()?.reason ?? '-';
        if (m.plural === 'clonesets' && m.subresource === 'status' && reasons[reasons.length - 1] !== r) reasons.push(r);
      });
      s.edit(image('app:v2'));
      const stuck = s.status()['updateRevision'];
      assert.ok(await s.runUntil(() => progressing()?.reason === 'ProgressDeadlineExceeded', 120_000), s.trace());
      assert.deepEqual(reasons, ['CloneSetUpdated', 'ProgressDeadlineExceeded']);
      const broken = s.status()['updateRevision'];
      assert.notEqual(broken, stuck);
      // The fix: a new image, which rolls out well within its own 60 s.
      const fixAt = s.clock.now();
      s.edit(image('app:v3'));
      await s.runUntil(() => progressing()?.reason === 'CloneSetUpdated', 30_000);
      const fresh = progressing();
      assert.deepEqual(
        [fresh?.status, fresh?.message],
        ['True', `CloneSet is progressing due to revision changed from ${String(broken)} to ${String(s.status()['updateRevision'])}`],
      );
      await s.converge(60_000);
      assert.ok(s.clock.now() - fixAt < 60_000);
      await s.runUntil(() => progressing()?.reason === 'CloneSetAvailable', 10_000);
      assert.deepEqual(reasons, ['CloneSetUpdated', 'ProgressDeadlineExceeded', 'CloneSetUpdated', 'CloneSetAvailable']);
      assert.equal(s.status()['currentRevision'], s.status()['updateRevision']);
    });
  });
});
