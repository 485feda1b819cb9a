// How the controller process runs its manager: alone, or under leader election that fences.
//
// Two signals stop the work, in this order:
// - `stopping` (SIGTERM/SIGINT, or the lease lost): the queue takes no more keys, reconciles and the executor
//   start no more writes (slow-start batches included), requests not yet sent are dropped, the watches end;
// - `fence` (the lease lost, or the drain bound passed): every in-flight request of the controller's clients has
//   its socket destroyed and every later one fails at once — a replica that is not the leader cannot write.
// Every request also carries the lease's fence deadline (LeaderElector.fenceRemainingMs, monotonic clock), counted
// from before it waits for a socket: a request not on the wire by then is never sent, one not answered by then is
// cut — after a long pause (GC, SIGSTOP) or behind a full socket queue, no write goes out on an expired lease.
// On SIGTERM the in-flight reconciles drain (bounded by DRAIN_TIMEOUT_MS) while the lease is still renewed, then
// the lease is released so the standby leads at once (it watches the Lease; at its next retry if it cannot).
// On lease loss the process exits at once with status 1, like controller-runtime: its successor may already be
// writing.
import type { Logger } from 'pino';
import type { CloneSetManager } from './cloneset/manager.ts';
import { type ManagerObservability, startCloneSetManager } from './cloneset/manager.ts';
import type { InstanceIdSource } from './cloneset/plan/instance-ids.ts';
import type { ControllerConfig } from './config.ts';
import type { KubeClient } from './kube/client.ts';
import type { MonotonicClock } from './runtime/clock.ts';
import { LeaderElector } from './runtime/leader-election.ts';
import { apiLeasePort } from './runtime/lease-port.ts';

/** How long SIGTERM waits for in-flight reconciles (below the pod's default 30 s termination grace period). */
export const DRAIN_TIMEOUT_MS = 20_000;

export interface ProcessClients {
  /** Pods, PVCs, revisions, CloneSets: fenced per leadership term. */
  readonly client: KubeClient;
  readonly eventsClient: KubeClient;
  /** The Lease only: its own connections and rate limiter, so a renewal never queues behind pod creates. */
  readonly leaseClient: KubeClient;
}

/** What the probes and metrics read while the process runs. */
export interface ProcessState {
  manager: CloneSetManager | undefined;
  elector: LeaderElector | undefined;
}

export interface RunOptions {
  readonly clients: ProcessClients;
  readonly config: ControllerConfig;
  readonly clock: MonotonicClock;
  readonly logger: Logger;
  /** `<hostname>_<uuid>`: the Lease holder identity (and, in main.ts, the client user agent). */
  readonly identity: string;
  readonly state: ProcessState;
  /** SIGTERM/SIGINT. */
  readonly signal: AbortSignal;
  /** Ends the process at once (process.exit in main.ts). */
  readonly exit: (code: number) => void;
  readonly drainTimeoutMs?: number;
  /** New instance ids (the simulation seeds them; crypto-random when absent). */
  readonly instanceIds?: InstanceIdSource;
  readonly observability?: ManagerObservability;
}

/** /readyz: a leader is ready when its caches synced; a standby when it can reach the API server. */
export function isReady(state: ProcessState): boolean {
  if (state.manager !== undefined) return state.manager.informers.every((i) => i.hasSynced());
  return state.elector?.apiReachable() ?? false;
}

/**
 * One term of work: the manager on fenced views of the clients. `fenceMs` (leader election only) is the lease's
 * fence deadline every request carries, so writes queued across a long pause never go out on an expired lease.
 */
function startTerm(o: RunOptions, fence: AbortSignal, stopping: AbortSignal, fenceMs?: () => number): CloneSetManager {
  const bind = (c: KubeClient): KubeClient => c.fenced(fence, { unsent: stopping, ...(fenceMs === undefined ? {} : { fence: fenceMs }) });
  const manager = startCloneSetManager(bind(o.clients.client), bind(o.clients.eventsClient), o.config, o.clock, o.logger, stopping, o.observability, o.instanceIds);
  o.state.manager = manager;
  return manager;
}

/** Resolves when the manager finished, or after `ms` (whichever is first); never rejects. */
function settledWithin(manager: CloneSetManager, ms: number, logger: Logger): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      logger.warn({ drainTimeoutMs: ms }, 'in-flight reconciles did not finish in time; cancelling their requests');
      resolve();
    }, ms);
    manager.done.then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      () => {
        clearTimeout(timer);
        resolve();
      }, // aborted before the caches synced
    );
  });
}

/** Runs until SIGTERM (returns 0) or until the lease is lost (calls `exit(1)`). */
export async function runController(o: RunOptions): Promise<number> {
  const drainMs = o.drainTimeoutMs ?? DRAIN_TIMEOUT_MS;
  if (!o.config.leaderElect) {
    const stopping = new AbortController();
    const fence = new AbortController();
    const manager = startTerm(o, fence.signal, stopping.signal);
    await new Promise<void>((resolve) => {
      if (o.signal.aborted) resolve();
      else o.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    stopping.abort();
    await settledWithin(manager, drainMs, o.logger);
    fence.abort();
    await manager.done.catch(() => undefined);
    return 0;
  }
  const elector = new LeaderElector({
    port: apiLeasePort(o.clients.leaseClient),
    namespace: o.config.leaderElectionNamespace,
    name: o.config.leaderElectionId,
    identity: o.identity,
    clock: o.clock,
    logger: o.logger,
    leaseDurationMs: o.config.leaseDurationMs,
    renewDeadlineMs: o.config.renewDeadlineMs,
    retryPeriodMs: o.config.retryPeriodMs,
  });
  o.state.elector = elector;
  const stopping = new AbortController();
  let manager: CloneSetManager | undefined;
  await elector.run(o.signal, {
    onStartedLeading: (leading) => {
      o.logger.info({ identity: o.identity }, 'became leader; starting the controller');
      leading.addEventListener('abort', () => stopping.abort(), { once: true });
      manager = startTerm(o, leading, stopping.signal, () => elector.fenceRemainingMs());
    },
    drain: async () => {
      o.logger.info('stopping: no new work; draining in-flight reconciles before releasing the lease');
      stopping.abort();
      if (manager !== undefined) await settledWithin(manager, drainMs, o.logger);
    },
    onStoppedLeading: (reason) => {
      if (reason === 'lost') {
        // The leading signal has already fenced our clients; exit before anything else runs, so that no
        // write of ours can race the successor's (controller-runtime: "leader election lost").
        o.logger.error('lost the leader lease; exiting');
        o.exit(1);
      }
    },
  });
  await manager?.done.catch(() => undefined);
  return 0;
}
