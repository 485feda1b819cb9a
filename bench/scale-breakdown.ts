// Where the time of a scale-out goes, from the benchmark's own pod watch and the controller's /metrics.
//
// The watch stamps, per pod, the moment it first saw each step: the pod exists (ADDED: the controller's create
// was answered), it is scheduled (spec.nodeName), kwok reports it Running, the controller's second write landed
// (InPlaceUpdateReady=True) and it is Ready. The stamps are the benchmark's receive times, so each step includes
// the watch's delivery; the limit (limit.ts) is watched the same way.
//
// From them: the creation timeline (when 50 % / 90 % / all of the pods existed, and the pauses longer than
// STALL_MS with none created while some were still missing: the controller waiting between passes — for its
// expectations (the ADDED events of its own creates), its work queue, or the next slow-start batch), and the
// per-pod latency of each step (p50 / p99). From the controller's metrics: time its work items waited in the
// queue, the time its reconciles ran, and the mean latency of its pod creates and status patches (the client's
// own rate limiter included: the request is timed from the call).
import type { Pod } from '../src/kube/types.ts';
import { scrape, sumOf } from './controller-process.ts';

/** A pause in the creations longer than this counts as a stall. */
export const STALL_MS = 200;

interface PodSteps {
  added?: number;
  scheduled?: number;
  running?: number;
  gate?: number;
  ready?: number;
}

const condTrue = (p: Pod, type: string): boolean => (p.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');

/** Per-pod step stamps of the pods the watch sees, relative to `start()`. */
export class ScaleTimeline {
  private readonly steps = new Map<string, PodSteps>();
  private t0 = 0;

  /** The scale-out begins now: later stamps count from here. */
  start(): void {
    this.t0 = Date.now();
    this.steps.clear();
  }

  /** Feeds one pod event (the view's watch). */
  observe(type: string, pod: Pod): void {
    if (this.t0 === 0 || type === 'DELETED') return;
    const name = pod.metadata.name ?? '';
    let s = this.steps.get(name);
    if (s === undefined) {
      s = {};
      this.steps.set(name, s);
    }
    const now = Date.now() - this.t0;
    s.added ??= now;
    if (s.scheduled === undefined && (pod.spec.nodeName ?? '') !== '') s.scheduled = now;
    if (s.running === undefined && pod.status?.phase === 'Running') s.running = now;
    if (s.gate === undefined && condTrue(pod, 'InPlaceUpdateReady')) s.gate = now;
    if (s.ready === undefined && condTrue(pod, 'Ready')) s.ready = now;
  }

  /** Report lines (ms since start). */
  lines(row: (label: string, value: string) => string): string[] {
    const all = [...this.steps.values()];
    const added = all.map((s) => s.added ?? 0).sort((a, b) => a - b);
    const n = added.length;
    if (n === 0) return [];
    const at = (q: number): number => added[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))] ?? 0;
    let stalls = 0;
    let stalledMs = 0;
    for (let i = 1; i < n; i++) {
      const gap = (added[i] ?? 0) - (added[i - 1] ?? 0);
      if (gap > STALL_MS) {
        stalls++;
        stalledMs += gap;
      }
    }
    const lat = (from: keyof PodSteps, to: keyof PodSteps): string => {
      const d = all.flatMap((s) => (s[from] !== undefined && s[to] !== undefined ? [(s[to] ?? 0) - (s[from] ?? 0)] : [])).sort((a, b) => a - b);
      if (d.length === 0) return 'n/a';
      const p = (q: number): string => ms(d[Math.min(d.length - 1, Math.ceil(q * d.length) - 1)] ?? 0);
      return `p50 ${p(0.5)}, p99 ${p(0.99)}, mean ${ms(d.reduce((a, b) => a + b, 0) / d.length)}`;
    };
    const last = (k: keyof PodSteps): string => ms(Math.max(...all.map((s) => s[k] ?? 0)));
    return [
      row('pods created: first / 50 % / 90 % / all', `${ms(added[0] ?? 0)} / ${ms(at(0.5))} / ${ms(at(0.9))} / ${ms(at(1))}`),
      row(`creation stalls > ${STALL_MS} ms`, `${stalls}, ${ms(stalledMs)} in all`),
      row('last pod scheduled / Running', `${last('scheduled')} / ${last('running')}`),
      row('last InPlaceUpdateReady / Ready', `${last('gate')} / ${last('ready')}`),
      row('per pod: created → scheduled', lat('added', 'scheduled')),
      row('per pod: scheduled → Running', lat('scheduled', 'running')),
      row('per pod: scheduled → InPlaceUpdateReady', lat('scheduled', 'gate')),
      row('per pod: created → Ready', lat('added', 'ready')),
    ];
  }
}

const ms = (v: number): string => (v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v)} ms`);

/** The controller-side sums the breakdown reads from /metrics. */
export interface ControllerTimes {
  readonly queueWaitSeconds: number;
  readonly reconcileSeconds: number;
  readonly postSeconds: number;
  readonly posts: number;
  readonly patchSeconds: number;
  readonly patches: number;
}

export async function controllerTimes(metricsUrl: string): Promise<ControllerTimes> {
  const body = await scrape(metricsUrl);
  const verb = (v: string, what: 'sum' | 'count'): number => {
    let n = 0;
    for (const m of body.matchAll(new RegExp(`^rest_client_request_duration_seconds_${what}\\{[^}]*verb="${v}"[^}]*\\} (\\S+)$`, 'gm'))) n += Number(m[1]);
    return n;
  };
  return {
    queueWaitSeconds: sumOf(body, 'workqueue_queue_duration_seconds_sum'),
    reconcileSeconds: sumOf(body, 'controller_runtime_reconcile_time_seconds_sum'),
    postSeconds: verb('POST', 'sum'),
    posts: verb('POST', 'count'),
    patchSeconds: verb('PATCH', 'sum'),
    patches: verb('PATCH', 'count'),
  };
}

/** Report lines: the controller's side of a phase, `after` minus `before`. */
export function controllerTimeLines(before: ControllerTimes, after: ControllerTimes, row: (label: string, value: string) => string): string[] {
  const d = (k: keyof ControllerTimes): number => after[k] - before[k];
  const mean = (s: number, c: number): string => (c > 0 ? ms((s / c) * 1000) : 'n/a');
  return [
    row('work items waiting in the queue', `${d('queueWaitSeconds').toFixed(1)} s in all`),
    row('reconciles running', `${d('reconcileSeconds').toFixed(1)} s in all`),
    row('POST / PATCH mean latency', `${mean(d('postSeconds'), d('posts'))} (${d('posts')}) / ${mean(d('patchSeconds'), d('patches'))} (${d('patches')})`),
  ];
}
