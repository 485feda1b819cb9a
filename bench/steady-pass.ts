// The CPU of one reconcile pass over one large CloneSet, through the real reconciler, planner and executor
// (src/cloneset/testing/reconcile-harness.ts): the cost every pass pays per pod, without an API server.
//
//   bash hack/node.sh bench/steady-pass.ts [--pods 1000,10000] [--passes 30] [--repeat 5] [--shape mixed,scale-up] [--cpu-prof DIR]
//
// Shapes, each a pass that has nothing to write (so that every measured pass sees the same cache):
// - mixed: a rollout held by a partition (70 % of the pods on the old revision, 30 % on the new one),
//   minReadySeconds 10, every 10th pod not Ready, every 7th with a pod-deletion-cost: Scale, Update and the
//   rollout blockers each build their replica diff.
// - scale-up: half the pods created and not yet scheduled (PreparingNormal, Pending, no InPlaceUpdateReady),
//   half Running, Ready and Normal: the moment of a scale-up whose creates are answered and not yet scheduled.
// Prints per size and shape the process CPU per pass (user + system, process.cpuUsage: GC and JIT threads too),
// the least and the median of `repeat` blocks of `passes` passes, and the wall time.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { CloneSet } from '../src/api/cloneset.ts';
import type { Pod } from '../src/kube/types.ts';
import { FakeClock } from '../src/runtime/clock.ts';
import { aCloneSet, T0 } from '../src/cloneset/plan/testing/builders.ts';
import { reconcileHarness, type ReconcileHarness } from '../src/cloneset/testing/reconcile-harness.ts';
import { RolloutObserver } from '../src/cloneset/rollout-observer.ts';
import { pino } from 'pino';

type Shape = 'mixed' | 'scale-up';
const SHAPES: readonly Shape[] = ['mixed', 'scale-up'];

const { values } = parseArgs({
  options: {
    pods: { type: 'string', default: '1000,10000' },
    passes: { type: 'string', default: '30' },
    repeat: { type: 'string', default: '5' },
    shape: { type: 'string', default: SHAPES.join(',') },
    /** Writes a CPU profile of the measured passes only (not the set-up) per size and shape into this directory. */
    'cpu-prof': { type: 'string' },
  },
});
const sizes = values.pods.split(',').map(Number);
const passes = Number(values.passes);
const repeat = Number(values.repeat);
const shapes = values.shape.split(',').filter((s): s is Shape => (SHAPES as readonly string[]).includes(s));

const withImage =
  (image: string, partition: number) =>
  (cs: CloneSet): CloneSet => ({
    ...cs,
    spec: {
      ...cs.spec,
      updateStrategy: { ...cs.spec.updateStrategy, partition },
      template: { ...cs.spec.template, spec: { ...cs.spec.template.spec, containers: [{ name: 'main', image }] } },
    },
  });

/** Passes (the clock moving `stepMs` and the cache catching up after each) until one writes nothing. */
async function settle(h: ReconcileHarness, clock: FakeClock, stepMs: number, limit = 200): Promise<number> {
  for (let i = 0; i < limit; i++) {
    const before = h.writes.length;
    await h.reconcile();
    clock.advance(stepMs);
    h.syncCache();
    if (h.writes.length === before) return i;
  }
  throw new Error(`no steady pass after ${limit} passes`);
}

function notReady(pod: Pod): Pod {
  const conditions = (pod.status?.conditions ?? []).map((c) => (c.type === 'Ready' ? { ...c, status: 'False' } : c));
  return { ...pod, status: { ...pod.status, conditions } };
}

function withDeletionCost(pod: Pod, cost: number): Pod {
  return { ...pod, metadata: { ...pod.metadata, annotations: { ...pod.metadata.annotations, 'controller.kubernetes.io/pod-deletion-cost': String(cost) } } };
}

/** Created, not scheduled: no node, Pending, no conditions (the kubelet has not seen it yet). */
function unscheduled(pod: Pod): Pod {
  const { nodeName: _node, ...spec } = pod.spec;
  return { ...pod, spec, status: { phase: 'Pending' } };
}

