// Virtual time. One `SimClock` per run orders every timer of every simulated process and of the API server by
// (due time, creation order); nothing in a run uses the machine's clock, so a seed replays exactly.
// Each controller process sees the world through a `ProcessClock`: its own wall clock (which faults may step),
// the shared monotonic time, and timers that stop when the process is killed and wait while it is paused.
import type { MonotonicClock, TimerHandle } from '../src/runtime/clock.ts';
import type { BucketTime } from '../src/kube/token-bucket.ts';

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

/** A binary min-heap of timers by (at, seq). */
class TimerHeap {
  readonly #items: Timer[] = [];

  get size(): number {
    return this.#items.length;
  }

  peek(): Timer | undefined {
    return this.#items[0];
  }

  push(t: Timer): void {
    const a = this.#items;
    a.push(t);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = a[p];
      if (parent === undefined || !before(t, parent)) break;
      a[i] = parent;
      i = p;
    }
    a[i] = t;
  }

  pop(): Timer | undefined {
    const a = this.#items;
    const top = a[0];
    const last = a.pop();
    if (top === undefined || last === undefined || a.length === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      let best = last;
      const left = a[l];
      const right = a[r];
      if (left !== undefined && before(left, best)) {
        m = l;
        best = left;
      }
      if (right !== undefined && before(right, best)) m = r;
      if (m === i) break;
      const child = a[m];
      if (child === undefined) break;
      a[i] = child;
      i = m;
    }
    a[i] = last;
    return top;
  }
}

function before(x: Timer, y: Timer): boolean {
  return x.at < y.at || (x.at === y.at && x.seq < y.seq);
}

function delay(ms: number): number {
  return Number.isFinite(ms) && ms > 0 ? ms : 0;
}

export class SimClock {
  #now = 0;
  #seq = 0;
  readonly #timers = new TimerHeap();

  /** Virtual milliseconds since the run started. */
  now(): number {
    return this.#now;
  }

  at(ms: number, fn: () => void): TimerHandle {
    const t: Timer = { at: Math.max(this.#now, ms), seq: this.#seq++, fn, cancelled: false };
    this.#timers.push(t);
    return {
      cancel: () => {
        t.cancelled = true;
      },
    };
  }

  after(ms: number, fn: () => void): TimerHandle {
    return this.at(this.#now + delay(ms), fn);
  }

  /** When the next live timer falls due (undefined when none is left). */
  nextAt(): number | undefined {
    for (;;) {
      const t = this.#timers.peek();
      if (t === undefined) return undefined;
      if (!t.cancelled) return t.at;
      this.#timers.pop();
    }
  }

  /** Fires the next live timer (moving time to it); false when none is left. */
  fireNext(): boolean {
    for (;;) {
      const t = this.#timers.pop();
      if (t === undefined) return false;
      if (t.cancelled) continue;
      this.#now = t.at;
      t.fn();
      return true;
    }
  }
}

/** The wall clock of every machine starts here (2026-01-01T00:00:00Z), plus its own steps. */
export const WALL_EPOCH_MS = Date.UTC(2026, 0, 1);

/** One controller process's view of time: it can be paused (SIGSTOP, a long GC) and killed. */
export class ProcessClock implements MonotonicClock {
  readonly #sim: SimClock;
  #wallOffset = 0;
  #dead = false;
  #paused = false;
  readonly #held: (() => void)[] = [];
  readonly #onKill = new Set<() => void>();

  constructor(sim: SimClock) {
    this.#sim = sim;
  }

  get dead(): boolean {
    return this.#dead;
  }

  get paused(): boolean {
    return this.#paused;
  }

  now(): number {
    return WALL_EPOCH_MS + this.#sim.now() + this.#wallOffset;
  }

  monotonicNow(): number {
    return 1_000_000 + this.#sim.now();
  }

  stepWall(ms: number): void {
    this.#wallOffset += ms;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    let cancelled = false;
    const handle = this.#sim.after(ms, () =>
      this.run(() => {
        if (!cancelled) fn();
      }),
    );
    return {
      cancel: () => {
        cancelled = true;
        handle.cancel();
      },
    };
  }

  /** Runs `fn` as this process: dropped once it is dead, held while it is paused. */
  run(fn: () => void): void {
    if (this.#dead) return;
    if (this.#paused) this.#held.push(fn);
    else fn();
  }

  pause(): void {
    this.#paused = true;
  }

  /**
   * Everything that fell due during the pause runs now, in order, each as its own turn (as a resumed Node
   * process runs its overdue timers, with the promise jobs of each before the next).
   */
  resume(): void {
    this.#paused = false;
    const held = this.#held.splice(0);
    for (const fn of held) this.#sim.after(0, () => this.run(fn));
  }

  kill(): void {
    this.#dead = true;
    this.#held.length = 0;
    const cleanups = [...this.#onKill];
    this.#onKill.clear();
    for (const c of cleanups) c();
  }

  /**
   * What the simulation holds for this process while it waits (an abort listener on one of its signals) and must
   * let go if the process is killed: its code never runs again, so nothing else would. An abort listener
   * left on a signal from `AbortSignal.any` keeps that signal, and all it reaches, alive for good (Node pins such
   * signals until they abort): every killed process would keep its whole run in memory. Returns the function to
   * call when the wait ends normally.
   */
  whileAlive(cleanup: () => void): () => void {
    if (this.#dead) {
      cleanup();
      return () => undefined;
    }
    this.#onKill.add(cleanup);
    return () => {
      this.#onKill.delete(cleanup);
    };
  }

  /** The token buckets' and the client retries' time, on this process. */
  bucketTime(): BucketTime {
    return {
      now: () => this.monotonicNow(),
      sleep: (ms, signal) =>
        new Promise<void>((resolve, reject) => {
          if (signal?.aborted === true) {
            reject(abortError());
            return;
          }
          const onAbort = (): void => {
            forget();
            timer.cancel();
            reject(abortError());
          };
          const timer = this.setTimeout(() => {
            forget();
            signal?.removeEventListener('abort', onAbort);
            resolve();
          }, ms);
          signal?.addEventListener('abort', onAbort, { once: true });
          const forget = signal === undefined ? () => undefined : this.whileAlive(() => signal.removeEventListener('abort', onAbort));
        }),
    };
  }
}

function abortError(): Error {
  const e = new Error('The operation was aborted');
  e.name = 'AbortError';
  return e;
}
