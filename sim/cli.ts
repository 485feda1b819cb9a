// npm run sim -- [--seeds N] [--from S] [--jobs J] [--stop-after F] | --seed S [--trace] [--logs]
// Runs seeds on J worker threads (each seed alone on virtual time, so the split changes nothing in a run),
// shows progress, prints the figures, and for each failing seed a one-line reproduction. Exit status 1 when
// any seed violated an invariant.
import { availableParallelism } from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { FAULT_KINDS, faultCounts, type FaultKind } from './faults.ts';
// The harness (and with it the whole controller) is imported where seeds run: the threads that only hand out
// seeds and count never load it.

/** What a worker reports per seed. */
interface SeedSummary {
  readonly seed: number;
  readonly events: number;
  readonly requests: number;
  readonly faults: Record<FaultKind, number>;
  readonly violations: readonly { readonly invariant: string; readonly message: string }[];
  readonly convergedAfterMs: number | undefined;
}

interface WorkerTask {
  readonly first: number;
  readonly last: number;
  readonly stride: number;
  /** Only seeds whose faults include all of these episode kinds (the others are skipped, not run). */
  readonly only: readonly string[];
}

interface Args {
  seeds: number;
  from: number;
  seed: number | undefined;
  trace: boolean;
  logs: boolean;
  stopAfter: number;
  jobs: number;
  only: string[];
}

function usage(): never {
  process.stderr.write('usage: npm run sim -- [--seeds N] [--from FIRST] [--jobs J] [--stop-after FAILURES (0 = never)] [--only EPISODE_KIND] | --seed S [--trace] [--logs]\n');
  process.exit(2);
}

function parseArgs(argv: readonly string[]): Args {
  const a: Args = { seeds: 1000, from: 1, seed: undefined, trace: false, logs: false, stopAfter: 1, jobs: Math.max(1, availableParallelism()), only: [] };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = (argv[i] ?? '').split('=', 2);
    const value = (): number => {
      const v = Number(inline ?? argv[++i]);
      if (!Number.isInteger(v) || v < 0) usage();
      return v;
    };
    if (flag === '--seeds') a.seeds = value();
    else if (flag === '--from') a.from = value();
    else if (flag === '--seed') a.seed = value();
    else if (flag === '--stop-after') a.stopAfter = value();
    else if (flag === '--jobs') a.jobs = Math.max(1, value());
    else if (flag === '--only') a.only.push(inline ?? argv[++i] ?? usage());
    else if (flag === '--trace') a.trace = true;
    else if (flag === '--logs') a.logs = true;
    else usage();
  }
  return a;
}

