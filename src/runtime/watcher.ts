// The list+watch loop as a pure state machine (in the spirit of kube-rs's `watcher`): `step(state, input)`
// returns the cache events, the next IO to do, and what to log. `runWatcher` is the thin IO driver around it.

import { errorText, isGone } from '../kube/api-error.ts';
import type { WatchEvent } from '../kube/client.ts';
import { WatchIdleError } from '../kube/transport.ts';
import type { KubeObject } from '../kube/types.ts';

export const BACKOFF_INITIAL_MS = 800;
export const BACKOFF_MAX_MS = 30_000;
/** The backoff starts over when the last failure is older than this (client-go's reflector: 2 min). */
export const BACKOFF_RESET_MS = 120_000;
/** A watch that ended (or got 410) sooner than this after it started is suspicious and is backed off. */
export const MIN_HEALTHY_WATCH_MS = 10_000;

export interface Backoff {
  readonly attempt: number;
  readonly lastFailureAt: number | undefined;
}

export type WatcherState =
  | { readonly phase: 'list'; readonly backoff: Backoff }
  | {
      readonly phase: 'watch';
      readonly resourceVersion: string;
      /** When the current watch was (or will be) opened. */
      readonly since: number;
      /** No event has moved the RV since the list that produced it. */
      readonly fromList: boolean;
      /** The current watch has delivered an event or a bookmark since it was opened. */
      readonly delivered: boolean;
      readonly backoff: Backoff;
    };

export type WatcherInput<T> =
  | { readonly type: 'listed'; readonly items: readonly T[]; readonly resourceVersion: string; readonly now: number }
  | { readonly type: 'listFailed'; readonly error: unknown; readonly now: number }
  | { readonly type: 'event'; readonly event: WatchEvent; readonly now: number }
  | { readonly type: 'watchEnded'; readonly now: number }
  | { readonly type: 'watchFailed'; readonly error: unknown; readonly now: number };

/** What the cache must do. `replace` is the whole (re)list, applied atomically. */
export type WatcherEvent<T> =
  | { readonly type: 'replace'; readonly items: readonly T[] }
  | { readonly type: 'apply'; readonly object: T }
  | { readonly type: 'delete'; readonly object: T };

/** The next IO: keep reading the open watch, or (after `delayMs`) list / open a watch. */
export type WatcherAction =
  | { readonly kind: 'continue' }
  | { readonly kind: 'list'; readonly delayMs: number }
  | { readonly kind: 'watch'; readonly resourceVersion: string; readonly delayMs: number };

export interface WatcherLog {
  readonly level: 'warn' | 'info' | 'debug';
  readonly msg: string;
  readonly err?: unknown;
}

export interface Step<T> {
  readonly state: WatcherState;
  readonly events: readonly WatcherEvent<T>[];
  readonly action: WatcherAction;
  readonly log?: WatcherLog;
}

const NO_BACKOFF: Backoff = { attempt: 0, lastFailureAt: undefined };

/** Start by listing, or (resume) by watching from a known resourceVersion with an empty cache. */
export function initialState(resumeFrom?: string, now = 0): { state: WatcherState; action: WatcherAction } {
  if (resumeFrom === undefined) return { state: { phase: 'list', backoff: NO_BACKOFF }, action: { kind: 'list', delayMs: 0 } };
  return {
    state: { phase: 'watch', resourceVersion: resumeFrom, since: now, fromList: false, delivered: false, backoff: NO_BACKOFF },
    action: { kind: 'watch', resourceVersion: resumeFrom, delayMs: 0 },
  };
}

/**
 * 800 ms, 1.6 s, 3.2 s … capped at 30 s; starts over after a quiet BACKOFF_RESET_MS, and (unlike client-go's
 * reflector) as soon as a watch has proved the server healthy again: it delivered an event or bookmark, or it
 * stayed open MIN_HEALTHY_WATCH_MS. The backoff is there to spare a server that keeps failing; without the
 * early reset, separate faults a few seconds apart (a restart, a dropped connection, a burst of 429s) add up as
 * if they were one, and the cache went 12.8 s, then 25.6 s blind after a single dropped connection (found by
 * `npm run chaos`, bench/chaos.ts).
 */
export function nextBackoff(b: Backoff, now: number): { backoff: Backoff; delayMs: number } {
  const fresh = b.lastFailureAt === undefined || now - b.lastFailureAt > BACKOFF_RESET_MS;
  const attempt = fresh ? 1 : b.attempt + 1;
  const delayMs = Math.min(BACKOFF_MAX_MS, BACKOFF_INITIAL_MS * 2 ** Math.min(attempt - 1, 30));
  return { backoff: { attempt, lastFailureAt: now }, delayMs };
}

const secs = (ms: number): string => `${(ms / 1000).toFixed(1)}s`;

