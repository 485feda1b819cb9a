// One simulated run: an API server, a kubelet, one or two controller processes (the real runController with
// leader election, informers, work queue, expectations, executor and planner) on virtual time, a user who
// changes the CloneSet, and the faults of the seed. Returns the figures, the violations and the trace.
import { pino, type Logger } from 'pino';
import { KubeClient } from '../src/kube/client.ts';
import { RateLimits } from '../src/kube/rate-limits.ts';
import { parseConfig, type ControllerConfig } from '../src/config.ts';
import type { PodEventBatch } from '../src/cloneset/pod-event-batch.ts';
import { runController, type ProcessState } from '../src/leadership.ts';
import { INSTANCE_ID_ALPHABET } from '../src/cloneset/plan/instance-ids.ts';
import { ApiServer, type Obj } from './api-server.ts';
import { Checker, specView, type Violation } from './checker.ts';
import { ProcessClock, SimClock } from './clock.ts';
import { drawCoincidences, drawFaults, faultCounts, type Episode, type FaultKind, type FaultPlan } from './faults.ts';
import { Kubelet } from './kubelet.ts';
import { Network, NODE_MAX_SOCKETS, type SocketPoolPlan } from './network.ts';
import { Rng } from './random.ts';

export const NAMESPACE = 'default';
export const NAME = 'web';
const CS_PATH = `/apis/apps.kruise.io/v1beta1/namespaces/${NAMESPACE}/clonesets`;
/** No fault starts after this; user edits end earlier. */
const FAULT_WINDOW_MS = 25_000;
const EDIT_WINDOW_MS = 15_000;
/** The world must have converged this long after the last fault ended and the last edit (virtual time). */
export const CONVERGENCE_BOUND_MS = 180_000;

export interface RunOptions {
  readonly seed: number;
  /** Keep the trace (every request, fault and edit); off for bulk runs. */
  readonly trace?: boolean;
  /** Controller log lines into the trace (pino, debug level). */
  readonly logs?: boolean;
}

export interface RunResult {
  readonly seed: number;
  readonly events: number;
  readonly requests: number;
  readonly faults: Record<FaultKind, number>;
  readonly violations: readonly Violation[];
  readonly converged: boolean;
  /** Virtual ms from the quiet point (last fault, last edit) to convergence. */
  readonly convergedAfterMs: number | undefined;
  readonly virtualMs: number;
  readonly trace: readonly string[];
  readonly scenario: string;
}

interface Scenario {
  readonly replicas: number;
  readonly maxSurge: number | string;
  readonly maxUnavailable: number | string;
  readonly partition: number | string;
  readonly policy: 'ReCreate' | 'InPlaceIfPossible';
  readonly withPvcs: boolean;
  /** spec.minReadySeconds: a Ready pod counts as available only this long after it turned Ready. */
  readonly minReadySeconds: number;
  /** Lifecycle hooks (a finalizer the user's hook handler owns): none, preDelete, or preDelete and inPlaceUpdate. */
  readonly hooks: 'none' | 'preDelete' | 'both';
  readonly replicasOfController: 1 | 2;
  readonly edits: readonly Edit[];
}

type Edit =
  | { readonly at: number; readonly kind: 'scale'; readonly replicas: number; readonly flap?: boolean }
  | { readonly at: number; readonly kind: 'image'; readonly image: string }
  | { readonly at: number; readonly kind: 'partition'; readonly partition: number | string }
  /** The user asks to delete one of the CloneSet's pods (the `pick`-th by name, modulo their number). */
  | { readonly at: number; readonly kind: 'podsToDelete' | 'specifiedDelete'; readonly pick: number };

