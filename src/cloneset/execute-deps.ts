// ExecuteDeps: what the executor's writers (execute.ts, execute-scale.ts, execute-pod.ts) need. Its own module so
// that the writers do not import execute.ts back for it.
import type { EventRecorder } from '../runtime/events.ts';
import type { ResourceVersionExpectations, ScaleExpectations } from '../runtime/expectations.ts';
import type { Ports } from './ports.ts';

export interface ExecuteDeps {
  readonly ports: Ports;
  readonly scaleExpectations: ScaleExpectations;
  readonly rvExpectations: ResourceVersionExpectations;
  readonly recorder: EventRecorder;
  readonly nowMs: () => number;
  /** Waits between resends of a create whose answer was lost (execute-scale.ts); default a real timer. */
  readonly sleep?: ((ms: number, signal?: AbortSignal) => Promise<void>) | undefined;
  /** Aborts when this replica stops or loses its lease: no further write starts. */
  readonly signal?: AbortSignal | undefined;
}