async function build(shape: Shape, pods: number): Promise<{ h: ReconcileHarness; clock: FakeClock }> {
  const clock = new FakeClock(T0);
  const cs = aCloneSet('big')
    .replicas(pods)
    .maxUnavailable('100%')
    .minReadySeconds(shape === 'mixed' ? 10 : 0)
    .build();
  // As the controller runs its passes: with the rollout observer, which asks for the rollout blockers every pass.
  const rollouts = new RolloutObserver({
    clock,
    logger: pino({ level: 'silent' }),
    sink: { rolloutFinished: () => undefined, inPlaceUpdated: () => undefined, forgotten: () => undefined },
    maxCloneSets: 100,
    warnBlockedAfterMs: 600_000,
  });
  const h = reconcileHarness(clock, cs, { rollouts });
  if (shape === 'scale-up') {
    await h.reconcile(); // creates every pod (slow-start batches in one pass)
    h.editPods((p, i) => (i % 2 === 0 ? unscheduled(p) : p));
    clock.advance(1000);
    h.syncCache();
    await settle(h, clock, 1000);
    return { h, clock };
  }
  await settle(h, clock, 20_000);
  h.editSpec(withImage('nginx:2', Math.round(pods * 0.7)));
  await settle(h, clock, 20_000);
  h.editPods((p, i) => {
    const q = i % 10 === 0 ? notReady(p) : p;
    return i % 7 === 0 ? withDeletionCost(q, i % 3) : q;
  });
  h.syncCache();
  await settle(h, clock, 1000);
  // Past every deadline the status keeps (the Progressing condition's), so that no measured pass writes it.
  clock.advance(3_600_000);
  await settle(h, clock, 1000);
  return { h, clock };
}

const ms = (us: number): string => (us / 1000).toFixed(2);

for (const shape of shapes) {
  for (const n of sizes) {
    const { h, clock } = await build(shape, n);
    if (h.pods().length !== n) throw new Error(`${shape}: ${h.pods().length} pods, wanted ${n}`);
    // Warm-up: as many pods seen as 200 passes over 1 000, so that the JIT has settled at every size.
    for (let i = 0; i < Math.max(5, Math.ceil(200_000 / n)); i++) await h.reconcile();
    const writes = h.writes.length;
    const profiler = values['cpu-prof'] === undefined ? undefined : new Session();
    profiler?.connect();
    await profiler?.post('Profiler.enable');
    await profiler?.post('Profiler.start');
    // Blocks of `passes`: the machine may be shared, so the least and the median of the blocks are printed.
    const blocks: { cpuUs: number; wallUs: number }[] = [];
    for (let b = 0; b < repeat; b++) {
      const cpu = process.cpuUsage();
      const wall = performance.now();
      for (let i = 0; i < passes; i++) {
        clock.advance(100);
        await h.reconcile();
      }
      const used = process.cpuUsage(cpu);
      blocks.push({ cpuUs: (used.user + used.system) / passes, wallUs: ((performance.now() - wall) * 1000) / passes });
    }
    if (profiler !== undefined && values['cpu-prof'] !== undefined) {
      const { profile } = await profiler.post('Profiler.stop');
      writeFileSync(join(values['cpu-prof'], `steady-pass-${shape}-${n}.cpuprofile`), JSON.stringify(profile));
      profiler.disconnect();
    }
    if (h.writes.length !== writes) throw new Error(`${shape}: measured passes wrote: ${h.writes.slice(writes).join(', ')}`);
    const byCpu = blocks.toSorted((x, y) => x.cpuUs - y.cpuUs);
    const least = byCpu[0]?.cpuUs ?? 0;
    const median = byCpu[Math.floor(byCpu.length / 2)]?.cpuUs ?? 0;
    const medianWall = blocks.map((x) => x.wallUs).toSorted((x, y) => x - y)[Math.floor(blocks.length / 2)] ?? 0;
    const revisions = new Map<string, number>();
    for (const p of h.pods()) {
      const rev = p.metadata.labels?.['controller-revision-hash'] ?? '';
      revisions.set(rev, (revisions.get(rev) ?? 0) + 1);
    }
    console.log(
      `${shape.padEnd(8)} ${String(n).padStart(6)} pods: CPU per pass ${ms(least)} ms least, ${ms(median)} ms median (${((least / n) * 1000).toFixed(0)} ns per pod least), ${ms(medianWall)} ms wall median; ${repeat} × ${passes} passes; pods by revision ${[...revisions.values()].join(' / ')}`,
    );
  }
}
