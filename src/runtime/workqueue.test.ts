import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FakeClock } from './clock.ts';
import { ItemExponentialRateLimiter } from './rate-limiter.ts';
import { PROGRESS_RUN, WorkQueue, type Priority } from './workqueue.ts';

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function newQueue(clock = new FakeClock(0)): { q: WorkQueue; clock: FakeClock } {
  return { q: new WorkQueue({ clock, rateLimiter: new ItemExponentialRateLimiter(5, 1000) }), clock };
}

test('the queue dedupes a key that is already waiting', async () => {
  const { q } = newQueue();
  q.add('a');
  q.add('b');
  q.add('a');
  assert.equal(q.len(), 2);
  assert.equal(await q.get(), 'a');
  assert.equal(await q.get(), 'b');
  assert.equal(q.len(), 0);
});

test('a key being processed is never handed to a second worker', async () => {
  const { q } = newQueue();
  q.add('a');
  assert.equal(await q.get(), 'a');
  q.add('a');
  assert.equal(q.len(), 0, 'a key in flight is only marked dirty');
  let second: string | undefined = 'pending';
  void q.get().then((k) => (second = k));
  await flush();
  assert.equal(second, 'pending');
  q.done('a');
  await flush();
  assert.equal(second, 'a');
});

test('done() re-queues a key that was re-added while it was processed, once', async () => {
  const { q } = newQueue();
  q.add('a');
  const k = await q.get();
  assert.equal(k, 'a');
  q.add('a');
  q.add('a');
  q.done('a');
  assert.equal(q.len(), 1);
  assert.equal(await q.get(), 'a');
  q.done('a');
  assert.equal(q.len(), 0);
});

test('done() of a key that was not re-added does not re-queue it', async () => {
  const { q } = newQueue();
  q.add('a');
  await q.get();
  q.done('a');
  assert.equal(q.len(), 0);
});

test('get() waits until a key is added', async () => {
  const { q } = newQueue();
  const got = q.get();
  q.add('x');
  assert.equal(await got, 'x');
});

test('addAfter fires at the right FakeClock time', async () => {
  const { q, clock } = newQueue();
  q.addAfter('a', 100);
  clock.advance(99);
  assert.equal(q.len(), 0);
  clock.advance(1);
  assert.equal(q.len(), 1);
  assert.equal(await q.get(), 'a');
});

test('addAfter keeps the earliest ready time for a key', () => {
  const { q, clock } = newQueue();
  q.addAfter('a', 100);
  q.addAfter('a', 50);
  q.addAfter('a', 200);
  clock.advance(50);
  assert.equal(q.len(), 1);
  clock.advance(500);
  assert.equal(q.len(), 1, 'the later timers were superseded');
});

test('addAfter with a non-positive delay adds at once', () => {
  const { q } = newQueue();
  q.addAfter('a', 0);
  q.addAfter('b', -5);
  assert.equal(q.len(), 2);
});

test('addRateLimited backs off exponentially and forget resets the count', () => {
  const { q, clock } = newQueue();
  q.addRateLimited('a');
  q.addRateLimited('a'); // 5 ms then 10 ms: the earliest (5 ms) wins
  assert.equal(q.numRequeues('a'), 2);
  clock.advance(5);
  assert.equal(q.len(), 1);
  q.forget('a');
  assert.equal(q.numRequeues('a'), 0);
});

test('addRateLimited honours a minimum delay', () => {
  const { q, clock } = newQueue();
  q.addRateLimited('a', 300);
  clock.advance(299);
  assert.equal(q.len(), 0);
  clock.advance(1);
  assert.equal(q.len(), 1);
});

test('shutDown resolves waiting getters with undefined, drops queued and delayed keys, and ignores adds', async () => {
  const { q, clock } = newQueue();
  q.add('b');
  q.addAfter('c', 10);
  const idle = q.shutDown();
  assert.equal(q.len(), 0);
  q.add('d');
  clock.advance(20);
  assert.equal(q.len(), 0);
  assert.equal(await q.get(), undefined);
  await idle;
});

test('a getter waiting when the queue shuts down resolves undefined', async () => {
  const { q } = newQueue();
  const waiting = q.get();
  void q.shutDown();
  assert.equal(await waiting, undefined);
});

test('shutDown resolves only once in-flight keys are done, and does not re-queue them', async () => {
  const { q } = newQueue();
  q.add('a');
  await q.get();
  q.add('a');
  let idle = false;
  void q.shutDown().then(() => (idle = true));
  await flush();
  assert.equal(idle, false);
  q.done('a');
  await flush();
  assert.equal(idle, true);
  assert.equal(q.len(), 0);
});

test('shutDown with drain still hands out queued and dirty keys, then undefined', async () => {
  const { q } = newQueue();
  q.add('a');
  q.add('b');
  assert.equal(await q.get(), 'a');
  q.add('a');
  const idle = q.shutDown({ drain: true });
  assert.equal(await q.get(), 'b');
  const third = q.get();
  q.done('a');
  assert.equal(await third, 'a');
  q.done('b');
  const fourth = q.get();
  q.done('a');
  assert.equal(await fourth, undefined);
  await idle;
});

