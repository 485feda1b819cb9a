// The scale simulation: N pods in M CloneSets through the real controller (runController: informers, work queue,
// expectations, planner, executor, client) against the in-memory API server and kubelet of sim/, on virtual time
// and without faults. What a real cluster cannot give on one machine: a million pods. Prints what one replica
// would need per pod (docs/performance.md, "A million pods").
//
//   npm run sim:scale -- [--pods 100000] [--clonesets 1000] [--seed 1] [-- <controller flags>]
//
// 1. scale 0 → N: M CloneSets are created at once; the run ends when every pod is Ready, every CloneSet's status
//    counts them available, and the controller's queue is empty. CPU per pod event: this process's CPU (the
//    controller, and the simulated API server, network and kubelet, which this figure therefore over-counts) per
//    pod write the API server committed (each one a watch event the controller's pod informer receives).
// 2. full resync: every CloneSet enqueued at once, as --sync-period does, with nothing to do: the time (real, on
//    this machine) until each was reconciled once and the queue is empty, and the writes it made (0 expected).
// 3. relist: every watch dropped and the history compacted, so that each informer lists again (a watch reconnect
//    answered 410) with its cache full: the live heap's peak above what it was, and the writes (0 expected). The
//    live heap is sampled with a full GC between events: after every event on small heaps, on large ones as often
//    as half the phase's real time allows (a full GC of a million-pod heap takes seconds: one per event would never
//    end); the heap with its garbage, read at every event, bounds the peak from above.
// 4. memory: the heap after a full GC with everything running, then again once the controller has been stopped
//    and dropped: the difference is the controller's (its caches first), the rest the simulated API server's.
//
// Progress goes to stderr every 5 s; each phase's figures go to stdout as soon as it ends (a run stopped early
// still has them). Large runs need a larger heap:
//   NODE_OPTIONS=--max-old-space-size=12288 npm run sim:scale -- --pods 1000000 --clonesets 10000
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { INSTANCE_ID_ALPHABET } from '../src/cloneset/plan/instance-ids.ts';
import { parseConfig } from '../src/config.ts';
import { KubeClient } from '../src/kube/client.ts';
import { RateLimits } from '../src/kube/rate-limits.ts';
import type { CloneSetManager } from '../src/cloneset/manager.ts';
import { runController, type ProcessState } from '../src/leadership.ts';
import { ApiServer, type Mutation, type Obj } from './api-server.ts';
import { ProcessClock, SimClock } from './clock.ts';
import { faultCounts } from './faults.ts';
import { Kubelet } from './kubelet.ts';
import { Network } from './network.ts';
import { Rng } from './random.ts';
import { collectGarbage, heapUsedAfterGc } from '../bench/heap.ts';

const USAGE = 'usage: npm run sim:scale -- [--pods N (100000)] [--clonesets M (1000)] [--seed S (1)] [-- controller flags…]\n';
const NAMESPACE = 'default';
const CS_PATH = `/apis/apps.kruise.io/v1beta1/namespaces/${NAMESPACE}/clonesets`;
const PROGRESS_EVERY_MS = 5_000;

interface Args {
  readonly pods: number;
  readonly cloneSets: number;
  readonly seed: number;
  readonly controllerArgs: readonly string[];
}

function parse(argv: readonly string[]): Args {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { pods: { type: 'string' }, clonesets: { type: 'string' }, seed: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help === true) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const pods = Number(values.pods ?? '100000');
  if (!Number.isInteger(pods) || pods <= 0) throw new Error(`--pods: not a positive count: ${values.pods ?? ''}`);
  const cloneSets = Number(values.clonesets ?? '1000');
  if (!Number.isInteger(cloneSets) || cloneSets <= 0 || cloneSets > pods) throw new Error(`--clonesets: not a count between 1 and --pods (${pods}): ${values.clonesets ?? ''}`);
  const seed = Number(values.seed ?? '1');
  if (!Number.isInteger(seed)) throw new Error(`--seed: not an integer: ${values.seed ?? ''}`);
  return { pods, cloneSets, seed, controllerArgs: positionals };
}

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Lets every pending promise job run (the simulated processes only ever wait on virtual timers). */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function cloneSet(name: string, replicas: number): unknown {
  const labels = { app: name };
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'CloneSet',
    metadata: { name, namespace: NAMESPACE },
    spec: { replicas, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'app:v1' }] } } },
  };
}

