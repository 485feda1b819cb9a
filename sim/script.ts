// A scripted run of the simulation: the same pieces as a seed's run (sim/harness.ts) — the real controller
// process (leader election, informers, work queue, expectations, executor, planner) over the real client, the
// in-memory API server, the kubelet and the checker's invariants — but with no faults and a CloneSet and edits the
// test states, so that a test can tell a whole story (a rollout, a pause, a partition change) and look at the
// outcome. The checker judges every change as in a seed's run; `violations` holds what it found.
import { pino } from 'pino';
import { KubeClient } from '../src/kube/client.ts';
import { RateLimits } from '../src/kube/rate-limits.ts';
import { parseConfig } from '../src/config.ts';
import { runController, type ProcessState } from '../src/leadership.ts';
import { INSTANCE_ID_ALPHABET } from '../src/cloneset/plan/instance-ids.ts';
import { ApiServer, type Mutation, type Obj } from './api-server.ts';
import { Checker, type Violation } from './checker.ts';
import { ProcessClock, SimClock } from './clock.ts';
import { faultCounts } from './faults.ts';
import { Kubelet } from './kubelet.ts';
import { Network } from './network.ts';
import { Rng } from './random.ts';

export const SCRIPT_NAMESPACE = 'default';
const CS_PATH = `/apis/apps.kruise.io/v1beta1/namespaces/${SCRIPT_NAMESPACE}/clonesets`;

export interface ScriptOptions {
  /** The user's CloneSet (apps.kruise.io/v1beta1, namespace default). */
  readonly cloneSet: Record<string, unknown> & { readonly metadata: { readonly name: string; readonly namespace?: string } };
  /** Draws the network's latencies, the kubelet's delays and the controller's jitter. */
  readonly seed?: number;
  /** Controller flags besides the harness's (e.g. `--cloneset-surge-rule=kruise`, `--feature-gates=…`). */
  readonly args?: readonly string[];
  /** Images whose readiness probe never passes. */
  readonly brokenImages?: readonly string[];
}

/** Spec fields a script edits (the rest of the spec is kept). */
export type SpecEdit = (spec: Record<string, unknown>) => Record<string, unknown>;

