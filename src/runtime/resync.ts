// Periodic resync (controller-runtime's SyncPeriod; Kruise's --sync-period, default 10h): every key is enqueued
// again this often, whether or not an event arrived. The safety net under level-triggered reconciles: a wake-up
// that was lost (a filtered event, a dropped watch, a bug) costs at most one period, never "until something else
// happens". Timed on the monotonic clock: a wall-clock step neither fires nor delays it.
import type { Clock } from './clock.ts';

export function startResync(clock: Clock, periodMs: number, keys: () => readonly string[], enqueue: (key: string) => void, signal: AbortSignal): void {
  if (!(periodMs > 0) || signal.aborted) return;
  let timer = clock.setTimeout(function tick() {
    for (const key of keys()) enqueue(key);
    timer = clock.setTimeout(tick, periodMs);
  }, periodMs);
  signal.addEventListener('abort', () => timer.cancel(), { once: true });
}