function drawScenario(rng: Rng): Scenario {
  const replicas = rng.int(0, 5);
  const maxSurge = rng.pick([0, 0, 1, 2, '50%']);
  const edits: Edit[] = [];
  for (let i = rng.int(1, 2); i > 0; i--) {
    const at = rng.int(2_000, EDIT_WINDOW_MS);
    const kind = rng.pick(['scale', 'image', 'image', 'partition', 'podsToDelete', 'specifiedDelete', 'scaleFlap'] as const);
    if (kind === 'scale') edits.push({ at, kind, replicas: rng.int(0, 6) });
    else if (kind === 'scaleFlap') {
      // An autoscaler that changes its mind: up, then down again while the new pods are still starting.
      const up = rng.int(1, 4);
      edits.push({ at, kind: 'scale', replicas: replicas + up, flap: true });
      edits.push({ at: at + rng.int(300, 3_000), kind: 'scale', replicas: Math.max(0, replicas + up - rng.int(1, up + 1)), flap: true });
    } else if (kind === 'image') edits.push({ at, kind, image: `app:v${rng.int(2, 9)}` });
    else if (kind === 'partition') edits.push({ at, kind, partition: rng.pick([0, 0, 1, 2, '50%']) });
    else edits.push({ at, kind, pick: rng.int(0, 99) });
  }
  edits.sort((a, b) => a.at - b.at);
  return {
    replicas,
    maxSurge,
    maxUnavailable: rng.pick([1, 1, 2, '50%']),
    partition: rng.pick([0, 0, 0, 1, '50%']),
    policy: rng.pick(['ReCreate', 'InPlaceIfPossible'] as const),
    withPvcs: rng.chance(0.4),
    replicasOfController: rng.chance(0.6) ? 2 : 1,
    edits,
    // Drawn last, so that the draws above stay what they were for a seed.
    minReadySeconds: rng.pick([0, 0, 1, 3]),
    hooks: rng.pick(['none', 'none', 'none', 'preDelete', 'both'] as const),
  };
}

/** The finalizer the user's hook handler owns (as bench/chaos-workload.ts does on a real cluster). */
const HOOK_FINALIZER = 'sim.example.io/hook';
const HOOK = { finalizersHandler: [HOOK_FINALIZER] };

function cloneSetObject(s: Scenario, name: string): unknown {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'CloneSet',
    metadata: { name, namespace: NAMESPACE },
    spec: {
      replicas: s.replicas,
      ...(s.minReadySeconds > 0 ? { minReadySeconds: s.minReadySeconds } : {}),
      selector: { matchLabels: { app: name } },
      ...(s.hooks === 'none' ? {} : { lifecycle: { preDelete: HOOK, ...(s.hooks === 'both' ? { inPlaceUpdate: HOOK } : {}) } }),
      template: {
        metadata: { labels: { app: name }, ...(s.hooks === 'none' ? {} : { finalizers: [HOOK_FINALIZER] }) },
        spec: { containers: [{ name: 'app', image: 'app:v1' }] },
      },
      ...(s.withPvcs ? { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }] } : {}),
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: {
          partition: s.partition,
          maxSurge: s.policy === 'InPlaceIfPossible' ? s.maxSurge : s.maxSurge,
          maxUnavailable: s.maxUnavailable,
          podUpdatePolicy: s.policy,
        },
      },
    },
  };
}

/** Kruise's admission refuses replicas > 0 with maxUnavailable < 1 (v1beta1): keep the scenario admissible. */
function admissible(cs: Obj): boolean {
  const v = specView(cs);
  return v.replicas === 0 || v.maxUnavailable >= 1;
}

function controllerConfig(): ControllerConfig {
  const parsed = parseConfig(['--leader-elect', '--metrics-bind-address=0', '--health-probe-bind-address=0', '--webhook-port=0', '--log-level=debug'], {});
  if (parsed === 'help') throw new Error('unreachable: --help was not passed');
  return parsed;
}

interface Proc {
  readonly identity: string;
  readonly clock: ProcessClock;
  readonly state: ProcessState;
}

function seededIds(rng: Rng): { random(): string } {
  return { random: () => Array.from({ length: 5 }, () => INSTANCE_ID_ALPHABET[rng.int(0, INSTANCE_ID_ALPHABET.length - 1)]).join('') };
}

/** The processes' logger when the run keeps no log: one for every process of every run (pino's setup is not free). */
const SILENT: Logger = pino({ level: 'silent' });

/** Lets every pending promise job run (the simulated processes only ever wait on virtual timers). */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The second CloneSet of a run that has one (distinct selector, same namespace, the same controller processes). */
export const SECOND_NAME = 'api';

