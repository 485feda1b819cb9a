// `rollout status`: is the rollout of a CloneSet complete, for the partition in force? Pure evaluation, modelled on
// kubectl's DeploymentStatusViewer, plus the waiting loop (a watch on the CloneSet, never polling). Unlike
// kubectl-kruise's (kruise-tools#67) it ends: exit 0 when done, an error on ProgressDeadlineExceeded or timeout.
import { setTimeout as sleep } from 'node:timers/promises';
import type { CloneSet } from '../api/cloneset.ts';
import { partitionAbs } from '../cloneset/plan/int-or-percent.ts';
import { ApiError, ConnectionError, isGone } from '../kube/api-error.ts';
import type { Session } from './session.ts';
import { PluginError, RESOURCE } from './session.ts';

export type RolloutVerdict = { readonly done: true; readonly message: string } | { readonly done: false; readonly message: string; readonly failed?: boolean };

/** The longest wait between two attempts to watch again, whatever Retry-After says. */
const MAX_WATCH_RETRY_DELAY_MS = 10_000;

/**
 * Whether a failed watch is worth reading the object again and watching on (as kubectl's RetryWatcher does), and
 * after how long; `undefined`: report the error. 410 (compacted) and a broken stream: at once. The API server
 * asking to come back: after its Retry-After (1 s without one). That includes 429 "storage is (re)initializing",
 * which it answers for a few seconds after a CRD is updated (a rotated conversion caBundle, for one). A 5xx, or no
 * answer at all: after 1 s.
 */
export function watchRetryDelayMs(e: unknown): number | undefined {
  if (isGone(e) || (e instanceof Error && e.message.startsWith('watch error'))) return 0;
  if (e instanceof ApiError && (e.code === 429 || e.code >= 500)) return Math.min(e.retryAfterMs ?? 1000, MAX_WATCH_RETRY_DELAY_MS);
  if (e instanceof ConnectionError) return 1000;
  return undefined;
}

/**
 * The revision a ProgressDeadlineExceeded condition is about: the controllers (ours, Kruise) write "CloneSet
 * revision <name> has timed out progressing". A controller that keeps the condition across a new update revision
 * (Kruise before HEAD; ours for the one pass in which a stale status is read) would otherwise fail `rollout status`
 * right after an undo, on the timeout of the revision the undo left. A message of another form is taken as it is.
 */
export function timedOutRevision(message: string | undefined): string | undefined {
  const m = /^CloneSet revision (\S+) has timed out progressing$/.exec(message ?? '');
  return m === null ? undefined : m[1];
}

export function rolloutVerdict(cs: CloneSet): RolloutVerdict {
  const v = verdictOf(cs);
  const note = deadlineActionNote(cs);
  return note === '' ? v : { ...v, message: `${v.message}${note}` };
}

function verdictOf(cs: CloneSet): RolloutVerdict {
  const name = cs.metadata.name ?? '';
  const status = cs.status;
  const generation = cs.metadata.generation ?? 0;
  if (status === undefined || (status.observedGeneration ?? 0) < generation) {
    return { done: false, message: `Waiting for cloneset "${name}" spec update to be observed...` };
  }
  const progressing = status.conditions?.find((c) => c.type === 'Progressing');
  const timedOut = progressing?.reason === 'ProgressDeadlineExceeded' ? timedOutRevision(progressing.message) : undefined;
  if (progressing?.reason === 'ProgressDeadlineExceeded' && (timedOut === undefined || timedOut === status.updateRevision)) {
    return {
      done: false,
      failed: true,
      message: `cloneset "${name}" exceeded its progress deadline${progressing.message !== undefined && progressing.message !== '' ? `: ${progressing.message}` : ''}`,
    };
  }
  const failedUpdate = status.conditions?.find((c) => c.type === 'FailedUpdate' && c.status === 'True');
  const replicas = cs.spec.replicas ?? 1;
  const partition = partitionAbs(cs.spec.updateStrategy?.partition, replicas);
  const expected = status.expectedUpdatedReplicas ?? Math.max(0, replicas - partition);
  const updatedAvailable = status.updatedAvailableReplicas ?? status.updatedReadyReplicas;
  const paused = cs.spec.updateStrategy?.paused === true ? ' (paused: resume with kubectl cloneset rollout resume ' + name + ')' : '';
  const failure = failedUpdate?.message !== undefined ? ` (last update failure: ${failedUpdate.message})` : '';
  if (status.updatedReplicas < expected) {
    return { done: false, message: `Waiting for rollout to finish: ${status.updatedReplicas} out of ${expected} new replicas have been updated...${paused}${failure}` };
  }
  if (status.replicas > replicas) {
    return { done: false, message: `Waiting for rollout to finish: ${status.replicas - replicas} old replicas are pending termination...` };
  }
  if (updatedAvailable < expected) {
    return { done: false, message: `Waiting for rollout to finish: ${updatedAvailable} of ${expected} updated replicas are available...` };
  }
  if (status.availableReplicas < replicas && status.replicas < replicas) {
    return { done: false, message: `Waiting for rollout to finish: ${status.replicas} of ${replicas} replicas exist...` };
  }
  const partial = expected < replicas ? ` (partition ${partition}: ${expected} of ${replicas} replicas updated)` : '';
  return { done: true, message: `cloneset "${name}" successfully rolled out${partial}` };
}

