// Start-up progress lines ("starting etcd… ok (1.2s)") written to a stream.
export interface Progress {
  write(chunk: string): unknown;
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

export async function step<T>(progress: Progress, label: string, fn: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  progress.write(`${label}… `);
  try {
    const v = await fn();
    progress.write(`ok (${seconds(Date.now() - t0)})\n`);
    return v;
  } catch (e) {
    progress.write(`FAILED (${seconds(Date.now() - t0)})\n`);
    throw e;
  }
}

/** Like step, for steps running in parallel: the whole line is written at the end. */
export async function stepLine<T>(progress: Progress, label: string, fn: () => Promise<T>, cancelled?: AbortSignal): Promise<T> {
  const t0 = Date.now();
  try {
    const v = await fn();
    progress.write(`${label}… ok (${seconds(Date.now() - t0)})\n`);
    return v;
  } catch (e) {
    // when a sibling step failed first, this one was only cancelled: say nothing
    if (cancelled?.aborted !== true || (e instanceof Error && e.message !== 'aborted')) {
      progress.write(`${label}… FAILED (${seconds(Date.now() - t0)})\n`);
    }
    throw e;
  }
}