type Op =
  | { readonly op: 'add'; readonly key: string; readonly priority: Priority }
  | { readonly op: 'addAfter'; readonly key: string; readonly ms: number; readonly priority: Priority }
  | { readonly op: 'advance'; readonly ms: number }
  | { readonly op: 'yield'; readonly n: number };

const keyArb = fc.constantFrom('a', 'b', 'c', 'd', 'e');
const priorityArb: fc.Arbitrary<Priority> = fc.constantFrom('progress', 'normal');
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('add' as const), key: keyArb, priority: priorityArb }),
  fc.record({ op: fc.constant('addAfter' as const), key: keyArb, ms: fc.integer({ min: 0, max: 50 }), priority: priorityArb }),
  fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 30 }) }),
  fc.record({ op: fc.constant('yield' as const), n: fc.integer({ min: 1, max: 5 }) }),
);

async function yields(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await Promise.resolve();
}

test('randomized, both lanes: no key is processed by two workers at once, and every added key is processed after its last add', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(opArb, { maxLength: 60 }),
      fc.integer({ min: 1, max: 4 }),
      fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 20 }),
      async (ops, workers, workDurations) => {
        const clock = new FakeClock(0);
        const q = new WorkQueue({ clock });
        let seq = 0;
        const lastAdd = new Map<string, number>();
        const lastStart = new Map<string, number>();
        const inFlight = new Map<string, number>();
        const violations: string[] = [];
        let step = 0;
        const worker = async (): Promise<void> => {
          for (;;) {
            const key = await q.get();
            if (key === undefined) return;
            if (inFlight.has(key)) violations.push(`${key} handed to two workers`);
            inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
            lastStart.set(key, seq++);
            await yields(workDurations[step++ % workDurations.length] ?? 0);
            const n = (inFlight.get(key) ?? 1) - 1;
            if (n === 0) inFlight.delete(key);
            else inFlight.set(key, n);
            q.done(key);
          }
        };
        const running = Array.from({ length: workers }, () => worker());
        for (const o of ops) {
          if (o.op === 'add') {
            lastAdd.set(o.key, seq++);
            q.add(o.key, o.priority);
          } else if (o.op === 'addAfter') {
            lastAdd.set(o.key, seq++);
            q.addAfter(o.key, o.ms, o.priority);
          } else if (o.op === 'advance') {
            clock.advance(o.ms);
          } else {
            await yields(o.n);
          }
        }
        clock.advance(1000); // everything delayed is now due
        for (let i = 0; i < 1000 && (q.len() > 0 || inFlight.size > 0); i++) await flush();
        await q.shutDown();
        await Promise.all(running);
        assert.deepEqual(violations, []);
        for (const [key, added] of lastAdd) {
          const started = lastStart.get(key);
          assert.ok(started !== undefined && started > added, `${key} added at ${added} but last started at ${String(started)}`);
        }
      },
    ),
    { numRuns: 300 },
  );
});

test('progress keys are handed out before normal ones, each lane in FIFO order', async () => {
  const { q } = newQueue();
  q.add('n1');
  q.add('p1', 'progress');
  q.add('n2');
  q.add('p2', 'progress');
  const order: (string | undefined)[] = [];
  for (let i = 0; i < 4; i++) order.push(await q.get());
  assert.deepEqual(order, ['p1', 'p2', 'n1', 'n2']);
});

test(`a normal key waits for at most ${String(PROGRESS_RUN)} progress keys in a row: neither lane starves`, async () => {
  const { q } = newQueue();
  q.add('n1');
  q.add('n2');
  for (let i = 0; i < 8; i++) q.add(`p${String(i)}`, 'progress');
  const order: (string | undefined)[] = [];
  for (let i = 0; i < 10; i++) order.push(await q.get());
  assert.deepEqual(order, ['p0', 'p1', 'p2', 'n1', 'p3', 'p4', 'p5', 'n2', 'p6', 'p7']);
});

test('a waiting normal key added again as progress moves up and is handed out once', async () => {
  const { q } = newQueue();
  q.add('a');
  q.add('b');
  q.add('b', 'progress');
  assert.equal(q.len(), 2, 'the moved key counts once');
  assert.equal(await q.get(), 'b');
  assert.equal(await q.get(), 'a');
  assert.equal(q.len(), 0);
  q.done('a');
  q.done('b');
  q.add('c');
  assert.equal(await q.get(), 'c', 'the stale entry of b is skipped');
  q.add('n');
  q.add('a', 'progress');
  q.add('a');
  assert.equal(await q.get(), 'a', 'never moved down');
});

test('a key re-added as progress while in flight goes back to the progress lane when its worker is done', async () => {
  const { q } = newQueue();
  q.add('a');
  assert.equal(await q.get(), 'a');
  q.add('n');
  q.add('a', 'progress');
  q.done('a');
  assert.equal(await q.get(), 'a');
  assert.equal(await q.get(), 'n');
});

test('addAfter keeps the higher lane of two adds of a waiting key', async () => {
  const { q, clock } = newQueue();
  q.add('n');
  q.addAfter('a', 100, 'progress');
  q.addAfter('a', 50);
  clock.advance(50);
  await flush();
  assert.equal(await q.get(), 'a', 'the earlier time, the progress lane');
  assert.equal(await q.get(), 'n');
});
