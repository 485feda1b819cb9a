// The faults of one run, drawn from its seed. Per-request faults (lost answers, 409s, 429s) are decided as each
// request arrives, with rates drawn once per run; episodes (watch drops and stalls, slow caches, wall-clock
// steps, restarts, pauses, compaction, an etcd restore) are placed at random times of the fault window.
import type { Rng } from './random.ts';

export const FAULT_KINDS = [
  'lostCreateAnswer',
  'lostDeleteAnswer',
  'lostPatchAnswer',
  'lostStatusAnswer',
  'conflict',
  'throttle',
  'watchDrop',
  'watchStall',
  'slowCache',
  'compaction',
  'wallStep',
  'restart',
  'pause',
  'etcdRestore',
  'readinessFlap',
  'containerRestart',
  'deleteCoincidence',
  'queuedPause',
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number];

export type Episode =
  | { readonly kind: 'watchDrop'; readonly at: number }
  | { readonly kind: 'watchStall'; readonly at: number; readonly forMs: number }
  | { readonly kind: 'slowCache'; readonly at: number; readonly forMs: number; readonly delayMs: number }
  | { readonly kind: 'compaction'; readonly at: number }
  | { readonly kind: 'wallStep'; readonly at: number; readonly byMs: number; readonly target: 'leader' | 'standby' | 'apiserver' }
  | { readonly kind: 'restart'; readonly at: number; readonly downMs: number }
  | { readonly kind: 'pause'; readonly at: number; readonly forMs: number }
  | { readonly kind: 'etcdRestore'; readonly at: number; readonly backMs: number };

export interface FaultPlan {
  /** Per-request probabilities while the fault window is open. */
  readonly rates: {
    readonly lostAnswer: number;
    readonly conflict: number;
    readonly throttle: number;
    /** Per pod that turns Ready: the chance that the kubelet later flaps it (a failed readiness probe, a container restart). */
    readonly nodeFlap: number;
    /** How long after turning Ready a pod flaps, at most (a flaky probe flaps again within a second or two). */
    readonly nodeFlapWithinMs: number;
    /**
     * Per pod DELETE (BUGGIFY, in the manner of FoundationDB): the chance that three faults coincide on it — a
     * readiness probe of another Ready pod of its CloneSet failed just before, the answer is lost, and the watch
     * cache stalls, so the pass that follows sees the other pod ranked first but not yet the deletion.
     */
    readonly deleteCoincidence: number;
  };
  readonly episodes: readonly Episode[];
  /** No fault starts after this (virtual ms); convergence is measured from the end of the last one. */
  readonly windowEndMs: number;
}

export function faultCounts(): Record<FaultKind, number> {
  return Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
}

/** A run's faults: most runs get a few kinds at a time, so that coincidences of two faults are common. */
export function drawFaults(rng: Rng, windowEndMs: number): FaultPlan {
  const on = (p: number): boolean => rng.chance(p);
  const rates = {
    lostAnswer: on(0.6) ? rng.pick([0.02, 0.05, 0.1, 0.2]) : 0,
    conflict: on(0.4) ? rng.pick([0.05, 0.1, 0.2]) : 0,
    throttle: on(0.4) ? rng.pick([0.02, 0.05, 0.1]) : 0,
  };
  const episodes: Episode[] = [];
  const at = (): number => rng.int(1_000, windowEndMs);
  const n = (p: number, max: number): number => (on(p) ? rng.int(1, max) : 0);
  for (let i = n(0.4, 3); i > 0; i--) episodes.push({ kind: 'watchDrop', at: at() });
  for (let i = n(0.3, 2); i > 0; i--) episodes.push({ kind: 'watchStall', at: at(), forMs: rng.int(1_000, 15_000) });
  for (let i = n(0.5, 2); i > 0; i--) episodes.push({ kind: 'slowCache', at: at(), forMs: rng.int(2_000, 15_000), delayMs: rng.int(200, 8_000) });
  for (let i = n(0.2, 2); i > 0; i--) episodes.push({ kind: 'compaction', at: at() });
  for (let i = n(0.35, 2); i > 0; i--) {
    episodes.push({
      kind: 'wallStep',
      at: at(),
      byMs: rng.pick([-3_600_000, -600_000, 600_000, 3_600_000, 86_400_000]),
      target: rng.pick(['leader', 'leader', 'standby', 'apiserver'] as const),
    });
  }
  for (let i = n(0.25, 2); i > 0; i--) episodes.push({ kind: 'restart', at: at(), downMs: rng.int(0, 10_000) });
  for (let i = n(0.25, 1); i > 0; i--) episodes.push({ kind: 'pause', at: at(), forMs: rng.int(5_000, 25_000) });
  if (on(0.1)) episodes.push({ kind: 'etcdRestore', at: at(), backMs: rng.int(2_000, 30_000) });
  episodes.sort((a, b) => a.at - b.at);
  // Drawn last, so that the draws above stay what they were for a seed.
  const flaps = rng.pick(['none', 'none', 'occasional', 'occasional', 'flaky'] as const);
  const nodeFlap = flaps === 'none' ? 0 : flaps === 'occasional' ? rng.pick([0.2, 0.5]) : 1;
  const nodeFlapWithinMs = flaps === 'flaky' ? 2_000 : 6_000;
  return { rates: { ...rates, nodeFlap, nodeFlapWithinMs, deleteCoincidence: 0 }, episodes, windowEndMs };
}

/**
 * The coincidence rate of a run, from a generator of its own (so the other draws of a seed stay what they were):
 * in half the runs with lost answers, a third of the pod deletes.
 */
export function drawCoincidences(rng: Rng, plan: FaultPlan): FaultPlan {
  const deleteCoincidence = plan.rates.lostAnswer > 0 && rng.chance(0.5) ? 0.3 : 0;
  return { ...plan, rates: { ...plan.rates, deleteCoincidence } };
}
