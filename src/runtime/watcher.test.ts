import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError, ConnectionError } from '../kube/api-error.ts';
import type { WatchEvent } from '../kube/client.ts';
import { WatchIdleError } from '../kube/transport.ts';
import type { KubeObject } from '../kube/types.ts';
import {
  initialState,
  nextBackoff,
  runWatcher,
  step,
  watchTimeoutSeconds,
  type ListWatch,
  type Step,
  type WatcherAction,
  type WatcherEvent,
  type WatcherInput,
  type WatcherLog,
  type WatcherState,
} from './watcher.ts';

const obj = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: 'ns', resourceVersion: rv } });
const gone = new ApiError(410, { code: 410, reason: 'Expired', message: 'too old resource version: 1 (42)' }, 'too old resource version');
const refused = new ConnectionError('https://127.0.0.1:6443', 'GET /api/v1/pods', new Error('connect ECONNREFUSED'));

/** Feeds inputs one by one, returning every step. */
function run(inputs: readonly WatcherInput<KubeObject>[], start: WatcherState = initialState().state): Step<KubeObject>[] {
  const steps: Step<KubeObject>[] = [];
  let state = start;
  for (const input of inputs) {
    const s = step(state, input);
    steps.push(s);
    state = s.state;
  }
  return steps;
}

const last = <T>(xs: readonly T[]): T => {
  const x = xs[xs.length - 1];
  if (x === undefined) throw new Error('empty');
  return x;
};

