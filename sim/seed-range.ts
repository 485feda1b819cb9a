// Runs a range of seeds and collects what a test or a summary needs: the failing seeds with a one-line
// reproduction each, and the totals.
import { FAULT_KINDS, faultCounts, type FaultKind } from './faults.ts';
import { runSeed } from './harness.ts';

export interface RangeResult {
  readonly seeds: number;
  readonly events: number;
  readonly faults: Record<FaultKind, number>;
  /** One line per failing seed: the first violation and how to reproduce it. */
  readonly failures: readonly string[];
}

export async function runSeedRange(from: number, count: number): Promise<RangeResult> {
  const faults = faultCounts();
  const failures: string[] = [];
  let events = 0;
  for (let seed = from; seed < from + count; seed++) {
    const r = await runSeed({ seed });
    events += r.events;
    for (const k of FAULT_KINDS) faults[k] += r.faults[k];
    const first = r.violations[0];
    if (first !== undefined) failures.push(`seed ${seed}: ${first.invariant}: ${first.message} — reproduce: npm run sim -- --seed ${seed} --trace`);
  }
  return { seeds: count, events, faults, failures };
}