const isReady = (pod: Obj | undefined): boolean =>
  pod !== undefined &&
  pod.metadata.deletionTimestamp === undefined &&
  ((pod['status'] as { conditions?: readonly { type: string; status: string }[] } | undefined)?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
const available = (cs: Obj | undefined): number => (cs?.['status'] as { availableReplicas?: number } | undefined)?.availableReplicas ?? 0;

/** Counters kept current from the API server's committed writes: no scan of a million pods. */
class Census {
  pods = 0;
  ready = 0;
  available = 0;
  podWrites = 0;
  writes = 0;

  onMutation(m: Mutation): void {
    this.writes++;
    if (m.plural === 'pods') {
      this.podWrites++;
      this.pods += (m.after === undefined ? 0 : 1) - (m.before === undefined ? 0 : 1);
      this.ready += (isReady(m.after) ? 1 : 0) - (isReady(m.before) ? 1 : 0);
    } else if (m.plural === 'clonesets') {
      this.available += available(m.after) - available(m.before);
    }
  }
}

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const kib = (bytes: number): string => `${(bytes / 1024).toFixed(2)} KiB`;
const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const row = (label: string, value: string): string => `  ${label.padEnd(44)}${value}`;
const print = (lines: readonly string[]): void => void process.stdout.write(`${lines.join('\n')}\n`);

/**
 * The live heap's peak during a phase, sampled with full GCs between events: after every event while a full GC
 * is cheap (under 20 ms: heaps of up to ~100 000 pods), else on a time budget — a sample only once the phase has
 * run, since the last one, at least as long as that sample's GC took, so the sampling costs at most half the
 * phase's time whatever the heap's size. The heap read without a GC at every event (live objects and garbage)
 * bounds the peak from above.
 */
const CHEAP_GC_MS = 20;

class HeapSampler {
  livePeak: number;
  peakWithGarbage: number;
  samples = 0;
  #nextAt = 0;

  constructor(heapBefore: number) {
    this.livePeak = heapBefore;
    this.peakWithGarbage = heapBefore;
  }

  /** Reads the heap; returns false, so it can serve as a `runUntil` condition that never ends the phase. */
  sample(): false {
    const t = performance.now();
    this.peakWithGarbage = Math.max(this.peakWithGarbage, process.memoryUsage().heapUsed);
    if (t < this.#nextAt) return false;
    collectGarbage();
    this.livePeak = Math.max(this.livePeak, process.memoryUsage().heapUsed);
    this.samples++;
    const end = performance.now();
    this.#nextAt = end - t < CHEAP_GC_MS ? end : end + (end - t);
    return false;
  }
}

async function main(): Promise<void> {
  const args = parse(process.argv.slice(2));
  const n = args.pods;
  const heap0 = heapUsedAfterGc();
  const rng = new Rng(args.seed);
  const clock = new SimClock();
  const server = new ApiServer(clock);
  const census = new Census();
  server.observe(census);
  // CPU spent inside the simulated API server (requests, their watch fan-out, the kubelet's writes), so that the
  // controller's share can be told apart: process.cpuUsage around each outermost request.
  let serverCpuUs = 0;
  let depth = 0;
  const handle = server.handleTyped.bind(server);
  server.handleTyped = (origin, method, path, query, body, contentType) => {
    if (depth > 0) return handle(origin, method, path, query, body, contentType);
    depth++;
    const c0 = process.cpuUsage();
    try {
      return handle(origin, method, path, query, body, contentType);
    } finally {
      depth--;
      const d = process.cpuUsage(c0);
      serverCpuUs += d.user + d.system;
    }
  };
  const noFaults = { rates: { lostAnswer: 0, conflict: 0, throttle: 0, nodeFlap: 0, nodeFlapWithinMs: 0, deleteCoincidence: 0 }, episodes: [], windowEndMs: -1 };
  const net = new Network(clock, server, rng.fork(), noFaults, faultCounts(), () => undefined, rng.fork());
  new Kubelet(server, clock, rng.fork());
  const procRng = rng.fork();
  const realRandom = Math.random;
  Math.random = () => procRng.float();

  const parsed = parseConfig(['--metrics-bind-address=0', '--health-probe-bind-address=0', '--webhook-port=0', '--log-level=error', ...args.controllerArgs], {});
  if (parsed === 'help') throw new Error('--help is not a controller flag here');
  const config = parsed;
  const pclock = new ProcessClock(clock);
  const transport = net.transportFor({ identity: 'controller-0', clock: pclock });
  const time = pclock.bucketTime();
  const client = (qps: number, burst: number): KubeClient =>
    new KubeClient(transport, new RateLimits(qps, burst, time), {
      random: () => procRng.float(),
      time,
      policy: { requestTimeoutMs: config.requestTimeoutMs },
      watchIdleTimeoutMs: config.watchIdleTimeoutMs,
    });
  const state: ProcessState = { manager: undefined, elector: undefined };
  const sigterm = new AbortController();
  const ids = { random: () => Array.from({ length: 5 }, () => INSTANCE_ID_ALPHABET[procRng.int(0, INSTANCE_ID_ALPHABET.length - 1)]).join('') };
  runController({
    clients: { client: client(config.qps, config.burst), eventsClient: client(config.qps, config.burst), leaseClient: client(5, 10) },
    config,
    clock: pclock,
    logger: pino({ level: 'error' }, process.stderr),
    identity: 'controller-0',
    state,
    signal: sigterm.signal,
    exit: (code) => {
      throw new Error(`the controller exited with status ${code}`);
    },
    instanceIds: ids,
  }).catch((e: unknown) => process.stderr.write(`controller failed: ${String(e)}\n`));

  const sets = new Map<string, number>();
  for (let i = 0; i < args.cloneSets; i++) sets.set(`cs-${String(i).padStart(5, '0')}`, Math.floor(args.pods / args.cloneSets) + (i < args.pods % args.cloneSets ? 1 : 0));
  for (const [name, replicas] of sets) {
    const a = server.write('user', 'POST', CS_PATH, cloneSet(name, replicas));
    if (a.status !== 201) throw new Error(`creating CloneSet ${name}: ${a.body}`);
  }

  const stats = (): { reconciles: number; queue: number; active: number } => {
    const s = state.manager?.controller.stats();
    return { reconciles: s?.reconcilesTotal ?? 0, queue: s?.queueDepth ?? 0, active: s?.activeWorkers ?? 0 };
  };
  let events = 0;
  let lastProgress = Date.now();
  const t0 = Date.now();
  const progress = (what: string): void => {
    if (Date.now() - lastProgress < PROGRESS_EVERY_MS) return;
    lastProgress = Date.now();
    const s = stats();
    process.stderr.write(
      `${what}: ${secs(Date.now() - t0)} real, ${secs(clock.now())} virtual; pods ${census.pods} (${census.ready} Ready, ${census.available} available); ` +
        `${s.reconciles} reconciles, queue ${s.queue}; heap ${mib(process.memoryUsage().heapUsed)}\n`,
    );
  };
  /** Fires timers until `done` holds (checked between events), or throws after `maxVirtualMs` of virtual time. */
  const runUntil = async (what: string, done: () => boolean, maxVirtualMs: number): Promise<void> => {
    const deadline = clock.now() + maxVirtualMs;
    for (;;) {
      await settle();
      if (done()) return;
      progress(what);
      const next = clock.nextAt();
      if (next === undefined || next > deadline) throw new Error(`${what}: not done after ${secs(maxVirtualMs)} of virtual time (${census.ready} of ${args.pods} pods Ready)`);
      clock.fireNext();
      events++;
    }
  };
  const idle = (): boolean => {
    const s = stats();
    return state.manager !== undefined && s.queue === 0 && s.active === 0;
  };

  // 1. scale 0 → N
  const cpu0 = cpuMs();
  const serverCpu0 = serverCpuUs;
  await runUntil('scale-up', () => census.ready === args.pods && census.available === args.pods && idle(), 48 * 3_600_000);
  const scaleRealMs = Date.now() - t0;
  const scaleCpuMs = cpuMs() - cpu0;
  const scaleServerCpuMs = (serverCpuUs - serverCpu0) / 1000;
  const scaleVirtualMs = clock.now();
  const podWrites = census.podWrites;
  const reconcilesUp = stats().reconciles;
  const requestsUp = net.requests;
  print([
    `CloneSet scale simulation: ${n} pods in ${sets.size} CloneSets, seed ${args.seed}, controller ${args.controllerArgs.length > 0 ? args.controllerArgs.join(' ') : '(default flags)'}`,
    `scale 0 → ${n}, every pod Ready and available`,
    row('virtual time', secs(scaleVirtualMs)),
    row('real time', secs(scaleRealMs)),
    row('timer events', String(events)),
    row('pod writes (pod events the controller gets)', String(podWrites)),
    row('reconciles', `${reconcilesUp}  (${(reconcilesUp / sets.size).toFixed(1)} per CloneSet)`),
    row('API requests', `${requestsUp}  (${(requestsUp / n).toFixed(2)} per pod)`),
    row('CPU, whole simulation', `${secs(scaleCpuMs)}  (${((scaleCpuMs * 1000) / podWrites).toFixed(0)} µs per pod event, ${((scaleCpuMs * 1000) / n).toFixed(0)} µs per pod)`),
    row('  of which the simulated API server', `${secs(scaleServerCpuMs)}  (${((scaleServerCpuMs * 1000) / podWrites).toFixed(0)} µs per pod event)`),
    row(
      '  the rest: controller (+ network, kubelet)',
      `${secs(scaleCpuMs - scaleServerCpuMs)}  (${(((scaleCpuMs - scaleServerCpuMs) * 1000) / podWrites).toFixed(0)} µs per pod event)`,
    ),
  ]);

  // 2. full resync: every CloneSet enqueued, nothing to do
  // Read through `state` each time, never kept in a variable of this frame: the memory figure below needs the
  // controller to be collectable once it is stopped.
  const manager = (): CloneSetManager => {
    if (state.manager === undefined) throw new Error('the controller has no manager');
    return state.manager;
  };
  const r0 = stats().reconciles;
  const writes0 = census.writes;
  const requests0 = net.requests;
  const tr = Date.now();
  const cpuR = cpuMs();
  const vr = clock.now();
  for (const name of sets.keys()) manager().controller.enqueue(`${NAMESPACE}/${name}`);
  await runUntil('resync', () => stats().reconciles - r0 >= sets.size && idle(), 3_600_000);
  const resyncRealMs = Date.now() - tr;
  const resyncCpuMs = cpuMs() - cpuR;
  const resyncVirtualMs = clock.now() - vr;
  const resyncWrites = census.writes - writes0;
  const resyncRequests = net.requests - requests0;
  print([
    `full resync: every CloneSet enqueued once, nothing to do`,
    row('real time (CPU)', `${secs(resyncRealMs)}  (${secs(resyncCpuMs)} CPU, ${((resyncCpuMs * 1000) / sets.size).toFixed(0)} µs per CloneSet)`),
    row('virtual time', secs(resyncVirtualMs)),
    row('writes / requests', `${resyncWrites} / ${resyncRequests}`),
  ]);

  // 3. relist: every watch dropped and the history compacted, so each informer's re-watch gets 410 and lists
  // again (in pages) with its cache full; the live heap's peak above the heap before is what a relist costs on top
  // of the cache
  const heapBeforeRelist = heapUsedAfterGc();
  const relistHeap = new HeapSampler(heapBeforeRelist);
  const requestsBeforeRelist = net.requests;
  const tl = Date.now();
  const tlVirtual = clock.now();
  // The relist is over when no informer has a list in flight, and every informer has listed again or a minute of
  // virtual time has passed: an informer whose last resourceVersion is the server's latest (a bookmark after the last
  // write) resumes its watch without a 410 and never lists. Without the wait for lists in flight, a million pods at
  // the default 30 QPS (2 000 pages, ~67 s) were measured with the relist unfinished (session 35's first run).
  const listsBefore = manager().informers.map((inf) => inf.stats.lists);
  const relistOver = (): boolean => {
    const informers = manager().informers;
    if (!informers.every((inf) => inf.stats.listsDone === inf.stats.lists)) return false;
    return informers.every((inf, i) => inf.stats.listsDone > (listsBefore[i] ?? 0)) || clock.now() - tlVirtual >= 60_000;
  };
  server.compact();
  net.dropStreams();
  await runUntil(
    'relist',
    () => {
      relistHeap.sample();
      return relistOver();
    },
    3_600_000,
  ).catch((e: unknown) => process.stderr.write(`${String(e)}: the relist's figures below are of an unfinished relist\n`));
  const relistMs = Date.now() - tl;
  const relistVirtualMs = clock.now() - tlVirtual;
  // A minute of virtual time after it, as every run before this wait had: the heap measured right at the relist's
  // last page still holds what the list left for timers to drop, and the memory below would count it as the controller's.
  await runUntil('after the relist', () => relistHeap.sample(), 60_000).catch(() => undefined);
  const cachedAfterRelist = `${manager().stores.pods.list().length} pods, ${manager().stores.cloneSets.list().length} CloneSets`;
  const relistRequests = net.requests - requestsBeforeRelist;
  const writesAfterRelist = census.writes - writes0 - resyncWrites;
  print([
    `relist: every watch dropped and the watch history compacted (410 → each informer lists again, in pages)`,
    row(
      'live heap peak above the heap before',
      `${mib(relistHeap.livePeak - heapBeforeRelist)}  (${relistHeap.samples} full-GC samples; before: ${mib(heapBeforeRelist - heap0)})`,
    ),
    row('  with garbage, at most', mib(relistHeap.peakWithGarbage - heapBeforeRelist)),
    row('real time, requests, writes', `${secs(relistMs)} (${secs(relistVirtualMs)} virtual), ${relistRequests} requests, ${writesAfterRelist} writes`),
    row("the controller's cache afterwards", cachedAfterRelist),
  ]);

  // 4. memory: everything, then without the controller
  const heapAll = heapUsedAfterGc();

  sigterm.abort();
  await runUntil('stopping the controller', () => false, 60_000).catch(() => undefined);
  pclock.kill();
  net.dropStreams();
  state.manager = undefined;
  // Past every timer the controller armed (the resync at --sync-period, 10 h by default, watch timeouts): a timer
  // not yet due holds its closure, and with it the controller's caches.
  await runUntil('dropping the controller', () => false, config.syncPeriodMs + 3_600_000).catch(() => undefined);
  const heapServer = heapUsedAfterGc();

  Math.random = realRandom;

  const controllerBytes = heapAll - heapServer;
  const serverBytes = heapServer - heap0;
  print([
    `memory (V8 heap after a full GC)`,
    row('everything', mib(heapAll - heap0)),
    row('controller (freed when it is stopped)', `${mib(controllerBytes)}  (${kib(controllerBytes / n)} per pod)`),
    row('simulated API server, network, kubelet', `${mib(serverBytes)}  (${kib(serverBytes / n)} per pod)`),
    row('process peak RSS', mib(process.resourceUsage().maxRSS * 1024)),
  ]);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
