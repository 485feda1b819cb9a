// The controller under chaos: two replicas of the real binary with --leader-elect (the shipped Deployment's
// shape), both scoped to the run's namespace with the Lease there, talking to the API server through the fault
// proxy. A replica that exits — killed by a fault, or exiting on its own after it lost the lease — is started
// again after a second in the same slot, like the kubelet restarting a container. Each process announces its
// leader-election identity in its log; that is how a Lease holder is mapped back to a process.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './harness.ts';
import { freePort } from '../tools/localcluster/free-port.ts';
import { builtControllerMain, CONTROLLER_NODE_FLAGS } from '../tools/localcluster/controller-build.ts';

export const LEASE_NAME = 'cloneset-controller';

interface Slot {
  readonly index: number;
  proc: ChildProcess | undefined;
  identity: string | undefined;
  starts: number;
  /** Date.now() when the running process announced its identity (it reads the Lease right after). */
  announcedAt: number | undefined;
}

export class Replicas {
  readonly #slots: Slot[];
  readonly #kubeconfig: string;
  readonly #ns: string;
  readonly #logDir: string;
  readonly #extraArgs: readonly string[];
  #stopping = false;
  exits = 0;

  constructor(kubeconfig: string, ns: string, count: number, extraArgs: readonly string[]) {
    this.#kubeconfig = kubeconfig;
    this.#ns = ns;
    this.#extraArgs = extraArgs;
    this.#logDir = path.join(ROOT, '.cluster', 'chaos-logs', ns);
    mkdirSync(this.#logDir, { recursive: true });
    this.#slots = Array.from({ length: count }, (_, index) => ({ index, proc: undefined, identity: undefined, starts: 0, announcedAt: undefined }));
    for (const s of this.#slots) void this.#start(s);
  }

  get logDir(): string {
    return this.#logDir;
  }

  async #start(slot: Slot): Promise<void> {
    // Real metrics and probe ports, as in the Deployment; no webhook server (the run's own webhook process serves
    // admission and conversion, in URL mode, and a replica's would rewrite the webhook objects to Service mode).
    const [metrics, probes] = [await freePort(), await freePort()];
    slot.starts++;
    slot.identity = undefined;
    slot.announcedAt = undefined;
    const out = createWriteStream(path.join(this.#logDir, `replica-${String(slot.index)}-${String(slot.starts)}.log`));
    const proc = spawn(
      process.execPath,
      [
        ...CONTROLLER_NODE_FLAGS,
        builtControllerMain(),
        '--kubeconfig',
        this.#kubeconfig,
        '-n',
        this.#ns,
        '--leader-elect',
        `--leader-election-namespace=${this.#ns}`,
        `--leader-election-id=${LEASE_NAME}`,
        `--metrics-bind-address=127.0.0.1:${String(metrics)}`,
        `--health-probe-bind-address=127.0.0.1:${String(probes)}`,
        '--webhook-port=0',
        '--log-level=info',
        ...this.#extraArgs,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    slot.proc = proc;
    // The controller logs on stderr (src/logging.ts); stdout is read the same way in case a build prints there.
    let buf = '';
    const read = (b: Buffer): void => {
      out.write(b);
      if (slot.identity !== undefined) return;
      buf += b.toString();
      const m = /"identity":"([^"]+)"/.exec(buf);
      if (m !== null) {
        slot.identity = m[1];
        slot.announcedAt = Date.now();
      }
    };
    proc.stdout.on('data', read);
    proc.stderr.on('data', read);
    proc.on('close', (code, sig) => {
      out.end(`[chaos] replica exited (${sig ?? `code ${String(code)}`})\n`);
      if (slot.proc !== proc) return;
      slot.proc = undefined;
      this.exits++;
      if (!this.#stopping) setTimeout(() => void (!this.#stopping && slot.proc === undefined && this.#start(slot)), 1000).unref();
    });
  }

  #byIdentity(identity: string | undefined): Slot | undefined {
    return identity === undefined ? undefined : this.#slots.find((s) => s.identity === identity && s.proc !== undefined);
  }

  /** The running process of the given leader identity, else of any other replica. */
  pid(which: 'leader' | 'standby', leader: string | undefined): number | undefined {
    const l = this.#byIdentity(leader);
    const s = which === 'leader' ? l : this.#slots.find((x) => x !== l && x.proc !== undefined);
    return s?.proc?.pid;
  }

  /**
   * A replica other than `leader` has been up for `ms` (it has read the Lease by then). A leader fault while the
   * other replica is itself still restarting is two faults at once: the successor must first watch the lease for
   * a full lease duration from its own start, so the takeover would measure the restart, not the election.
   */
  standbyUp(leader: string | undefined, ms: number): boolean {
    const l = this.#byIdentity(leader);
    return this.#slots.some((x) => x !== l && x.proc !== undefined && x.announcedAt !== undefined && Date.now() - x.announcedAt >= ms);
  }

  signal(pid: number, sig: NodeJS.Signals): void {
    try {
      process.kill(pid, sig);
    } catch {
      // exited meanwhile
    }
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.all(
      this.#slots.map(async (s) => {
        const p = s.proc;
        if (p === undefined || p.exitCode !== null || p.signalCode !== null) return;
        const exited = new Promise((r) => p.once('exit', r));
        p.kill('SIGCONT');
        p.kill('SIGTERM');
        const t = setTimeout(() => p.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(t);
      }),
    );
  }
}