export function step<T extends KubeObject>(state: WatcherState, input: WatcherInput<T>): Step<T> {
  switch (input.type) {
    case 'listed': {
      const watch = { phase: 'watch', resourceVersion: input.resourceVersion, since: input.now, fromList: true, delivered: false, backoff: state.backoff } as const;
      return {
        state: watch,
        events: [{ type: 'replace', items: input.items }],
        action: { kind: 'watch', resourceVersion: input.resourceVersion, delayMs: 0 },
        log: { level: 'debug', msg: `listed ${input.items.length} objects at resourceVersion ${input.resourceVersion}` },
      };
    }
    case 'listFailed': {
      const { backoff, delayMs } = nextBackoff(state.backoff, input.now);
      return {
        state: { phase: 'list', backoff },
        events: [],
        action: { kind: 'list', delayMs },
        log: { level: 'warn', msg: `list failed, retrying in ${secs(delayMs)}: ${errorText(input.error)}`, err: input.error },
      };
    }
    case 'event':
      return onEvent(state, input.event, input.now);
    case 'watchEnded':
    case 'watchFailed': {
      if (state.phase !== 'watch') return { state, events: [], action: { kind: 'list', delayMs: 0 } };
      if (input.type === 'watchFailed' && isGone(input.error)) return onGone(state, input.now, errorText(input.error));
      if (input.type === 'watchFailed' && input.error instanceof WatchIdleError) {
        // Silent for --watch-idle-timeout: a dead connection, or just a quiet resource. The API server's watch cache
        // sends a bookmark only once the resource's resourceVersion has moved past the watch's (a StorageClass
        // watch can stay silent for many minutes). Either way a new watch is the answer, at once: the silence
        // already spaced the attempts, and a quiet resource is no fault worth a warning.
        return {
          state: { ...state, since: input.now, delivered: false },
          events: [],
          action: { kind: 'watch', resourceVersion: state.resourceVersion, delayMs: 0 },
          log: { level: 'info', msg: `${errorText(input.error)}: a quiet resource or a dead connection; re-watching at once from resourceVersion ${state.resourceVersion}` },
        };
      }
      // A clean end is healthy when the watch lasted, or when it delivered something: the API server's watch cache
      // closes the watch of a client that reads too slowly (a controller busy with a burst of writes), and
      // client-go's reflector re-watches at once after such a close; waiting 800 ms left the cache that much
      // behind, every time (fifteen times in the first 25 s of a 5 000-pod fleet scale-up). A watch that ends
      // early with nothing delivered is still backed off below: no hot loop against a failing server.
      const lasted = input.now - state.since >= MIN_HEALTHY_WATCH_MS;
      if (input.type === 'watchEnded' && (lasted || state.delivered)) {
        return {
          state: { ...state, since: input.now, delivered: false },
          events: [],
          action: { kind: 'watch', resourceVersion: state.resourceVersion, delayMs: 0 },
          log: lasted
            ? { level: 'debug', msg: `watch ended, re-watching from resourceVersion ${state.resourceVersion}` }
            : { level: 'info', msg: `watch stream ended by the server after ${secs(input.now - state.since)}; re-watching at once from resourceVersion ${state.resourceVersion}` },
        };
      }
      const { backoff, delayMs } = nextBackoff(lasted ? NO_BACKOFF : state.backoff, input.now);
      const why = input.type === 'watchFailed' ? `watch failed: ${errorText(input.error)}` : `watch stream ended after ${secs(input.now - state.since)}`;
      return {
        state: { ...state, since: input.now + delayMs, delivered: false, backoff },
        events: [],
        action: { kind: 'watch', resourceVersion: state.resourceVersion, delayMs },
        log: {
          level: 'warn',
          msg: `${why}; re-watching from resourceVersion ${state.resourceVersion} in ${secs(delayMs)}`,
          ...(input.type === 'watchFailed' ? { err: input.error } : {}),
        },
      };
    }
  }
}

function onEvent<T extends KubeObject>(state: WatcherState, event: WatchEvent, now: number): Step<T> {
  if (state.phase !== 'watch') return { state, events: [], action: { kind: 'continue' } };
  if (event.type === 'ERROR') {
    const status = event.object;
    const code = typeof status === 'object' && status !== null && 'code' in status ? status.code : undefined;
    const reason = typeof status === 'object' && status !== null && 'reason' in status ? status.reason : undefined;
    const message = typeof status === 'object' && status !== null && 'message' in status ? String(status.message) : JSON.stringify(status);
    if (code === 410 || reason === 'Expired' || reason === 'Gone') return onGone(state, now, message);
    const { backoff, delayMs } = nextBackoff(state.backoff, now);
    return {
      state: { ...state, since: now + delayMs, delivered: false, backoff },
      events: [],
      action: { kind: 'watch', resourceVersion: state.resourceVersion, delayMs },
      log: { level: 'warn', msg: `watch error event (${String(code)} ${String(reason)}: ${message}); re-watching in ${secs(delayMs)}` },
    };
  }
  const rv = event.object.metadata?.resourceVersion;
  // Any event or bookmark: the server serves this watch again, so the next failure is a new incident.
  const served = state.backoff.attempt === 0 && state.delivered ? state : { ...state, delivered: true, backoff: NO_BACKOFF };
  const next = rv === undefined || rv === '' ? served : { ...served, resourceVersion: rv, fromList: false };
  if (event.type === 'BOOKMARK') return { state: next, events: [], action: { kind: 'continue' } };
  const object = event.object as T;
  const ev: WatcherEvent<T> = event.type === 'DELETED' ? { type: 'delete', object } : { type: 'apply', object };
  return { state: next, events: [ev], action: { kind: 'continue' } };
}

