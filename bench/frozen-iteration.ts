// What a loop over a frozen array costs in this Node, against the same loop over a plain one: the informer caches
// deep-freeze every object (src/runtime/store.ts), so a pod's conditions, readiness gates and containers are
// frozen arrays, and the planner searches them for every pod of every pass (podCondition, hasReadinessGate in
// src/cloneset/plan/pod-predicates.ts). No cluster, no controller:
//
//   bash hack/node.sh bench/frozen-iteration.ts [--arrays 10000] [--rounds 300]
//
// For each of for…of and an indexed loop, over plain and frozen arrays of five pod conditions: the time of one
// search for `Ready` (the last element) and the young-generation collections (scavenges) during the measured
// rounds, which count what the loop allocates. Each variant has its own function, so that none sees another's
// arrays. On Node 24 (V8 13) for…of over a frozen array allocates an iterator result per element (docs/performance.md,
// "Frozen arrays").
import { PerformanceObserver } from 'node:perf_hooks';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { arrays: { type: 'string', default: '10000' }, rounds: { type: 'string', default: '300' } } });
const arrays = Number(values.arrays);
const rounds = Number(values.rounds);

interface Condition {
  readonly type: string;
  readonly status: string;
}

const conditions = (): Condition[] => [
  { type: 'PodScheduled', status: 'True' },
  { type: 'Initialized', status: 'True' },
  { type: 'ContainersReady', status: 'True' },
  { type: 'InPlaceUpdateReady', status: 'True' },
  { type: 'Ready', status: 'True' },
];

function forOfPlain(cs: readonly Condition[], type: string): Condition | undefined {
  for (const c of cs) if (c.type === type) return c;
  return undefined;
}
function forOfFrozen(cs: readonly Condition[], type: string): Condition | undefined {
  for (const c of cs) if (c.type === type) return c;
  return undefined;
}
function indexedPlain(cs: readonly Condition[], type: string): Condition | undefined {
  for (let i = 0; i < cs.length; i++) if (cs[i]?.type === type) return cs[i];
  return undefined;
}
function indexedFrozen(cs: readonly Condition[], type: string): Condition | undefined {
  for (let i = 0; i < cs.length; i++) if (cs[i]?.type === type) return cs[i];
  return undefined;
}

let scavenges = 0;
const observer = new PerformanceObserver((list) => {
  // A gc entry's detail.kind is NODE_PERFORMANCE_GC_MINOR (1) for a scavenge.
  for (const e of list.getEntries()) if (((e as { detail?: { kind?: number } }).detail?.kind ?? 0) === 1) scavenges++;
});
observer.observe({ entryTypes: ['gc'] });

async function measure(name: string, frozen: boolean, find: (cs: readonly Condition[], type: string) => Condition | undefined): Promise<void> {
  const list = Array.from({ length: arrays }, () => (frozen ? Object.freeze(conditions().map((c) => Object.freeze(c))) : conditions()));
  let found = 0;
  for (let w = 0; w < 50; w++) for (const cs of list) if (find(cs, 'Ready') !== undefined) found++;
  // GC entries arrive asynchronously: let the warm-up's settle before counting.
  await new Promise((r) => setTimeout(r, 50));
  scavenges = 0;
  const start = process.hrtime.bigint();
  for (let r = 0; r < rounds; r++) for (let i = 0; i < list.length; i++) if (find(list[i] ?? [], 'Ready') !== undefined) found++;
  const ns = Number(process.hrtime.bigint() - start) / rounds / arrays;
  await new Promise((r) => setTimeout(r, 50));
  if (found !== (50 + rounds) * arrays) throw new Error(`${name}: found ${found}`);
  console.log(`${name.padEnd(24)} ${ns.toFixed(1).padStart(6)} ns per search   ${String(scavenges).padStart(4)} scavenges`);
}

console.log(`${arrays} arrays of 5 conditions, ${rounds} rounds of a search for the last one, ${process.version}`);
await measure('for…of, plain arrays', false, forOfPlain);
await measure('for…of, frozen arrays', true, forOfFrozen);
await measure('indexed, plain arrays', false, indexedPlain);
await measure('indexed, frozen arrays', true, indexedFrozen);
observer.disconnect();
