/**
 * Slow-start batching for writes (Kubernetes ReplicaSet `slowStartBatch`, Kruise `DoItSlowly`).
 *
 * Calls `fn(0) … fn(count-1)` in batches of `initialBatchSize`, then twice the previous size (1, 2, 4, 8 …,
 * the last batch clipped to what remains); the calls of one batch run concurrently, at most `concurrency` at a
 * time (a batch of 4096 creates all in flight at once queues thousands of requests in the client, where they time
 * out and are sent again; every call of the batch is still made before the batch ends). After a batch in which
 * any call failed no further batch starts, so a systematic failure (quota, webhook denial) costs few calls.
 * `skipped` counts the calls never attempted: the caller lowers its expectations for exactly those.
 * No batch starts once `signal` has aborted (this replica is stopping or lost its lease).
 */

export interface SlowStartResult {
  readonly succeeded: number;
  readonly failed: number;
  /** Calls never attempted because an earlier batch failed (`succeeded + failed + skipped === count`). */
  readonly skipped: number;
  /** The first failure, in completion order. */
  readonly error?: unknown;
}

export async function slowStartBatch(
  count: number,
  initialBatchSize: number,
  fn: (i: number) => Promise<void>,
  signal?: AbortSignal,
  concurrency = Number.POSITIVE_INFINITY,
): Promise<SlowStartResult> {
  const total = Math.max(0, Math.floor(count));
  let next = 0;
  let succeeded = 0;
  let failed = 0;
  let firstError: { readonly error: unknown } | undefined;
  for (let size = Math.min(total, Math.max(1, Math.floor(initialBatchSize))); size > 0; ) {
    if (signal?.aborted === true) {
      return {
        succeeded,
        failed,
        skipped: total - next,
        error: firstError?.error ?? new Error('stopped before all batches ran: this replica is stopping or lost its leader lease'),
      };
    }
    const first = next;
    const end = next + size;
    next = end;
    let cursor = first;
    const worker = async (): Promise<void> => {
      for (let i = cursor++; i < end; i = cursor++) {
        try {
          await fn(i);
          succeeded++;
        } catch (e: unknown) {
          failed++;
          firstError ??= { error: e };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(size, concurrency)) }, worker));
    if (firstError !== undefined) return { succeeded, failed, skipped: total - next, error: firstError.error };
    size = Math.min(2 * size, total - next);
  }
  return { succeeded, failed, skipped: 0 };
}