function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export class Script {
  readonly clock = new SimClock();
  readonly server: ApiServer;
  readonly checker: Checker;
  readonly #name: string;
  readonly #trace: string[] = [];
  readonly #procClock: ProcessClock;
  readonly #realRandom = Math.random;

  constructor(opts: ScriptOptions) {
    const rng = new Rng(opts.seed ?? 1);
    const netRng = rng.fork();
    const kubeletRng = rng.fork();
    const procRng = rng.fork();
    this.#name = opts.cloneSet.metadata.name;
    this.server = new ApiServer(this.clock);
    const log = (line: string): void => {
      this.#trace.push(`${(this.clock.now() / 1000).toFixed(3).padStart(8)} ${line}`);
    };
    const noFaults = { rates: { lostAnswer: 0, conflict: 0, throttle: 0, nodeFlap: 0, nodeFlapWithinMs: 0, deleteCoincidence: 0 }, episodes: [], windowEndMs: 0 };
    const net = new Network(this.clock, this.server, netRng, noFaults, faultCounts(), log, rng.fork());
    new Kubelet(this.server, this.clock, kubeletRng, undefined, opts.brokenImages ?? []);
    const isController = (origin: string): boolean => origin.startsWith('controller-');
    this.checker = new Checker(this.server, this.clock, SCRIPT_NAMESPACE, this.#name, isController, (identity, rv) => net.podsSeen.reachedAt(identity, rv));
    net.onWrite = (origin, method, path) => this.checker.onWrite(origin, method, path);
    this.server.observe({
      onMutation: (m) => {
        if (m.plural !== 'events' && m.plural !== 'leases') log(`${m.origin} ${m.verb} ${m.plural}/${m.after?.metadata.name ?? m.before?.metadata.name ?? ''}`);
      },
    });

    const created = this.server.write('user', 'POST', CS_PATH, opts.cloneSet);
    if (created.status !== 201) throw new Error(`creating the CloneSet: ${created.body}`);

    const parsed = parseConfig(['--leader-elect', '--metrics-bind-address=0', '--health-probe-bind-address=0', '--webhook-port=0', ...(opts.args ?? [])], {});
    if (parsed === 'help') throw new Error('unreachable: --help was not passed');
    const config = parsed;
    // The controller's jitter (informer watch timeouts, leader election) comes from Math.random: seeded until stop().
    Math.random = () => procRng.float();
    const identity = 'controller-0';
    const pclock = new ProcessClock(this.clock);
    this.#procClock = pclock;
    const time = pclock.bucketTime();
    const client = (qps: number, burst: number): KubeClient =>
      new KubeClient(net.transportFor({ identity, clock: pclock }), new RateLimits(qps, burst, time), {
        random: () => procRng.float(),
        time,
        policy: { requestTimeoutMs: config.requestTimeoutMs },
        watchIdleTimeoutMs: config.watchIdleTimeoutMs,
      });
    const state: ProcessState = { manager: undefined, elector: undefined };
    runController({
      clients: { client: client(config.qps, config.burst), eventsClient: client(config.qps, config.burst), leaseClient: client(5, 10) },
      config,
      clock: pclock,
      logger: pino({ level: 'silent' }),
      identity,
      state,
      signal: new AbortController().signal,
      exit: (code) => log(`${identity} exits with status ${code}`),
      instanceIds: { random: () => Array.from({ length: 5 }, () => INSTANCE_ID_ALPHABET[procRng.int(0, INSTANCE_ID_ALPHABET.length - 1)]).join('') },
    }).catch((e: unknown) => log(`${identity} failed: ${String(e)}`));
  }

  get violations(): readonly Violation[] {
    return this.checker.violations;
  }

  /** The last lines of what happened (writes by origin, virtual times), for assertion messages. */
  trace(lines = 60): string {
    return this.#trace.slice(-lines).join('\n');
  }

  /** Calls `fn` on every change the API server commits from now on. */
  observe(fn: (m: Mutation) => void): void {
    this.server.observe({ onMutation: fn });
  }

  cloneSet(): Obj {
    const cs = this.server.peek('clonesets', SCRIPT_NAMESPACE, this.#name);
    if (cs === undefined) throw new Error(`the CloneSet ${this.#name} is gone`);
    return cs;
  }

  /** The CloneSet's status as the controller last wrote it. */
  status(): Record<string, unknown> & { conditions?: readonly { type: string; status: string; reason?: string; message?: string; lastUpdateTime?: string }[] } {
    return (this.cloneSet()['status'] ?? {}) as ReturnType<Script['status']>;
  }

  /** The CloneSet's pods that are not terminating. */
  pods(): Obj[] {
    const uid = this.cloneSet().metadata.uid;
    return this.server
      .all('pods')
      .filter((p) => p.metadata.deletionTimestamp === undefined && (p.metadata.ownerReferences ?? []).some((r) => r.uid === uid && r.controller === true));
  }

  /** Active pods per image, e.g. { 'app:v1': 3, 'app:v2': 2 }. */
  images(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const p of this.pods()) {
      const image = ((p['spec'] ?? {}) as { containers?: readonly { image?: string }[] }).containers?.[0]?.image ?? '';
      out[image] = (out[image] ?? 0) + 1;
    }
    return out;
  }

  /** The user replaces the spec (a `kubectl apply`). */
  edit(fn: SpecEdit): void {
    const cs = this.cloneSet();
    const answer = this.server.write('user', 'PUT', `${CS_PATH}/${this.#name}`, { ...cs, spec: fn(structuredClone(cs['spec']) as Record<string, unknown>) });
    if (answer.status !== 200) throw new Error(`editing the CloneSet: ${answer.status} ${answer.body}`);
  }

  /** Someone deletes a pod (kubectl delete pod). */
  deletePod(name: string): void {
    const answer = this.server.write('user', 'DELETE', `/api/v1/namespaces/${SCRIPT_NAMESPACE}/pods/${name}`);
    if (answer.status !== 200) throw new Error(`deleting ${name}: ${answer.status} ${answer.body}`);
  }

  /** Runs events until `done()` holds (checked between events) or `withinMs` of virtual time pass; false then. */
  async runUntil(done: () => boolean, withinMs: number): Promise<boolean> {
    const until = this.clock.now() + withinMs;
    for (;;) {
      await settle();
      if (done()) return true;
      const next = this.clock.nextAt();
      if (next === undefined || next > until) return false;
      this.clock.fireNext();
    }
  }

  /** Runs for `ms` of virtual time. */
  async runFor(ms: number): Promise<void> {
    await this.runUntil(() => false, ms);
  }

  /** Runs until the checker finds the pods, PVCs and status as the spec asks (sim/checker.ts `notConverged`). */
  async converge(withinMs = 180_000): Promise<void> {
    const ok = await this.runUntil(() => this.checker.notConverged() === undefined, withinMs);
    if (!ok) throw new Error(`not converged within ${withinMs / 1000}s: ${this.checker.notConverged() ?? ''}\n${this.trace()}`);
  }

  /** Stops the controller process and gives Math.random back. */
  stop(): void {
    this.#procClock.kill();
    Math.random = this.#realRandom;
  }
}
