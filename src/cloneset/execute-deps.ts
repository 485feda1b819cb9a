// ExecuteDeps: what the executor's writers (execute.ts, execute-scale.ts, execute-pod.ts, execute-cloneset.ts)
// need. Its own module so that the writers do not import execute.ts back for it.
import type { Logger } from 'pino';
import type { EventRecorder } from '../runtime/events.ts';
import type { ResourceVersionExpectations, ScaleExpectations } from '../runtime/expectations.ts';
import type { Ports } from './ports.ts';

export interface ExecuteDeps {
  readonly ports: Ports;
  readonly scaleExpectations: ScaleExpectations;
  readonly rvExpectations: ResourceVersionExpectations;
  readonly recorder: EventRecorder;
  /** Wall-clock epoch milliseconds: only for timestamps written into objects. */
  readonly nowMs: () => number;
  /** Waits on the controller's (monotonic) clock, resolving early once `signal` aborts: the pauses between resends of a lost answer (execute-scale.ts). */
  readonly sleep: (ms: number) => Promise<void>;
  /** Aborts when this replica stops or loses its lease: no further write starts. */
  readonly signal?: AbortSignal | undefined;
  /** The per-write log line (write-policy.ts); silent when absent. */
  readonly logger?: Logger | undefined;
  /** `<CloneSet uid>/<revision>` whose ImagePullJobs this process already deleted (a restart deletes once more, harmlessly). */
  readonly cleanedPreDownloads?: Set<string> | undefined;
}