interface Draw {
  readonly scenario: Scenario;
  /** A second CloneSet in 3 runs out of 10 (its own spec, edits and hooks; the processes are the first one's). */
  readonly second: Scenario | undefined;
  readonly plan: FaultPlan;
  readonly netRng: Rng;
  readonly kubeletRng: Rng;
  readonly procRng: Rng;
  readonly coincidenceRng: Rng;
  /** Sockets per client: Node's 32, or in half the runs a few more than the main client's watches hold (a busy client). */
  readonly pool: SocketPoolPlan;
  /** BUGGIFY: a process may be paused while a write of it waits for a socket (half the runs with few sockets). */
  readonly queuedPauses: boolean;
  /** The controller's batch period for pod events and status echoes, drawn for half the runs; absent: the controller's own (none below 100 replicas). */
  readonly podEventBatch: PodEventBatch | undefined;
}

/** Everything a seed decides before it runs: the scenario, the faults, and the generators of the rest. */
function draw(seed: number): Draw {
  const rng = new Rng(seed);
  const scenarioRng = rng.fork();
  const faultRng = rng.fork();
  const netRng = rng.fork();
  const kubeletRng = rng.fork();
  const procRng = rng.fork();
  // Forked last, so that the streams above stay what they were for a seed.
  const coincidenceRng = rng.fork();
  const poolRng = rng.fork();
  // The main client's informers hold 6–7 watches: 8–12 sockets leave it one to five for requests.
  const pool = { size: poolRng.pick([NODE_MAX_SOCKETS, NODE_MAX_SOCKETS, NODE_MAX_SOCKETS, 8, 9, 12]), rng: poolRng };
  const queuedPauses = pool.size < NODE_MAX_SOCKETS && poolRng.chance(0.5);
  // Half the runs batch the pod events and status echoes of their few-pod CloneSets as the controller batches those
  // of 100 pods or more (src/cloneset/pod-event-batch.ts): 10–200 ms per replica, at most 1 s.
  const batchRng = rng.fork();
  const podEventBatch = batchRng.chance(0.5) ? { fromReplicas: 1, usPerReplica: batchRng.int(10_000, 200_000), maxMs: 1000 } : undefined;
  const scenario = drawScenario(scenarioRng);
  const plan = drawFaults(faultRng, FAULT_WINDOW_MS);
  // A pause is placed while the controller works (just after a user edit): that is when a paused leader has
  // writes queued, the case fencing exists for.
  const edits = scenario.edits;
  const episodes = plan.episodes
    .map((e, i) => {
      const edit = edits[i % Math.max(1, edits.length)];
      return e.kind === 'pause' && edit !== undefined ? { ...e, at: edit.at + faultRng.int(0, 300) } : e;
    })
    .sort((a, b) => a.at - b.at);
  // minReadySeconds compares the kubelet's Ready time with the controller's wall clock, so a stepped wall clock
  // skews availability by the step (in Kubernetes too): it is drawn only for runs whose wall clocks stay put.
  const steady = !plan.episodes.some((e) => e.kind === 'wallStep');
  // Drawn last, so that the draws above stay what they were for a seed.
  const second = scenarioRng.chance(0.3) ? drawScenario(scenarioRng) : undefined;
  const keep = (s: Scenario): Scenario => (steady ? s : { ...s, minReadySeconds: 0 });
  const withCoincidences = drawCoincidences(coincidenceRng, { ...plan, episodes });
  return {
    scenario: keep(scenario),
    second: second === undefined ? undefined : keep(second),
    plan: withCoincidences,
    netRng,
    kubeletRng,
    procRng,
    coincidenceRng,
    pool,
    queuedPauses,
    podEventBatch,
  };
}

/**
 * What a seed will do (without running it), for `npm run sim -- --only KIND`: its fault episode kinds, and the
 * tags `twoReplicas`, `lostAnswers`, `flaps`, `flakyProbes`, `deleteCoincidences`, `fewSockets`, `queuedPauses`, `batched` (the pod events batched) and its user edits (`scale`, `image`, `partition`,
 * `podsToDelete`, `specifiedDelete`, `scaleFlap`), `hooks` and `inPlaceUpdateHook` (lifecycle hooks).
 */