/**
 * 410 Gone: our resourceVersion was compacted away; only a relist can resync. Immediate, except when the
 * watch was opened from the RV of the list just made and failed at once (then back off: no hot loop).
 */
function onGone<T>(state: WatcherState & { phase: 'watch' }, now: number, message: string): Step<T> {
  const suspicious = state.fromList && now - state.since < MIN_HEALTHY_WATCH_MS;
  const { backoff, delayMs } = suspicious ? nextBackoff(state.backoff, now) : { backoff: state.backoff, delayMs: 0 };
  return {
    state: { phase: 'list', backoff },
    events: [],
    action: { kind: 'list', delayMs },
    log: {
      level: suspicious ? 'warn' : 'info',
      msg: `watch expired at resourceVersion ${state.resourceVersion} (410: ${message}); relisting${delayMs > 0 ? ` in ${secs(delayMs)}` : ''}`,
    },
  };
}

/** The IO the driver needs: a full paginated list, and one watch from a resourceVersion. */
export interface ListWatch<T> {
  list(): Promise<{ items: readonly T[]; resourceVersion: string }>;
  watch(resourceVersion: string, timeoutSeconds: number, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<void>;
}

export interface WatcherDriverOptions<T> {
  readonly source: ListWatch<T>;
  readonly sink: (events: readonly WatcherEvent<T>[]) => void;
  readonly log: (entry: WatcherLog) => void;
  readonly now: () => number;
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** In [0, 1): picks the watch timeoutSeconds in [300, 600) like client-go's reflector. */
  readonly random: () => number;
  readonly resumeFrom?: string;
}

export function watchTimeoutSeconds(random: number): number {
  return Math.floor(300 * (1 + random));
}

/** Runs list/watch until `signal` aborts. Never throws: every failure goes through `step` (log + backoff). */
export async function runWatcher<T extends KubeObject>(opts: WatcherDriverOptions<T>, signal: AbortSignal): Promise<void> {
  let { state, action } = initialState(opts.resumeFrom, opts.now());
  const apply = (s: Step<T>): void => {
    state = s.state;
    if (s.log !== undefined) opts.log(s.log);
    if (s.events.length > 0) opts.sink(s.events);
  };
  while (!signal.aborted) {
    if (action.kind === 'continue') throw new Error('watcher: continue outside a watch'); // unreachable by construction
    if (action.delayMs > 0) await opts.sleep(action.delayMs, signal);
    if (signal.aborted) return;
    if (action.kind === 'list') {
      const next = await listOnce(opts, signal, apply, () => state);
      if (next === undefined) return; // shutting down: not a failure worth a log line
      action = next;
      continue;
    }
    action = await watchOnce(
      opts,
      action.resourceVersion,
      signal,
      (s) => apply(s),
      () => state,
    );
  }
}

/**
 * One list, applied. A function of its own so that the listed objects as received (before the informer's
 * transform) are referenced by no frame once they are stored: a suspended async function keeps its locals, and
 * the loop above stays suspended for as long as the watch runs.
 */
async function listOnce<T extends KubeObject>(
  opts: WatcherDriverOptions<T>,
  signal: AbortSignal,
  apply: (s: Step<T>) => void,
  current: () => WatcherState,
): Promise<WatcherAction | undefined> {
  let s: Step<T>;
  try {
    const { items, resourceVersion } = await opts.source.list();
    s = step(current(), { type: 'listed', items, resourceVersion, now: opts.now() });
  } catch (error) {
    if (signal.aborted) return undefined;
    s = step(current(), { type: 'listFailed', error, now: opts.now() });
  }
  apply(s);
  return s.action;
}

async function watchOnce<T extends KubeObject>(
  opts: WatcherDriverOptions<T>,
  resourceVersion: string,
  signal: AbortSignal,
  apply: (s: Step<T>) => void,
  current: () => WatcherState,
): Promise<WatcherAction> {
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  let next: WatcherAction | undefined;
  try {
    await opts.source.watch(
      resourceVersion,
      watchTimeoutSeconds(opts.random()),
      (event) => {
        if (next !== undefined) return; // the stream is being torn down
        const s = step<T>(current(), { type: 'event', event, now: opts.now() });
        apply(s);
        if (s.action.kind !== 'continue') {
          next = s.action;
          stop.abort();
        }
      },
      stop.signal,
    );
    if (next !== undefined || signal.aborted) return next ?? { kind: 'list', delayMs: 0 };
    const s = step<T>(current(), { type: 'watchEnded', now: opts.now() });
    apply(s);
    return s.action;
  } catch (error) {
    if (next !== undefined || signal.aborted) return next ?? { kind: 'list', delayMs: 0 };
    const s = step<T>(current(), { type: 'watchFailed', error, now: opts.now() });
    apply(s);
    return s.action;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
