// Warnings for API answers that repeat: conflicts (HTTP 409: another writer changes the same objects, or the cache is
// far behind) and throttling (HTTP 429: API Priority and Fairness turns requests away). One of either is routine and
// retried quietly; a run of them is what an on-call engineer needs to see, once a minute at most, not once a request.
import type { Logger } from 'pino';
import type { RequestMetrics } from './kube/client.ts';

const WINDOW_MS = 60_000;

interface Window {
  startMs: number;
  count: number;
  readonly byMethod: Map<string, number>;
  warned: boolean;
}

const ADVICE: Readonly<Record<string, { readonly threshold: number; readonly what: string; readonly advice: string }>> = {
  '409': { threshold: 5, what: '409 Conflict', advice: 'another writer changes the same objects, or the watch is far behind; each write is retried on a fresh read' },
  '429': {
    threshold: 3,
    what: '429 Too Many Requests',
    advice: 'the API server throttles this controller (API Priority and Fairness); requests are retried after their Retry-After',
  },
};

/** Passes every report on to `next`, and warns when 409s or 429s repeat within a minute. */
export function warnOnRepeatedAnswers(next: RequestMetrics, logger: Logger, now: () => number): RequestMetrics {
  const windows = new Map<string, Window>();
  return {
    request(r) {
      next.request(r);
      const rule = ADVICE[r.code];
      if (rule === undefined) return;
      const t = now();
      let w = windows.get(r.code);
      if (w === undefined || t - w.startMs >= WINDOW_MS) {
        w = { startMs: t, count: 0, byMethod: new Map(), warned: false };
        windows.set(r.code, w);
      }
      w.count++;
      w.byMethod.set(r.method, (w.byMethod.get(r.method) ?? 0) + 1);
      if (w.warned || w.count < rule.threshold) return;
      w.warned = true;
      logger.warn(
        { code: Number(r.code), count: w.count, byMethod: Object.fromEntries(w.byMethod), host: r.host },
        `the API server answered ${rule.what} ${w.count} times within a minute: ${rule.advice}`,
      );
    },
    retry(r) {
      next.retry(r);
    },
  };
}