export function episodeKindsOf(seed: number): ReadonlySet<string> {
  const d = draw(seed);
  const r = d.plan.rates;
  const tags = [
    ...(d.scenario.replicasOfController === 2 ? ['twoReplicas'] : []),
    ...(r.lostAnswer > 0 ? ['lostAnswers'] : []),
    ...(r.nodeFlap > 0 ? ['flaps'] : []),
    ...(r.nodeFlap === 1 ? ['flakyProbes'] : []),
    ...(r.deleteCoincidence > 0 ? ['deleteCoincidences'] : []),
    ...(d.scenario.hooks !== 'none' ? ['hooks'] : []),
    ...(d.scenario.hooks === 'both' ? ['inPlaceUpdateHook'] : []),
    ...(d.second !== undefined ? ['twoCloneSets'] : []),
    ...(d.pool.size < NODE_MAX_SOCKETS ? ['fewSockets'] : []),
    ...(d.queuedPauses ? ['queuedPauses'] : []),
    ...(d.podEventBatch !== undefined ? ['batched'] : []),
    ...d.scenario.edits.map((e) => (e.kind === 'scale' && e.flap === true ? 'scaleFlap' : e.kind)),
  ];
  return new Set([...d.plan.episodes.map((e) => e.kind), ...tags]);
}

