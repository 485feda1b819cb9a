// Readiness beside a long scale-up (docs/features.md#reconcile-pass): while a pass creates a slow-start scale-up
// of more than READINESS_BESIDE_MIN_CREATES pods, every READINESS_BESIDE_INTERVAL_MS the pods' readiness writes are
// planned again from the cache (plan/index.ts `planReadinessBesideScaleUp`, pure) and executed through the same
// executor and write policy, without waiting for the earlier writes' answers (at most
// READINESS_BESIDE_MAX_IN_FLIGHT in flight). Without it a pod scheduled during a 4 096-pod batch waits for the batch's last
// answer, and then for the next pass, before it can become Ready: at 1 000 pods a scheduled pod waited 10 s (p50)
// for its readiness write, against 0.5 s for a client that writes it right after the create (docs/performance.md).
//
// Still one writer per CloneSet: this runs inside the pass that holds the CloneSet's key, and stops (waiting for
// its last write) before the pass goes on to status. A pod whose last write of ours the cache does not show yet
// is skipped, and each pod is written at most once per pass: the cache lags, the write must not repeat.
import type { Logger } from 'pino';
import type { CloneSet } from '../api/cloneset.ts';
import { errorText } from '../kube/api-error.ts';
import type { Pod } from '../kube/types.ts';
import type { Clock, TimerHandle } from '../runtime/clock.ts';
import type { ResourceVersionExpectations } from '../runtime/expectations.ts';
import type { PlanAction } from './plan/actions.ts';
import { POD_WRITE_CONCURRENCY, type Outcome } from './execute.ts';

/** A scale-up with more creates than this (one slow-start concurrency's worth) gets readiness writes beside it. */
export const READINESS_BESIDE_MIN_CREATES = 64;
/** How often the readiness writes are planned again while the creates go on. */
export const READINESS_BESIDE_INTERVAL_MS = 500;
/** Readiness writes beside one scale-up in flight at once: as many as the executor's pod writes of a pass. */
export const READINESS_BESIDE_MAX_IN_FLIGHT = POD_WRITE_CONCURRENCY;

export interface ReadinessBesideDeps {
  readonly clock: Clock;
  readonly rvExpectations: ResourceVersionExpectations;
  readonly logger: Logger;
  /** The CloneSet's pods as the cache shows them now. */
  readonly pods: () => readonly Pod[];
  /** The pure planner: the readiness writes for these pods. */
  readonly plan: (pods: readonly Pod[]) => readonly PlanAction[];
  /** The executor (its write policy, fencing and expectations included). */
  readonly execute: (actions: readonly PlanAction[]) => Promise<Outcome>;
}

export interface ReadinessBeside {
  /** Stops planning; resolves once the writes in flight are answered. The number of writes made. */
  stop(): Promise<number>;
}

/** Whether the plan's scale-up is long enough to write readiness beside it. */
export function wantsReadinessBeside(actions: readonly PlanAction[]): boolean {
  return actions.some((a) => a.kind === 'CreatePods' && a.pods.length > READINESS_BESIDE_MIN_CREATES);
}

export function startReadinessBeside(cloneSet: CloneSet, d: ReadinessBesideDeps): ReadinessBeside {
  const key = `${cloneSet.metadata.namespace ?? ''}/${cloneSet.metadata.name ?? ''}`;
  const written = new Set<string>();
  let writes = 0;
  let stopped = false;
  let timer: TimerHandle | undefined;
  // Writes in flight: each interval plans and sends the pods that are new since, without waiting for the earlier
  // writes' answers (a pipeline, as the limit's client writes each pod as soon as it is scheduled). Waiting for a
  // batch to be answered before planning the next held a pod scheduled meanwhile for that answer too: its write
  // went out after 1.5–2 answer times instead of one (15.4 s after scheduling, p50, at 1 000 pods on a loaded API
  // server, against 7.3 s for the limit's client: docs/performance.md, "The distance to the limit").
  const pending = new Set<Promise<void>>();
  let inFlight = 0;

  const send = (actions: readonly PlanAction[]): void => {
    inFlight += actions.length;
    const sent: Promise<void> = d
      .execute(actions)
      .then((outcome) => {
        writes += outcome.writes;
        // Not a failure of the pass: whatever did not happen, the next pass's refresh plans again.
        if (outcome.failure !== undefined)
          d.logger.info({ cloneset: key, err: errorText(outcome.failure.error) }, 'a readiness write beside the scale-up failed; the next pass retries it');
      })
      .catch((e: unknown) => {
        d.logger.warn({ cloneset: key, err: errorText(e) }, 'readiness writes beside the scale-up failed');
      })
      .finally(() => {
        inFlight -= actions.length;
        pending.delete(sent);
      });
    pending.add(sent);
  };
  const planAndSend = (): void => {
    const room = READINESS_BESIDE_MAX_IN_FLIGHT - inFlight;
    if (room <= 0) return;
    // Only pods the cache shows as we last wrote them, and not already written by this pass.
    const pods = d.pods().filter((p) => {
      const uid = p.metadata.uid ?? '';
      return !written.has(uid) && d.rvExpectations.isSatisfied(uid, p.metadata.resourceVersion ?? '').satisfied;
    });
    const actions = d.plan(pods).slice(0, room);
    if (actions.length === 0) return;
    for (const a of actions) if ('pod' in a) written.add(a.pod.uid);
    send(actions);
  };
  const schedule = (): void => {
    timer = d.clock.setTimeout(() => {
      if (stopped) return;
      try {
        planAndSend();
      } catch (e) {
        d.logger.warn({ cloneset: key, err: errorText(e) }, 'readiness writes beside the scale-up: planning failed; trying again at the next interval');
      }
      schedule();
    }, READINESS_BESIDE_INTERVAL_MS);
  };
  schedule();
  return {
    async stop(): Promise<number> {
      stopped = true;
      timer?.cancel();
      await Promise.all([...pending]);
      return writes;
    },
  };
}
