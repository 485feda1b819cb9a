// The controller under benchmark: the real binary as a child process scoped to one namespace, with its metrics
// and health probes on free local ports and its log in .cluster/bench-logs/. Its request counters come from the
// metrics endpoint, its peak RSS from /proc (Linux; VmHWM).
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { KubeClient } from '../src/kube/client.ts';
import { EVENTS } from '../src/kube/resources.ts';
import { spawnLogged } from './child-process.ts';
import { ROOT, until } from './harness.ts';
import { freePort } from '../tools/localcluster/free-port.ts';
import { builtControllerMain, CONTROLLER_NODE_FLAGS } from '../tools/localcluster/controller-build.ts';

export interface ControllerProcess {
  readonly pid: number;
  readonly metricsUrl: string;
  readonly logFile: string;
  stop(): Promise<void>;
}

/** Starts the controller for `ns` and resolves once its caches synced (readyz): later requests are the workload's. */
export async function startController(kubeconfig: string, ns: string, extraArgs: readonly string[]): Promise<ControllerProcess> {
  const logDir = path.join(ROOT, '.cluster', 'bench-logs');
  mkdirSync(logDir, { recursive: true });
  const logFile = path.join(logDir, `controller-${ns}.log`);
  const metricsPort = await freePort();
  const probePort = await freePort();
  const { proc, stop } = spawnLogged(
    [
      // bin/cloneset-controller's node flags and dist/main.js: the benchmark measures the controller as it is run
      // ($BENCH_NODE_FLAGS adds more, for experiments).
      ...CONTROLLER_NODE_FLAGS,
      ...(process.env['BENCH_NODE_FLAGS'] ?? '').split(' ').filter((f) => f !== ''),
      builtControllerMain(),
      '--kubeconfig',
      kubeconfig,
      '-n',
      ns,
      `--metrics-bind-address=127.0.0.1:${metricsPort}`,
      `--health-probe-bind-address=127.0.0.1:${probePort}`,
      '--webhook-port=0',
      '--log-level=info',
      ...extraArgs,
    ],
    logFile,
  );
  if (proc.pid === undefined) throw new Error('the controller did not start');
  const readyzUrl = `http://127.0.0.1:${probePort}/readyz`;
  try {
    await until(
      'the controller caches to sync',
      () =>
        fetch(readyzUrl).then(
          (r) => (r.ok ? true : undefined),
          () => undefined,
        ),
      // a 100 000-pod cache takes a while to list on a loaded machine; the time is measured by the caller
      300_000,
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return { pid: proc.pid, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, logFile, stop };
}

/**
 * rest_client_requests_total by HTTP method, summed over codes and hosts (GET = gets, lists and watches; a metric
 * without labels counts as "all"), plus reconciles as "#reconciles" and the PUTs answered 409 Conflict as "#PUT 409"
 * (the controller's only PUTs are status and revision writes).
 */
export async function requestCounters(metricsUrl: string): Promise<Map<string, number>> {
  const body = await scrape(metricsUrl);
  const counts = new Map<string, number>();
  for (const m of body.matchAll(/^rest_client_requests_total(?:\{([^}]*)\})? (\d+)/gm)) {
    const method = /(?:method|verb)="(\w+)"/.exec(m[1] ?? '')?.[1] ?? 'all';
    counts.set(method, (counts.get(method) ?? 0) + Number(m[2]));
    if (method === 'PUT' && /code="409"/.test(m[1] ?? '')) counts.set('#PUT 409', (counts.get('#PUT 409') ?? 0) + Number(m[2]));
  }
  if (/^controller_runtime_reconcile_total[{ ]/m.test(body)) counts.set('#reconciles', cloneSetReconciles(body));
  return counts;
}

/**
 * controller_runtime_reconcile_total of the CloneSet controller: ours has no other, but Kruise's manager
 * (bench:scale --kruise) runs all its controllers, each with its own `controller` label.
 */
export function cloneSetReconciles(body: string): number {
  let n = 0;
  for (const m of body.matchAll(/^controller_runtime_reconcile_total\{[^}]*controller="cloneset-controller"[^}]*\} (\d+)$/gm)) n += Number(m[1]);
  return n;
}

/** The sum of a metric over all its label sets (e.g. controller_runtime_reconcile_total over its `result`s). */
export function sumOf(body: string, name: string): number {
  let n = 0;
  for (const m of body.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+(?:\\.\\d+)?(?:e[+-]?\\d+)?)$`, 'gm'))) n += Number(m[1]);
  return n;
}

/** The counters that grew from `before` to `after`, by how much. */
export function diffCounts(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  const d = new Map<string, number>();
  for (const [k, n] of after) if (n - (before.get(k) ?? 0) > 0) d.set(k, n - (before.get(k) ?? 0));
  return d;
}

export interface RequestSummary {
  readonly total: number;
  /** "<total> (<verb> <n>, …)", largest first */
  readonly text: string;
}

/** The request counters (not "#…" ones) as a total and a by-method text. */
export function requestSummary(c: Map<string, number>): RequestSummary {
  const verbs = [...c.entries()].filter(([k]) => !k.startsWith('#'));
  const total = verbs.reduce((a, [, n]) => a + n, 0);
  const parts = verbs.sort((a, b) => b[1] - a[1]).map(([v, n]) => `${v} ${n}`);
  return { total, text: `${total} (${parts.join(', ')})` };
}

/** The process's resident memory now (VmRSS), or why it is unknown. */
export const rssMiB = (pid: number): string => statusMiB(pid, 'VmRSS');

/** The process's peak resident set size so far (VmHWM), or why it is unknown. */
export const peakRssMiB = (pid: number): string => statusMiB(pid, 'VmHWM');

function statusMiB(pid: number, field: 'VmRSS' | 'VmHWM'): string {
  const status = `/proc/${pid}/status`;
  if (!existsSync(status)) return 'n/a (no /proc)';
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(status, 'utf8'));
  return m === null ? 'n/a' : `${(Number(m[1]) / 1024).toFixed(0)} MiB`;
}

/**
 * The controller's event writes in `ns` so far, from the Events themselves: one POST per Event object, one PATCH
 * per repetition (`count` − 1). The benchmarks subtract them to show the requests spent on pods and CloneSets.
 */
export async function eventWrites(client: KubeClient, ns: string): Promise<{ readonly posts: number; readonly patches: number }> {
  const { items } = await client.listAll<{ count?: number; source?: { component?: string } }>(EVENTS, ns);
  const ours = items.filter((e) => e.source?.component === 'cloneset-controller');
  return { posts: ours.length, patches: ours.reduce((n, e) => n + Math.max(0, (e.count ?? 1) - 1), 0) };
}

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s on every common kernel build. */
const CLOCK_TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) the process has used so far; NaN without /proc. */
export function processCpuSeconds(pid: number): number {
  const file = `/proc/${pid}/stat`;
  if (!existsSync(file)) return Number.NaN;
  // Fields after the command name (which may contain spaces): utime is field 14, stime 15.
  const stat = readFileSync(file, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/**
 * The controller's /metrics text. A scrape that fails (a connection reset on a machine loaded far past its cores)
 * is tried again, up to 3 times 1 s apart: one lost scrape must not end a run of half an hour.
 */
export async function scrape(metricsUrl: string): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await (await fetch(metricsUrl)).text();
    } catch (e) {
      if (attempt >= 3) throw e;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
