// Fixtures of the executor tests (execute-*.test.ts, inplace/execute.test.ts): the CloneSet the actions belong
// to, API errors as the client throws them, an event recorder that keeps what it was told, and executePlan bound
// to stub ports.
import { pino } from 'pino';
import type { CloneSet } from '../../api/cloneset.ts';
import { ApiError } from '../../kube/api-error.ts';
import type { KubeObject } from '../../kube/types.ts';
import type { FakeClock } from '../../runtime/clock.ts';
import { EventRecorder, type EventType } from '../../runtime/events.ts';
import { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.ts';
import { executePlan, type Outcome } from '../execute.ts';
import type { PlanAction, PlanPhase } from '../plan/actions.ts';
import type { Ports } from '../ports.ts';

export const cloneSet: CloneSet = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  metadata: { name: 'sample', namespace: 'ns', uid: 'uid-cs' },
  spec: { replicas: 1, selector: { matchLabels: { app: 'sample' } }, template: { metadata: { labels: { app: 'sample' } }, spec: { containers: [] } } },
};

/** An API error with a Status body whose message is `message` (the reason by default). */
export const apiError = (code: number, reason: string, message = reason): ApiError => new ApiError(code, { kind: 'Status', code, reason, message }, reason);

/** Keeps every event as "<type> <reason>: <message>" instead of writing it. */
export class SeenEvents extends EventRecorder {
  readonly seen: string[] = [];
  override event(_obj: KubeObject, type: EventType, reason: string, message: string): void {
    this.seen.push(`${type} ${reason}: ${message}`);
  }
}

export interface Executor {
  readonly recorder: SeenEvents;
  readonly scaleExpectations: ScaleExpectations;
  readonly rvExpectations: ResourceVersionExpectations;
  /** Pauses the executor asked for (resends of lost create answers): recorded, not waited. */
  readonly pauses: number[];
  /** executePlan for `cloneSet` (key ns/sample) in `phase`. */
  run(actions: PlanAction[]): Promise<Outcome>;
}

/** executePlan over the given stub ports (the others are empty objects: calling them fails the test). */
export function executorFor(clock: FakeClock, stubs: Partial<Ports>, phase: PlanPhase): Executor {
  const pauses: number[] = [];
  const sleeps = async (ms: number): Promise<void> => {
    pauses.push(ms);
  };
  const ports: Ports = {
    pods: stubs.pods ?? ({} as Ports['pods']),
    pvcs: stubs.pvcs ?? ({} as Ports['pvcs']),
    revisions: stubs.revisions ?? ({} as Ports['revisions']),
    cloneSets: stubs.cloneSets ?? ({} as Ports['cloneSets']),
  };
  const recorder = new SeenEvents({ sink: { create: async () => undefined, patch: async () => undefined }, clock, logger: pino({ level: 'silent' }) });
  const scaleExpectations = new ScaleExpectations(clock, 60_000);
  const rvExpectations = new ResourceVersionExpectations(clock, 60_000);
  const deps = { ports, scaleExpectations, rvExpectations, recorder, nowMs: () => clock.now(), sleep: sleeps };
  return { recorder, scaleExpectations, rvExpectations, pauses, run: (actions) => executePlan(cloneSet, 'ns/sample', phase, actions, deps) };
}
