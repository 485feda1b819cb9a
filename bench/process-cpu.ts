// The CPU of the whole test bed during a phase, by process: the control plane (etcd, kube-apiserver, kube-scheduler,
// kube-controller-manager), kwok standing in for the kubelets, the controller, the webhook, and this benchmark (its
// pod watch; during the limit also the limit's direct client).
//
// The control plane, kwok, our controller and webhook name the state dir on their command lines (their kubeconfig or
// data dir lives there), which is how they are found, as `npm run cluster -- down` finds them
// (tools/localcluster/processes.ts); a process that does not (Kruise's manager reads KUBECONFIG) is named by its pid.
// On a 2-core machine all of them share the cores, and a scale-up keeps both busy from the first create to the last
// Ready, for the controller and for the limit alike: the time to all Ready is then the test bed's CPU divided by
// the cores, and the ratio to the limit is how much more CPU the whole test bed spends on the controller's pods
// (docs/performance.md, "The distance to the limit is CPU").
import { availableParallelism } from 'node:os';
import { processesMentioning } from '../tools/localcluster/processes.ts';
import { processCpuSeconds } from './controller-process.ts';

/** CPU seconds used so far, by role (several processes of one role are summed). */
export type CpuByRole = ReadonlyMap<string, number>;

/** The benchmark's own process. */
export const BENCHMARK_ROLE = 'this benchmark';

/**
 * The role of a test-bed process from its executable and command line: the binary's name for the control plane,
 * kwok and Kruise's manager; `controller` or `webhook` for ours (both run dist/main.js under node).
 */
export function roleOf(exe: string, argv: readonly string[]): string {
  if (exe !== 'node') return exe;
  return argv.includes('webhook') ? 'webhook' : 'controller';
}

/**
 * The pids of the processes whose command line names `stateDir`, by role, with the benchmark itself and `known`
 * (pid → role: a process started without the state dir on its command line, such as Kruise's manager, which reads
 * its kubeconfig from the environment).
 */
export function testBedProcesses(stateDir: string, known: ReadonlyMap<number, string> = new Map()): ReadonlyMap<number, string> {
  const out = new Map<number, string>([[process.pid, BENCHMARK_ROLE], ...known]);
  for (const p of processesMentioning(`${stateDir}/`)) if (!out.has(p.pid)) out.set(p.pid, roleOf(p.exe, p.argv));
  return out;
}

/** A reading of every test-bed process's CPU, keyed by pid (a process that exits between two readings drops out). */
export interface CpuReading {
  readonly atMs: number;
  readonly byPid: ReadonlyMap<number, { readonly role: string; readonly seconds: number }>;
}

export function readCpu(stateDir: string, known?: ReadonlyMap<number, string>): CpuReading {
  const byPid = new Map<number, { role: string; seconds: number }>();
  for (const [pid, role] of testBedProcesses(stateDir, known)) {
    const seconds = processCpuSeconds(pid);
    if (Number.isFinite(seconds)) byPid.set(pid, { role, seconds });
  }
  return { atMs: Date.now(), byPid };
}

/** What the test bed spent between two readings. */
export interface CpuSpent {
  readonly wallMs: number;
  readonly byRole: CpuByRole;
}

/** CPU per role between two readings, over the processes present in both (the order of the roles: most first). */
export function cpuSpent(before: CpuReading, after: CpuReading): CpuSpent {
  const byRole = new Map<string, number>();
  for (const [pid, a] of after.byPid) {
    const b = before.byPid.get(pid);
    if (b === undefined) continue;
    byRole.set(a.role, (byRole.get(a.role) ?? 0) + Math.max(0, a.seconds - b.seconds));
  }
  return { wallMs: after.atMs - before.atMs, byRole: new Map([...byRole].sort((x, y) => y[1] - x[1])) };
}

const total = (s: CpuSpent): number => [...s.byRole.values()].reduce((a, b) => a + b, 0);

/**
 * Report lines: the test bed's CPU in the run and in the limit, how many of the machine's cores it kept busy, and
 * each role's share (the roles of the run first, then any only the limit had).
 */
export function cpuLines(run: CpuSpent, limit: CpuSpent, row: (label: string, value: string) => string, cores = availableParallelism()): string[] {
  const busy = (s: CpuSpent): string => (s.wallMs > 0 ? (total(s) / (s.wallMs / 1000)).toFixed(2) : 'n/a');
  const sec = (v: number | undefined): string => (v === undefined ? '-' : v.toFixed(1));
  const roles = [...new Set([...run.byRole.keys(), ...limit.byRole.keys()])];
  const ratio = total(limit) > 0 ? `; ${(total(run) / total(limit)).toFixed(2)}× the limit's CPU` : '';
  return [
    row(
      'test bed CPU (this run / the limit)',
      `${sec(total(run))} / ${sec(total(limit))} s in ${sec(run.wallMs / 1000)} / ${sec(limit.wallMs / 1000)} s (${busy(run)} / ${busy(limit)} of ${String(cores)} cores busy${ratio})`,
    ),
    ...roles.map((role) => row(`  ${role}`, `${sec(run.byRole.get(role))} / ${sec(limit.byRole.get(role))} s`)),
  ];
}