describe('watcher state machine', () => {
  it('lists, replaces the store at once, then watches from the list resourceVersion', () => {
    const [s] = run([{ type: 'listed', items: [obj('a', '5')], resourceVersion: '7', now: 0 }]);
    assert.deepEqual(s?.events, [{ type: 'replace', items: [obj('a', '5')] }]);
    assert.deepEqual(s?.action, { kind: 'watch', resourceVersion: '7', delayMs: 0 });
  });

  it('applies watch events and moves the resourceVersion, bookmarks included', () => {
    const steps = run([
      { type: 'listed', items: [], resourceVersion: '7', now: 0 },
      { type: 'event', event: { type: 'ADDED', object: obj('a', '8') }, now: 1 },
      { type: 'event', event: { type: 'DELETED', object: obj('a', '9') }, now: 2 },
      { type: 'event', event: { type: 'BOOKMARK', object: { metadata: { resourceVersion: '15' } } }, now: 3 },
    ]);
    assert.deepEqual(
      steps.slice(1).map((s) => s.events),
      [[{ type: 'apply', object: obj('a', '8') }], [{ type: 'delete', object: obj('a', '9') }], []],
    );
    assert.ok(steps.slice(1).every((s) => s.action.kind === 'continue'));
    const state = last(steps).state;
    assert.ok(state.phase === 'watch' && state.resourceVersion === '15');
  });

  it('after a healthy watch ends, re-watches at once from the last resourceVersion (bookmark)', () => {
    const s = last(
      run([
        { type: 'listed', items: [], resourceVersion: '7', now: 0 },
        { type: 'event', event: { type: 'BOOKMARK', object: { metadata: { resourceVersion: '20' } } }, now: 60_000 },
        { type: 'watchEnded', now: 400_000 },
      ]),
    );
    assert.deepEqual(s.action, { kind: 'watch', resourceVersion: '20', delayMs: 0 });
  });

  it('re-watches at once when the server closes a short watch that delivered events (a slow reader closed by the watch cache)', () => {
    const steps = run([
      { type: 'listed', items: [], resourceVersion: '7', now: 0 },
      { type: 'event', event: { type: 'ADDED', object: obj('a', '8') }, now: 300 },
      { type: 'watchEnded', now: 900 },
      { type: 'event', event: { type: 'MODIFIED', object: obj('a', '9') }, now: 1000 },
      { type: 'watchEnded', now: 1500 },
      // this watch delivers nothing before it ends: backed off as before
      { type: 'watchEnded', now: 1600 },
    ]);
    assert.deepEqual(
      [2, 4, 5].map((i) => steps[i]?.action),
      [
        { kind: 'watch', resourceVersion: '8', delayMs: 0 },
        { kind: 'watch', resourceVersion: '9', delayMs: 0 },
        { kind: 'watch', resourceVersion: '9', delayMs: 800 },
      ],
    );
    assert.equal(steps[2]?.log?.level, 'info');
    assert.match(steps[2]?.log?.msg ?? '', /ended by the server after 0\.9s; re-watching at once from resourceVersion 8/);
    assert.equal(steps[5]?.log?.level, 'warn');
  });

  it('re-watches a silent watch (quiet resource or dead connection) at once, logging it as info, not as a failure', () => {
    const idle = new WatchIdleError('WATCH /apis/storage.k8s.io/v1/storageclasses: no data and no bookmark for 90s (--watch-idle-timeout)');
    const steps = run([
      { type: 'listed', items: [], resourceVersion: '7', now: 0 },
      { type: 'watchFailed', error: idle, now: 90_000 },
      { type: 'watchFailed', error: idle, now: 180_000 },
      { type: 'watchFailed', error: refused, now: 181_000 },
    ]);
    assert.deepEqual(
      steps.slice(1).map((s) => s.action),
      [
        { kind: 'watch', resourceVersion: '7', delayMs: 0 },
        { kind: 'watch', resourceVersion: '7', delayMs: 0 },
        // a real failure right after is backed off as usual
        { kind: 'watch', resourceVersion: '7', delayMs: 800 },
      ],
    );
    assert.equal(steps[1]?.log?.level, 'info');
    assert.match(steps[1]?.log?.msg ?? '', /storageclasses: no data and no bookmark for 90s \(--watch-idle-timeout\): a quiet resource or a dead connection; re-watching at once/);
  });

  it('relists on a 410 ERROR event without backing off, logging once', () => {
    const s = last(
      run([
        { type: 'listed', items: [], resourceVersion: '7', now: 0 },
        { type: 'event', event: { type: 'MODIFIED', object: obj('a', '30') }, now: 1000 },
        { type: 'event', event: { type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' } }, now: 2000 },
      ]),
    );
    assert.deepEqual(s.action, { kind: 'list', delayMs: 0 });
    assert.equal(s.state.phase, 'list');
    assert.equal(s.events.length, 0);
    assert.match(s.log?.msg ?? '', /expired at resourceVersion 30 .*relisting/);
  });

  it('relists on an HTTP 410 when resuming from a too-old resourceVersion', () => {
    const start = initialState('1');
    assert.deepEqual(start.action, { kind: 'watch', resourceVersion: '1', delayMs: 0 });
    const [s] = run([{ type: 'watchFailed', error: gone, now: 5 }], start.state);
    assert.deepEqual(s?.action, { kind: 'list', delayMs: 0 });
  });

  it('backs off a 410 that hits a watch opened right after a list (no hot loop)', () => {
    const s = last(
      run([
        { type: 'listed', items: [], resourceVersion: '7', now: 0 },
        { type: 'watchFailed', error: gone, now: 10 },
      ]),
    );
    assert.deepEqual(s.action, { kind: 'list', delayMs: 800 });
  });

  it('on errors re-watches from the last resourceVersion with backoff growing 800 ms → 30 s and capped', () => {
    const inputs: WatcherInput<KubeObject>[] = [{ type: 'listed', items: [], resourceVersion: '7', now: 0 }];
    for (let i = 1; i <= 9; i++) inputs.push({ type: 'watchFailed', error: refused, now: i * 1000 });
    const delays = run(inputs)
      .slice(1)
      .map((s) => {
        assert.ok(s.action.kind === 'watch' && s.action.resourceVersion === '7');
        return s.action.delayMs;
      });
    assert.deepEqual(delays, [800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000]);
  });

  it('starts the backoff over once a watch delivers an event or a bookmark: separate faults do not add up', () => {
    const steps = run([
      { type: 'listed', items: [], resourceVersion: '7', now: 0 },
      { type: 'watchFailed', error: refused, now: 1000 },
      { type: 'watchFailed', error: refused, now: 2000 },
      { type: 'watchFailed', error: refused, now: 4000 },
      { type: 'event', event: { type: 'BOOKMARK', object: obj('', '9') }, now: 8000 },
      { type: 'watchFailed', error: refused, now: 9000 },
      { type: 'event', event: { type: 'MODIFIED', object: obj('a', '10') }, now: 10_000 },
      { type: 'watchFailed', error: refused, now: 11_000 },
    ]);
    const delays = [1, 2, 3, 5, 7].map((i) => {
      const a = steps[i]?.action;
      return a?.kind === 'watch' ? a.delayMs : -1;
    });
    assert.deepEqual(delays, [800, 1600, 3200, 800, 800]);
    assert.deepEqual(last(steps).action, { kind: 'watch', resourceVersion: '10', delayMs: 800 });
  });

  it('starts the backoff over when the failed watch had stayed open 10 s, even without events', () => {
    const steps = run([
      { type: 'listed', items: [], resourceVersion: '7', now: 0 },
      { type: 'watchFailed', error: refused, now: 1000 },
      { type: 'watchFailed', error: refused, now: 2000 },
      { type: 'watchFailed', error: refused, now: 60_000 },
    ]);
    assert.deepEqual(
      steps.slice(1).map((s) => (s.action.kind === 'watch' ? s.action.delayMs : -1)),
      [800, 1600, 800],
    );
  });

  it('starts the backoff over after a quiet period', () => {
    let b = nextBackoff({ attempt: 0, lastFailureAt: undefined }, 0);
    b = nextBackoff(b.backoff, 1000);
    b = nextBackoff(b.backoff, 2000);
    assert.equal(b.delayMs, 3200);
    assert.equal(nextBackoff(b.backoff, 2000 + 121_000).delayMs, 800);
  });

  it('backs off a watch stream that ends right after it opened, and logs the failure with its reason', () => {
    const steps = run([
      { type: 'listed', items: [], resourceVersion: '7', now: 0 },
      { type: 'watchEnded', now: 50 },
      { type: 'watchFailed', error: refused, now: 1000 },
    ]);
    assert.deepEqual(
      steps.slice(1).map((s) => s.action),
      [
        { kind: 'watch', resourceVersion: '7', delayMs: 800 },
        { kind: 'watch', resourceVersion: '7', delayMs: 1600 },
      ],
    );
    assert.equal(steps[2]?.log?.level, 'warn');
    assert.match(steps[2]?.log?.msg ?? '', /watch failed: cannot reach the Kubernetes API server .*in 1\.6s/);
  });

  it('retries a failed list with backoff and stays in the list phase', () => {
    const steps = run([
      { type: 'listFailed', error: refused, now: 0 },
      { type: 'listFailed', error: new ApiError(403, { reason: 'Forbidden', code: 403, message: 'nope' }, 'nope'), now: 900 },
    ]);
    assert.deepEqual(
      steps.map((s) => s.action),
      [
        { kind: 'list', delayMs: 800 },
        { kind: 'list', delayMs: 1600 },
      ],
    );
    assert.match(steps[1]?.log?.msg ?? '', /list failed, retrying in 1\.6s: nope/);
  });

  it('re-watches with backoff on a non-410 ERROR event', () => {
    const s = last(
      run([
        { type: 'listed', items: [], resourceVersion: '7', now: 0 },
        { type: 'event', event: { type: 'ERROR', object: { code: 500, reason: 'InternalError', message: 'boom' } }, now: 20_000 },
      ]),
    );
    assert.deepEqual(s.action, { kind: 'watch', resourceVersion: '7', delayMs: 800 });
  });

  it('picks a watch timeout between 300 and 600 seconds', () => {
    assert.equal(watchTimeoutSeconds(0), 300);
    assert.equal(watchTimeoutSeconds(0.999), 599);
  });
});

/** A scripted ListWatch: each call pops the next scripted behaviour. */
class ScriptedSource implements ListWatch<KubeObject> {
  readonly calls: string[] = [];
  readonly lists: (() => Promise<{ items: KubeObject[]; resourceVersion: string }>)[] = [];
  readonly watches: ((emit: (e: WatchEvent) => void, signal: AbortSignal) => Promise<void>)[] = [];
  readonly done: Promise<void>;
  #finish: () => void = () => undefined;

  readonly #stop: AbortSignal;

  /** When the script is exhausted the source hangs until `stop` aborts. */
  constructor(stop: AbortSignal) {
    this.#stop = stop;
    this.done = new Promise((r) => (this.#finish = r));
  }

  list(): Promise<{ items: KubeObject[]; resourceVersion: string }> {
    this.calls.push('list');
    const next = this.lists.shift();
    if (next === undefined) return this.#exhausted();
    return next();
  }

  watch(rv: string, timeoutSeconds: number, onEvent: (e: WatchEvent) => void, signal: AbortSignal): Promise<void> {
    this.calls.push(`watch@${rv}/${timeoutSeconds}`);
    const next = this.watches.shift();
    if (next === undefined) return this.#exhausted();
    return next(onEvent, signal);
  }

  #exhausted(): Promise<never> {
    this.#finish();
    return new Promise((_resolve, reject) => this.#stop.addEventListener('abort', () => reject(new Error('stopped'))));
  }
}

describe('runWatcher (driver)', () => {
  it('lists, watches, relists on a 410 event, sleeps the backoff after an error, and resumes from the bookmark', async () => {
    const ac = new AbortController();
    const src = new ScriptedSource(ac.signal);
    src.lists.push(async () => ({ items: [obj('a', '5')], resourceVersion: '7' }));
    src.watches.push(async (emit) => {
      emit({ type: 'ADDED', object: obj('b', '8') });
      emit({ type: 'ERROR', object: { code: 410, reason: 'Expired', message: 'too old' } });
      emit({ type: 'ADDED', object: obj('c', '9') }); // after the ERROR: ignored, the stream is torn down
    });
    src.lists.push(async () => ({ items: [obj('b', '8')], resourceVersion: '10' }));
    src.watches.push(async (emit) => {
      emit({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '12' } } });
      throw refused;
    });
    const sunk: WatcherEvent<KubeObject>[] = [];
    const logs: WatcherLog[] = [];
    const sleeps: number[] = [];
    let now = 0;
    const running = runWatcher<KubeObject>(
      {
        source: src,
        sink: (evs) => sunk.push(...evs),
        log: (l) => logs.push(l),
        now: () => (now += 20_000),
        sleep: async (ms) => void sleeps.push(ms),
        random: () => 0.5,
      },
      ac.signal,
    );
    await src.done;
    ac.abort();
    await running;
    assert.deepEqual(src.calls, ['list', 'watch@7/450', 'list', 'watch@10/450', 'watch@12/450']);
    assert.deepEqual(
      sunk.map((e) => `${e.type}:${e.type === 'replace' ? e.items.length : e.object.metadata?.name}`),
      ['replace:1', 'apply:b', 'replace:1'],
    );
    assert.deepEqual(sleeps, [800]);
    assert.equal(logs.filter((l) => l.level === 'warn').length, 1, 'the failure is logged once');
  });

  it('stops promptly when aborted during a watch', async () => {
    const ac = new AbortController();
    const src = new ScriptedSource(ac.signal);
    src.lists.push(async () => ({ items: [], resourceVersion: '1' }));
    let aborted = false;
    src.watches.push(
      (_emit, signal) =>
        new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve();
          }),
        ),
    );
    const running = runWatcher<KubeObject>({ source: src, sink: () => undefined, log: () => undefined, now: () => 0, sleep: async () => undefined, random: () => 0 }, ac.signal);
    await new Promise((r) => setImmediate(r));
    ac.abort();
    await running;
    assert.ok(aborted);
    assert.deepEqual(src.calls, ['list', 'watch@1/300']);
  });
});

// Type-level check: every action kind is handled by the driver.
export type _Exhaustive = WatcherAction['kind'] extends 'continue' | 'list' | 'watch' ? true : never;