export async function runSeed(opts: RunOptions): Promise<RunResult> {
  const { scenario, second, plan, netRng, kubeletRng, procRng, coincidenceRng, pool, queuedPauses, podEventBatch } = draw(opts.seed);
  const trace: string[] = [];
  const clock = new SimClock();
  const log = (line: string): void => {
    if (opts.trace === true) trace.push(`${(clock.now() / 1000).toFixed(3).padStart(8)} ${line}`);
  };
  const faults = faultCounts();
  const server = new ApiServer(clock);
  const net = new Network(clock, server, netRng, plan, faults, log, coincidenceRng, pool);
  const kubelet = new Kubelet(server, clock, kubeletRng, { rate: plan.rates.nodeFlap, withinMs: plan.rates.nodeFlapWithinMs, untilMs: plan.windowEndMs, faults });
  net.probeFailsBeside = (namespace, name) => kubelet.failProbeBeside(namespace, name);
  const procs: Proc[] = [];
  const isController = (origin: string): boolean => origin.startsWith('controller-');
  const reachedAt = (identity: string, rv: number): number | undefined => net.podsSeen.reachedAt(identity, rv);
  const checker = new Checker(server, clock, NAMESPACE, NAME, isController, reachedAt);
  // The leader check is one for the run: the first checker's.
  net.onWrite = (origin, method, path) => checker.onWrite(origin, method, path);
  const sets: { readonly name: string; readonly scenario: Scenario; readonly checker: Checker }[] = [{ name: NAME, scenario, checker }];
  if (second !== undefined) sets.push({ name: SECOND_NAME, scenario: second, checker: new Checker(server, clock, NAMESPACE, SECOND_NAME, isController, reachedAt) });
  const violations = (): Violation[] => sets.flatMap((x) => x.checker.violations);
  const config: ControllerConfig = { ...controllerConfig(), ...(podEventBatch !== undefined ? { podEventBatch } : {}) };
  let nextId = 0;

  // The controller's jitter (informer watch timeouts, leader election) comes from Math.random: seeded for the run.
  const realRandom = Math.random;
  Math.random = () => procRng.float();
  // Thousands of errors are thrown and caught per run (409s, lost answers, aborted requests); nothing reads their
  // stacks unless the run keeps its log.
  const realStackTraceLimit = Error.stackTraceLimit;
  if (opts.logs !== true) Error.stackTraceLimit = 0;

  const logger = (identity: string): Logger =>
    opts.logs === true
      ? // Stack traces are left out: they name the caller's file and line, which is not part of the run.
        pino({ level: 'debug', base: { p: identity }, timestamp: false }, { write: (s: string) => log(s.trimEnd().replace(/"stack":"(?:[^"\\]|\\.)*",?/g, '')) })
      : SILENT;

  const startProcess = (): Proc => {
    const identity = `controller-${nextId++}`;
    const pclock = new ProcessClock(clock);
    const time = pclock.bucketTime();
    // Each client its own transport and sockets, as in the binary (src/main.ts: one KubeClient.fromKubeConfig each).
    const client = (qps: number, burst: number, policy: Record<string, number> = {}): KubeClient =>
      new KubeClient(net.transportFor({ identity, clock: pclock }), new RateLimits(qps, burst, time), {
        random: () => procRng.float(),
        time,
        policy: { requestTimeoutMs: config.requestTimeoutMs, ...policy },
        watchIdleTimeoutMs: config.watchIdleTimeoutMs,
      });
    const state: ProcessState = { manager: undefined, elector: undefined };
    const proc: Proc = { identity, clock: pclock, state };
    procs.push(proc);
    log(`${identity} starts`);
    const sigterm = new AbortController();
    runController({
      clients: { client: client(config.qps, config.burst), eventsClient: client(config.qps, config.burst), leaseClient: client(5, 10, { budgetCapacity: 20, budgetRatio: 1 }) },
      config,
      clock: pclock,
      logger: logger(identity),
      identity,
      state,
      signal: sigterm.signal,
      exit: (code) => {
        log(`${identity} exits with status ${code}`);
        kill(proc);
        // The kubelet restarts the container: a new process, memory lost.
        clock.after(procRng.int(1_000, 5_000), () => startProcess());
      },
      instanceIds: seededIds(procRng),
    }).catch((e: unknown) => log(`${identity} failed: ${String(e)}`));
    return proc;
  };

  const kill = (p: Proc): void => {
    if (p.clock.dead) return;
    p.clock.kill();
    net.dropStreams((s) => s.identity === p.identity);
  };

  const leader = (): Proc | undefined => {
    const lease = server.peek('leases', config.leaderElectionNamespace, config.leaderElectionId);
    const holder = ((lease?.['spec'] ?? {}) as { holderIdentity?: string }).holderIdentity;
    return procs.find((p) => p.identity === holder && !p.clock.dead) ?? procs.find((p) => !p.clock.dead);
  };

  // The user's CloneSet, then the controller replicas.
  let valid = true;
  for (const { name, scenario: s } of sets) {
    const created = server.write('user', 'POST', CS_PATH, cloneSetObject(s, name));
    if (created.status !== 201) throw new Error(`creating the CloneSet: ${created.body}`);
    const initial = server.peek('clonesets', NAMESPACE, name);
    valid &&= initial !== undefined && admissible(initial);
  }
  for (let i = 0; i < scenario.replicasOfController; i++) startProcess();

  let lastEditAt = 0;
  for (const { name: csName, scenario: s } of sets)
    for (const e of s.edits) {
      clock.at(e.at, () => {
        const cs = server.peek('clonesets', NAMESPACE, csName);
        if (cs === undefined) return;
        const spec = structuredClone(cs['spec']) as {
          replicas: number;
          template: { spec: { containers: { image: string }[] } };
          updateStrategy: { rollingUpdate: { partition?: number | string } };
          scaleStrategy?: { podsToDelete?: string[] };
        };
        if (e.kind === 'podsToDelete' || e.kind === 'specifiedDelete') {
          const pods = server
            .all('pods')
            .filter((p) => p.metadata.deletionTimestamp === undefined && (p.metadata.ownerReferences ?? []).some((r) => r.uid === cs.metadata.uid))
            .map((p) => p.metadata.name)
            .sort();
          const victim = pods[e.pick % Math.max(1, pods.length)];
          if (victim === undefined) return;
          if (e.kind === 'specifiedDelete') {
            const a = server.write('user', 'PATCH', `/api/v1/namespaces/${NAMESPACE}/pods/${victim}`, { metadata: { labels: { 'apps.kruise.io/specified-delete': 'true' } } });
            log(`user labels ${victim} apps.kruise.io/specified-delete → ${a.status}`);
            lastEditAt = clock.now();
            return;
          }
          spec.scaleStrategy = { ...spec.scaleStrategy, podsToDelete: [...(spec.scaleStrategy?.podsToDelete ?? []), victim] };
        }
        if (e.kind === 'scale') spec.replicas = e.replicas;
        if (e.kind === 'image') {
          const c = spec.template.spec.containers[0];
          if (c !== undefined) c.image = e.image;
        }
        if (e.kind === 'partition') spec.updateStrategy.rollingUpdate.partition = e.partition;
        const next = { ...cs, spec };
        if (!admissible(next)) return;
        const a = server.write('user', 'PUT', `${CS_PATH}/${csName}`, next);
        log(`user ${e.kind} ${csName} ${JSON.stringify(e)} → ${a.status}`);
        lastEditAt = clock.now();
      });
    }

  // The user's lifecycle-hook handler (a controller of the user's, as bench/chaos-workload.ts `runHookHandler`):
  // a moment after a pod of ours changes, it releases a pod waiting in PreparingDelete or PreparingUpdate (or
  // terminating) by removing the hook finalizer, and hooks a Normal or Updated pod again by adding it.
  const hooked = new Set(sets.filter((x) => x.scenario.hooks !== 'none').map((x) => x.name));
  if (hooked.size > 0) {
    const handling = new Set<string>();
    server.observe({
      onMutation: (m) => {
        if (m.plural !== 'pods' || m.after === undefined || m.origin === 'user-hooks') return;
        if (!(m.after.metadata.ownerReferences ?? []).some((r) => r.controller === true && hooked.has(r.name))) return;
        const { namespace, name, uid } = m.after.metadata;
        if (handling.has(uid)) return;
        handling.add(uid);
        clock.after(kubeletRng.int(200, 3_000), () => {
          handling.delete(uid);
          const pod = server.peek('pods', namespace, name);
          if (pod === undefined || pod.metadata.uid !== uid) return;
          const state = pod.metadata.labels?.['lifecycle.apps.kruise.io/state'];
          const finalizers = pod.metadata.finalizers ?? [];
          const held = finalizers.includes(HOOK_FINALIZER);
          const release = held && (state === 'PreparingDelete' || state === 'PreparingUpdate' || pod.metadata.deletionTimestamp !== undefined);
          const hook = !held && pod.metadata.deletionTimestamp === undefined && (state === 'Normal' || state === 'Updated');
          if (!release && !hook) return;
          const next = release ? finalizers.filter((f) => f !== HOOK_FINALIZER) : [...finalizers, HOOK_FINALIZER];
          const a = server.write('user-hooks', 'PATCH', `/api/v1/namespaces/${namespace ?? ''}/pods/${name}`, { metadata: { finalizers: next } });
          log(`user hook handler ${release ? 'releases' : 'hooks'} ${name} (${state ?? 'no state'}) → ${a.status}`);
        });
      },
    });
  }

  // Episodes.
  const snapshots: { at: number; snap: ReturnType<ApiServer['snapshot']> }[] = [];
  if (plan.episodes.some((e) => e.kind === 'etcdRestore')) {
    const take = (): void => {
      snapshots.push({ at: clock.now(), snap: server.snapshot() });
      if (snapshots.length > 40) snapshots.shift();
      if (clock.now() < FAULT_WINDOW_MS) clock.after(1_000, take);
    };
    clock.after(1_000, take);
  }
  let faultsEndAt = 0;
  let restored = false;
  // BUGGIFY: a stop-the-world pause (a long GC in a busy client) of a process just as a write of it has to wait for
  // a socket, at most once per run: the case the fence deadline, counted from before that wait, exists for.
  let queuedPaused = false;
  if (queuedPauses) {
    net.onQueuedWrite = (identity) => {
      const p = procs.find((x) => x.identity === identity);
      if (queuedPaused || p === undefined || p.clock.dead || p.clock.paused || clock.now() > FAULT_WINDOW_MS || pool.rng?.chance(0.25) !== true) return;
      queuedPaused = true;
      const forMs = pool.rng.int(5_000, 25_000);
      faults.queuedPause++;
      log(`fault: ${identity} paused for ${forMs} ms with a write waiting for a socket (queuedPause)`);
      p.clock.pause();
      clock.after(forMs, () => {
        log(`${identity} resumes`);
        p.clock.resume();
      });
      faultsEndAt = Math.max(faultsEndAt, clock.now() + forMs);
    };
  }
  const episode = (e: Episode): void => {
    faults[e.kind]++;
    const until = (ms: number): void => {
      faultsEndAt = Math.max(faultsEndAt, clock.now() + ms);
    };
    until(0);
    switch (e.kind) {
      case 'watchDrop':
        log(`fault: ${net.dropStreams()} watch connections dropped`);
        return;
      case 'watchStall':
        net.stall(e.forMs);
        until(e.forMs);
        log(`fault: watches stalled for ${e.forMs} ms`);
        return;
      case 'slowCache':
        net.slow(e.forMs, e.delayMs);
        until(e.forMs + e.delayMs);
        log(`fault: watch events ${e.delayMs} ms late for ${e.forMs} ms`);
        return;
      case 'compaction':
        server.compact();
        log('fault: watch history compacted');
        return;
      case 'wallStep': {
        const p = e.target === 'leader' ? leader() : e.target === 'standby' ? procs.find((x) => !x.clock.dead && x !== leader()) : undefined;
        if (e.target === 'apiserver') server.stepWall(e.byMs);
        else p?.clock.stepWall(e.byMs);
        log(`fault: wall clock of ${e.target === 'apiserver' ? 'the API server' : (p?.identity ?? 'nobody')} stepped by ${e.byMs / 1000}s`);
        return;
      }
      case 'restart': {
        const p = leader();
        if (p === undefined) return;
        log(`fault: ${p.identity} killed (memory lost); a new process in ${e.downMs} ms`);
        kill(p);
        clock.after(e.downMs, () => startProcess());
        until(e.downMs);
        return;
      }
      case 'pause': {
        const p = leader();
        if (p === undefined || p.clock.dead) return;
        log(`fault: ${p.identity} paused for ${e.forMs} ms`);
        p.clock.pause();
        clock.after(e.forMs, () => {
          log(`${p.identity} resumes`);
          p.clock.resume();
        });
        until(e.forMs);
        return;
      }
      case 'etcdRestore': {
        const target = snapshots.find((s) => s.at >= clock.now() - e.backMs);
        if (target === undefined) return;
        log(`fault: etcd restored to its state at ${(target.at / 1000).toFixed(1)}s`);
        for (const x of sets) x.checker.restored();
        restored = true;
        server.restore(target.snap);
        return;
      }
    }
  };
  for (const e of plan.episodes) clock.at(e.at, () => episode(e));

  let events = 0;
  let convergedAt: number | undefined;
  // An etcd restore undoes writes whose expectations the controller still holds (a deleted pod is back, a status
  // resourceVersion went backwards): it plans again once they time out (--expectation-timeout), as Kruise does.
  const convergenceBoundMs = (): number => CONVERGENCE_BOUND_MS + (restored ? config.expectationTimeoutMs : 0);
  // The run asks after every event: the part known from the start is computed once.
  const plannedQuietAt = Math.max(...sets.map((x) => x.scenario.edits.at(-1)?.at ?? 0), plan.episodes.at(-1)?.at ?? 0);
  const quietAt = (): number => Math.max(lastEditAt, faultsEndAt, plannedQuietAt);
  const notConverged = (): string | undefined => {
    for (const x of sets) {
      const why = x.checker.notConverged();
      if (why !== undefined) return sets.length > 1 ? `${x.name}: ${why}` : why;
    }
    return undefined;
  };
  try {
    for (;;) {
      await settle();
      if (sets.some((x) => x.checker.violations.length > 0)) break;
      const now = clock.now();
      if (now >= quietAt() && valid) {
        if (notConverged() === undefined) {
          convergedAt = now;
          break;
        }
      }
      const next = clock.nextAt();
      if (next === undefined) break;
      if (next > quietAt() + convergenceBoundMs()) break;
      clock.fireNext();
      events++;
    }
    if (convergedAt === undefined && violations().length === 0 && valid) {
      checker.convergenceFailed(notConverged() ?? 'ran out of events', convergenceBoundMs());
    }
  } finally {
    for (const p of procs) kill(p);
    Math.random = realRandom;
    Error.stackTraceLimit = realStackTraceLimit;
  }
  for (const v of violations()) log(`VIOLATION ${v.invariant}: ${v.message}`);
  return {
    seed: opts.seed,
    events,
    requests: net.requests,
    faults,
    violations: violations(),
    converged: convergedAt !== undefined,
    convergedAfterMs: convergedAt === undefined ? undefined : convergedAt - quietAt(),
    virtualMs: clock.now(),
    trace,
    scenario: JSON.stringify({ ...scenario, ...(second !== undefined ? { second } : {}), kubeletActions: kubelet.actions, faultPlan: plan.rates }),
  };
}