/** The action cloneset-controller.io/progress-deadline-action took last (docs/features.md#progress-deadline-action), if any. */
export function deadlineActionNote(cs: CloneSet): string {
  const taken = cs.status?.conditions?.find((c) => c.type === 'ProgressDeadlineActionTaken' && c.status === 'True');
  if (taken === undefined) return '';
  const what = taken.reason === 'RolledBack' ? 'rolled back' : 'paused';
  return ` [progress deadline: ${what} at ${taken.lastTransitionTime ?? '?'}: ${taken.message ?? ''}]`;
}

export interface StatusOptions {
  readonly watch: boolean;
  /** 0 = no limit. */
  readonly timeoutMs: number;
  readonly write: (line: string) => void;
}

/** Waits for the verdict; resolves with it when done, throws PluginError on a failed rollout or the timeout. */
export async function waitForRollout(s: Session, name: string, first: CloneSet, opts: StatusOptions): Promise<void> {
  let last = '';
  const report = (cs: CloneSet): RolloutVerdict => {
    const v = rolloutVerdict(cs);
    if (v.message !== last) {
      if (v.done || !('failed' in v && v.failed === true)) opts.write(v.message);
      last = v.message;
    }
    return v;
  };
  const check = (cs: CloneSet): boolean => {
    const v = report(cs);
    if (!v.done && v.failed === true) throw new PluginError(v.message);
    return v.done;
  };
  if (check(first) || !opts.watch) return;
  const abort = new AbortController();
  let timedOut = false;
  const timer =
    opts.timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          abort.abort();
        }, opts.timeoutMs)
      : undefined;
  let rv = first.metadata.resourceVersion ?? '';
  let finished = false;
  let failure: unknown;
  try {
    while (!finished && !abort.signal.aborted) {
      try {
        await s.client.watch(
          s.api.resource,
          s.namespace,
          { resourceVersion: rv, timeoutSeconds: 300, allowWatchBookmarks: true, fieldSelector: `metadata.name=${name}` },
          (e) => {
            if (finished) return;
            if (e.type === 'ERROR') throw new Error(`watch error: ${JSON.stringify(e.object)}`);
            rv = e.object.metadata?.resourceVersion ?? rv;
            if (e.type === 'BOOKMARK') return;
            if (e.type === 'DELETED') throw new PluginError(`${RESOURCE} "${name}" was deleted while waiting for its rollout`);
            try {
              if (check(s.api.toInternal(e.object as CloneSet))) {
                finished = true;
                abort.abort();
              }
            } catch (err) {
              failure = err;
              finished = true;
              abort.abort();
            }
          },
          abort.signal,
        );
      } catch (e) {
        if (e instanceof PluginError) throw e;
        if (abort.signal.aborted) break;
        const waitMs = watchRetryDelayMs(e);
        if (waitMs === undefined) throw e;
        if (waitMs > 0) await sleep(waitMs, undefined, { signal: abort.signal }).catch(() => undefined);
        if (abort.signal.aborted) break;
      }
      if (!finished && !abort.signal.aborted) {
        const cs = s.api.toInternal(await s.client.get<CloneSet>(s.api.resource, s.namespace, name));
        rv = cs.metadata.resourceVersion ?? '';
        if (check(cs)) finished = true;
      }
    }
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
  if (failure !== undefined) throw failure;
  if (!finished && timedOut) throw new PluginError(`timed out waiting for the rollout of ${RESOURCE} "${name}" to finish: ${last}`);
}
