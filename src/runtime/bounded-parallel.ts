// runBounded: runs tasks with at most `limit` in flight, in start order, and starts no new task after the first
// failure (the ones in flight finish). Used by the executor to write to different pods at the same time while
// the client's QPS limiter still paces the requests.

export interface BoundedResult<T> {
  readonly results: readonly T[];
  /** The first error thrown, in start order of the failing tasks. */
  readonly error?: unknown;
}

export async function runBounded<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<BoundedResult<T>> {
  const results: T[] = [];
  let next = 0;
  let failure: { readonly index: number; readonly error: unknown } | undefined;
  const record = (index: number, error: unknown): void => {
    if (failure === undefined || index < failure.index) failure = { index, error };
  };
  const failed = (): boolean => failure !== undefined;
  const worker = async (): Promise<void> => {
    while (!failed()) {
      const index = next++;
      const task = tasks[index];
      if (task === undefined) return;
      try {
        results.push(await task());
      } catch (error) {
        record(index, error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, tasks.length)) }, worker));
  const f: { readonly error: unknown } | undefined = failure;
  return f === undefined ? { results } : { results, error: f.error };
}