function reproduction(seed: number): string {
  return `npm run sim -- --seed ${seed} --trace`;
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (args.seed !== undefined) {
    const { runSeed } = await import('./harness.ts');
    const r = await runSeed({ seed: args.seed, trace: true, logs: args.logs });
    if (args.trace || args.logs) for (const line of r.trace) process.stdout.write(`${line}\n`);
    process.stdout.write(
      `seed ${r.seed}: ${r.events} events, ${r.requests} requests, ${(r.virtualMs / 1000).toFixed(1)} s virtual, ` +
        `${r.converged ? `converged ${((r.convergedAfterMs ?? 0) / 1000).toFixed(1)} s after the last fault` : 'not converged'}\n`,
    );
    process.stdout.write(`scenario: ${r.scenario}\n`);
    for (const v of r.violations) process.stdout.write(`VIOLATION at ${(v.atMs / 1000).toFixed(3)}s ${v.invariant}: ${v.message}\n`);
    return r.violations.length === 0 ? 0 : 1;
  }
  const started = performance.now();
  const faults = faultCounts();
  let events = 0;
  let requests = 0;
  let violations = 0;
  let worstConvergence = 0;
  const byInvariant = new Map<string, number>();
  const tty = process.stderr.isTTY;
  let lastProgress = 0;
  let run = 0;
  const failing: SeedSummary[] = [];
  const jobs = Math.min(args.jobs, args.seeds);
  const workers: Worker[] = [];
  await new Promise<void>((resolve, reject) => {
    let running = jobs;
    const onSeed = (r: SeedSummary): void => {
      run++;
      events += r.events;
      requests += r.requests;
      for (const k of FAULT_KINDS) faults[k] += r.faults[k];
      if (r.convergedAfterMs !== undefined) worstConvergence = Math.max(worstConvergence, r.convergedAfterMs);
      if (r.violations.length > 0) {
        violations += r.violations.length;
        for (const v of r.violations) byInvariant.set(v.invariant, (byInvariant.get(v.invariant) ?? 0) + 1);
        failing.push(r);
        const first = r.violations[0];
        process.stderr.write(`${tty ? '\r\x1b[K' : ''}seed ${r.seed} FAILED: ${first?.invariant ?? ''}: ${first?.message ?? ''}\n  reproduce: ${reproduction(r.seed)}\n`);
        if (args.stopAfter > 0 && failing.length >= args.stopAfter) {
          for (const w of workers) void w.terminate();
          resolve();
          return;
        }
      }
      const now = performance.now();
      if (now - lastProgress > (tty ? 200 : 10_000)) {
        lastProgress = now;
        const rate = run / ((now - started) / 1000);
        const line = `${run}/${args.seeds} seeds, ${events} events, ${failing.length} failing, ${rate.toFixed(0)} seeds/s`;
        process.stderr.write(tty ? `\r\x1b[K${line}` : `${line}\n`);
      }
    };
    for (let j = 0; j < jobs; j++) {
      const task: WorkerTask = { first: args.from + j, last: args.from + args.seeds - 1, stride: jobs, only: args.only };
      const w = new Worker(new URL(import.meta.url), { workerData: task, execArgv: process.execArgv });
      workers.push(w);
      w.on('message', (m: SeedSummary) => onSeed(m));
      w.on('error', reject);
      w.on('exit', () => {
        running--;
        if (running === 0) resolve();
      });
    }
  });
  if (tty) process.stderr.write('\r\x1b[K');
  const seconds = (performance.now() - started) / 1000;
  const out = (s: string): boolean => process.stdout.write(`${s}\n`);
  out(`seeds run        ${run} (from ${args.from}, ${jobs} worker threads) in ${seconds.toFixed(1)} s (${(run / seconds).toFixed(0)} seeds/s)`);
  out(`events           ${events} (${requests} API requests)`);
  out(`faults by kind   ${FAULT_KINDS.map((k) => `${k} ${faults[k]}`).join(', ')}`);
  out(`violations       ${violations}${byInvariant.size === 0 ? '' : ` (${[...byInvariant].map(([k, n]) => `${k} ${n}`).join(', ')})`}`);
  out(`worst convergence after the last fault: ${(worstConvergence / 1000).toFixed(1)} s (virtual)`);
  for (const r of [...failing].sort((a, b) => a.seed - b.seed)) out(`failing seed ${r.seed}: ${reproduction(r.seed)}`);
  return failing.length === 0 ? 0 : 1;
}

/** A worker thread: runs its share of the seeds and reports each. */
async function work(task: WorkerTask): Promise<void> {
  const { episodeKindsOf, runSeed } = await import('./harness.ts');
  for (let seed = task.first; seed <= task.last; seed += task.stride) {
    if (task.only.length > 0) {
      const kinds = episodeKindsOf(seed);
      if (!task.only.every((k) => kinds.has(k))) continue;
    }
    const r = await runSeed({ seed });
    const summary: SeedSummary = {
      seed,
      events: r.events,
      requests: r.requests,
      faults: r.faults,
      violations: r.violations.map((v) => ({ invariant: v.invariant, message: v.message })),
      convergedAfterMs: r.convergedAfterMs,
    };
    parentPort?.postMessage(summary);
  }
}

if (isMainThread) process.exitCode = await main();
else await work(workerData as WorkerTask);
