import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ApiError } from '../kube/api-error.ts';
import { FakeClock } from './clock.ts';
import { LeaderElector, type LeasePort } from './leader-election.ts';
import { Link, MemoryLeases } from './testing/memory-leases.ts';

const silent = pino({ level: 'silent' });
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function advance(clock: FakeClock, ms: number, step = 100): Promise<void> {
  for (let t = 0; t < ms; t += step) {
    clock.advance(Math.min(step, ms - t));
    await flush();
  }
}

interface Candidate {
  readonly link: Link;
  readonly log: string[];
  leading: AbortSignal | undefined;
  readonly abort: AbortController;
  readonly done: Promise<void>;
}

interface CandidateOptions {
  /** Jitter source (default 0: polls exactly every retry period). */
  readonly random?: () => number;
  /** The port the elector uses, made from the candidate's link (default: the link itself, which can watch). */
  readonly port?: (link: Link) => LeasePort;
  readonly retryPeriodMs?: number;
}

function candidate(server: MemoryLeases, clock: FakeClock, identity: string, opts: CandidateOptions = {}): Candidate {
  const link = new Link(server);
  const abort = new AbortController();
  const elector = new LeaderElector({
    port: opts.port?.(link) ?? link,
    namespace: 'kruise-system',
    name: 'cloneset-controller',
    identity,
    clock,
    logger: silent,
    random: opts.random ?? (() => 0),
    ...(opts.retryPeriodMs === undefined ? {} : { retryPeriodMs: opts.retryPeriodMs }),
  });
  const log: string[] = [];
  const c: Candidate = {
    link,
    log,
    leading: undefined,
    abort,
    done: elector.run(abort.signal, {
      onStartedLeading: (leading) => {
        c.leading = leading;
        log.push(`started@${clock.now()}`);
      },
      onStoppedLeading: () => void log.push(`stopped@${clock.now()}`),
    }),
  };
  return c;
}

/** `a` leads (it started first, at 0); `b` campaigns against the same lease. */
async function leaderAndChallenger(bOpts: CandidateOptions = {}): Promise<{ server: MemoryLeases; clock: FakeClock; a: Candidate; b: Candidate }> {
  const server = new MemoryLeases();
  const clock = new FakeClock(0);
  const a = candidate(server, clock, 'a');
  await flush();
  const b = candidate(server, clock, 'b', bOpts);
  return { server, clock, a, b };
}

/** The monotonic (here: fake) time at which `c` started leading, or undefined. */
function startedAt(c: Candidate): number | undefined {
  const entry = c.log.find((l) => l.startsWith('started@'));
  return entry === undefined ? undefined : Number(entry.slice('started@'.length));
}

/** The largest jitter: polls 2 s + 1.2 × 2 s = 4.4 s apart, the worst case of client-go's JitterUntil. */
const worstJitter = (): number => 0.999;

/** A port with only get/create/update, as a port that cannot watch. */
const withoutWatch = (link: Link): LeasePort => ({
  get: (ns, name) => link.get(ns, name),
  create: (ns, lease) => link.create(ns, lease),
  update: (ns, name, lease) => link.update(ns, name, lease),
});

test('a candidate acquires an absent lease by creating it', async () => {
  const server = new MemoryLeases();
  const clock = new FakeClock(Date.UTC(2025, 0, 1));
  const a = candidate(server, clock, 'a');
  await flush();
  assert.deepEqual(a.log, [`started@${clock.now()}`]);
  assert.equal(server.lease?.spec.holderIdentity, 'a');
  assert.equal(server.lease?.spec.leaseDurationSeconds, 15);
  assert.equal(server.lease?.spec.leaseTransitions, 0);
  assert.equal(server.lease?.spec.renewTime, '2025-01-01T00:00:00.000000Z');
  a.abort.abort();
  await a.done;
});

test('the leader renews every retry period, keeping its acquire time', async () => {
  const server = new MemoryLeases();
  const clock = new FakeClock(Date.UTC(2025, 0, 1));
  const a = candidate(server, clock, 'a');
  await flush();
  const acquired = server.lease?.spec.acquireTime;
  await advance(clock, 2000);
  assert.equal(server.lease?.spec.renewTime, '2025-01-01T00:00:02.000000Z');
  await advance(clock, 60_000);
  assert.equal(server.lease?.spec.renewTime, '2025-01-01T00:01:02.000000Z');
  assert.equal(server.lease?.spec.acquireTime, acquired);
  assert.equal(a.leading?.aborted, false);
  a.abort.abort();
  await a.done;
});

test('the leader renews with one write per retry period, reading the lease again only after a conflict (client-go fast path)', async () => {
  const server = new MemoryLeases();
  const clock = new FakeClock(0);
  const calls: string[] = [];
  const noted = <T>(call: string, send: () => Promise<T>): Promise<T> => {
    calls.push(call);
    return send();
  };
  const counting = (link: Link): LeasePort => ({
    get: (ns, name) => noted('get', () => link.get(ns, name)),
    create: (ns, lease) => noted('create', () => link.create(ns, lease)),
    update: (ns, name, lease) => noted('update', () => link.update(ns, name, lease)),
  });
  const a = candidate(server, clock, 'a', { port: counting });
  await flush();
  await advance(clock, 9_900);
  // The renew loop renews at once, as client-go's does.
  assert.deepEqual(calls, ['get', 'create', 'update', 'update', 'update', 'update', 'update'], 'created at 0, renewed at 0, 2, 4, 6 and 8 s');
  // An operator edits the lease, holder unchanged: a new resourceVersion, so the optimistic renewal conflicts.
  const held = server.lease;
  assert.ok(held !== undefined);
  assert.equal((await server.update('kruise-system', 'cloneset-controller', { ...held, spec: { ...held.spec, leaseDurationSeconds: 15 } })).kind, 'ok');
  calls.length = 0;
  await advance(clock, 2_000);
  assert.deepEqual(calls, ['update', 'get', 'update']);
  assert.equal(a.leading?.aborted, false);
  assert.equal(server.lease?.spec.renewTime, '1970-01-01T00:00:10.000000Z');
  a.abort.abort();
  await a.done;
});

test('a leader that cannot renew within the renew deadline loses leadership', async () => {
  const server = new MemoryLeases();
  const clock = new FakeClock(0);
  const a = candidate(server, clock, 'a');
  await flush();
  await advance(clock, 2000); // renewed at 2 s: the deadline is 12 s
  a.link.down = true;
  await advance(clock, 2000); // the renewal attempt at 4 s fails, and those at 6, 8 and 10 s
  await advance(clock, 7900);
  assert.equal(a.leading?.aborted, false);
  await advance(clock, 200);
  assert.equal(a.leading?.aborted, true);
  assert.deepEqual(a.log, ['started@0', 'stopped@12000']);
  await a.done;
});

test('a hanging API call still ends leadership at the renew deadline', async () => {
  const server = new MemoryLeases();
  const clock = new FakeClock(0);
  const a = candidate(server, clock, 'a');
  await flush();
  a.link.hang = true;
  await advance(clock, 12_100);
  assert.deepEqual(a.log, ['started@0', 'stopped@10000']);
  await a.done;
});

test('another candidate waits while the leader renews, and takes over only after the lease expired', async () => {
  const { server, clock, a, b } = await leaderAndChallenger();
  await advance(clock, 60_000);
  assert.deepEqual(b.log, [], 'b never leads while a renews');
  a.link.down = true; // a is partitioned: its last renewal was at 60 s
  await advance(clock, 14_000);
  assert.deepEqual(b.log, [], 'not before b has seen the same record for the lease duration');
  await advance(clock, 4_000);
  assert.equal(b.log.length, 1);
  assert.equal(server.lease?.spec.holderIdentity, 'b');
  assert.equal(server.lease?.spec.leaseTransitions, 1);
  assert.ok(a.log.includes('stopped@70000'), `a lost at its renew deadline (last renewal at 60 s + 10 s), before b took over: ${a.log.join()}`);
  b.abort.abort();
  await Promise.all([a.done, b.done]);
});

test('two candidates racing for an absent lease: exactly one wins (the other gets a conflict)', async () => {
  const server = new MemoryLeases();
  const clock = new FakeClock(0);
  const a = candidate(server, clock, 'a');
  const b = candidate(server, clock, 'b');
  await advance(clock, 10_000);
  assert.equal(a.log.length + b.log.length, 1);
  a.abort.abort();
  b.abort.abort();
  await Promise.all([a.done, b.done]);
});

test('on abort the leader releases the lease (holder "", 1 s) so a successor can take over without waiting for expiry', async () => {
  const { server, clock, a, b } = await leaderAndChallenger({ port: withoutWatch });
  await advance(clock, 3000);
  a.abort.abort();
  await a.done;
  assert.deepEqual(a.log, ['started@0', 'stopped@3000']);
  assert.equal(server.lease?.spec.holderIdentity, '');
  assert.equal(server.lease?.spec.leaseDurationSeconds, 1);
  await advance(clock, 2000);
  assert.equal(server.lease?.spec.holderIdentity, 'b', 'a polling standby takes it at its next retry');
  assert.equal(b.log.length, 1);
  b.abort.abort();
  await b.done;
});

test('a standby takes over within a few ms of lease expiry after the leader stops renewing, not at its next jittered poll', async () => {
  const { server, clock, a, b } = await leaderAndChallenger({ random: worstJitter });
  await advance(clock, 60_000);
  a.link.down = true; // a's last renewal was at 60 s: its record expires for b at 75 s
  await advance(clock, 14_900);
  assert.equal(startedAt(b), undefined);
  await advance(clock, 200, 1);
  const at = startedAt(b);
  assert.ok(at !== undefined && at >= 75_000 && at <= 75_010, `b took over at ${String(at)} ms, expected within 10 ms after 75 000`);
  assert.equal(server.lease?.spec.holderIdentity, 'b');
  b.abort.abort();
  await Promise.all([a.done, b.done]);
});

test('a standby that sees renewals through the watch never takes over while they continue, even with polls far apart', async () => {
  // b polls only every 8 s + up to 9.6 s of jitter: longer than the lease duration between two GETs.
  const { server, clock, a, b } = await leaderAndChallenger({ random: worstJitter, retryPeriodMs: 8000 });
  await advance(clock, 120_000);
  assert.deepEqual(b.log, []);
  assert.equal(server.lease?.spec.holderIdentity, 'a');
  assert.equal(a.leading?.aborted, false);
  a.abort.abort();
  b.abort.abort();
  await Promise.all([a.done, b.done]);
});

test('a standby whose watch shows the renewals sends no lease request; once the watch goes silent it polls again', async () => {
  let muted = false;
  const gets: number[] = [];
  const { server, clock, a, b } = await leaderAndChallenger({
    port: (link) => ({
      get: (ns, name) => {
        gets.push(clock.now());
        return link.get(ns, name);
      },
      create: (ns, lease) => link.create(ns, lease),
      update: (ns, name, lease) => link.update(ns, name, lease),
      // A half-open connection when muted: the stream stays open and says nothing.
      watch: (ns, name, rv, onEvent, signal) =>
        link.watch(
          ns,
          name,
          rv,
          (e) => {
            if (!muted) onEvent(e);
          },
          signal,
        ),
    }),
  });
  await advance(clock, 60_000);
  assert.equal(gets.length, 1, `only the first attempt read the lease; reads at ${gets.join(', ')}`);
  muted = true;
  gets.length = 0;
  await advance(clock, 30_000);
  // The last record shown expires for b 15 s after it was seen; from then on b polls every retry period.
  assert.ok(gets.length >= 6 && (gets[0] ?? 0) >= 74_000, `polls at ${gets.join(', ')}`);
  assert.deepEqual(b.log, []);
  assert.equal(server.lease?.spec.holderIdentity, 'a');
  a.abort.abort();
  b.abort.abort();
  await Promise.all([a.done, b.done]);
});

test('a release (holder "") seen through the watch wakes the standby at once', async () => {
  const { server, clock, a, b } = await leaderAndChallenger({ random: worstJitter });
  await advance(clock, 3000);
  a.abort.abort();
  await a.done;
  await flush();
  assert.equal(startedAt(b), 3000, 'no clock time passed between the release and the takeover');
  assert.equal(server.lease?.spec.holderIdentity, 'b');
  b.abort.abort();
  await b.done;
});

test('a deleted lease seen through the watch wakes the standby, which creates it again and leads', async () => {
  const { server, clock, a, b } = await leaderAndChallenger({ random: worstJitter });
  await advance(clock, 3000);
  a.link.down = true; // a cannot see or recreate it
  server.delete();
  await flush();
  await flush();
  assert.equal(startedAt(b), 3000);
  assert.equal(server.lease?.spec.holderIdentity, 'b');
  a.abort.abort();
  b.abort.abort();
  await Promise.all([a.done, b.done]);
});

for (const [how, port] of [
  ['the port cannot watch', withoutWatch],
  ['every watch fails', (link: Link): LeasePort => ({ ...withoutWatch(link), watch: () => Promise.reject(new Error('410 Gone')) })],
] as const) {
  test(`when ${how}, the standby polls as before: it takes over after expiry, at a poll`, async () => {
    const { server, clock, a, b } = await leaderAndChallenger({ random: worstJitter, port });
    await advance(clock, 60_000);
    a.link.down = true;
    await advance(clock, 15_000, 1);
    assert.equal(startedAt(b), undefined, 'never before 15 s after the last renewal');
    await advance(clock, 2 * 4400);
    const at = startedAt(b);
    // Polls 4.4 s apart: the renewal at 60 s is seen up to 4.4 s late, and the expiry too.
    assert.ok(at !== undefined && at > 75_010 && at <= 75_000 + 2 * 4400, `b took over at ${String(at)} ms`);
    assert.equal(server.lease?.spec.holderIdentity, 'b');
    b.abort.abort();
    await Promise.all([a.done, b.done]);
  });
}

test('after the watch fails (410 Gone) the standby gets the lease again and watches on from its resourceVersion', async () => {
  const { server, clock, a, b } = await leaderAndChallenger({ random: worstJitter });
  await advance(clock, 10_000);
  assert.equal(server.openWatches, 1);
  server.failWatches(new Error('410 Gone: too old resource version'));
  assert.equal(server.openWatches, 0);
  await advance(clock, 500);
  assert.equal(server.openWatches, 1, 'watching again after a short backoff');
  a.link.down = true; // at 10.5 s: the last renewal was at 10 s
  await advance(clock, 14_400);
  assert.equal(startedAt(b), undefined);
  await advance(clock, 200, 1);
  const at = startedAt(b);
  assert.ok(at !== undefined && at >= 25_000 && at <= 25_010, `b took over at ${String(at)} ms`);
  b.abort.abort();
  await Promise.all([a.done, b.done]);
});

test('a standby not allowed to watch (403: a Role from before the watch) says which permission to grant, stops watching and polls', async () => {
  let watches = 0;
  const lines: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (l: string) => void lines.push(l) });
  const server = new MemoryLeases();
  const clock = new FakeClock(0);
  const a = candidate(server, clock, 'a');
  await flush();
  const link = new Link(server);
  const forbidden = new ApiError(403, { kind: 'Status', code: 403, reason: 'Forbidden', message: 'leases.coordination.k8s.io is forbidden: cannot watch' }, 'forbidden');
  const port: LeasePort = {
    ...withoutWatch(link),
    watch: () => {
      watches++;
      return Promise.reject(forbidden);
    },
  };
  const b = new LeaderElector({ port, namespace: 'kruise-system', name: 'cloneset-controller', identity: 'b', clock, logger, random: worstJitter });
  const abort = new AbortController();
  let started: number | undefined;
  const done = b.run(abort.signal, {
    onStartedLeading: () => {
      started = clock.now();
    },
    onStoppedLeading: () => undefined,
  });
  await advance(clock, 60_000);
  assert.equal(watches, 1, 'no retries of a watch that cannot be allowed');
  assert.equal(lines.length, 1);
  assert.match(lines[0] ?? '', /grant \\"watch\\" on leases/);
  a.link.down = true;
  await advance(clock, 2 * 15_000);
  assert.ok(started !== undefined && started > 75_000, 'it still takes over by polling');
  abort.abort();
  await Promise.all([a.done, done]);
});

test('a freshly started standby still waits the full lease duration from its first observation', async () => {
  const server = new MemoryLeases();
  const clock = new FakeClock(0);
  // Held by a replica this standby has never seen renew: its renewTime says nothing to the standby.
  server.lease = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'cloneset-controller', namespace: 'kruise-system', resourceVersion: '1' },
    spec: { holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: '1969-12-31T23:00:00.000000Z', leaseTransitions: 0 },
  };
  const b = candidate(server, clock, 'b', { random: worstJitter });
  await flush(); // b's first observation, at 0
  await advance(clock, 14_900);
  assert.equal(startedAt(b), undefined);
  await advance(clock, 200, 1);
  const at = startedAt(b);
  assert.ok(at !== undefined && at >= 15_000 && at <= 15_010, `b took over at ${String(at)} ms`);
  b.abort.abort();
  await b.done;
});

test('aborting a candidate that never led resolves run without calling onStoppedLeading', async () => {
  const { clock, a, b } = await leaderAndChallenger();
  await advance(clock, 3000);
  b.abort.abort();
  await b.done;
  assert.deepEqual(b.log, []);
  a.abort.abort();
  await a.done;
});

test('a wall clock step forward on a standby does not let it take a lease it has not seen unchanged for the lease duration', async () => {
  const server = new MemoryLeases();
  const clock = new FakeClock(0);
  // Held by a replica that is alive but whose renewals this standby has not seen change yet.
  server.lease = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'cloneset-controller', namespace: 'kruise-system', resourceVersion: '1' },
    spec: { holderIdentity: 'other', leaseDurationSeconds: 15, renewTime: '2025-01-01T00:00:00.000000Z', leaseTransitions: 0 },
  };
  const b = candidate(server, clock, 'b');
  await advance(clock, 4000);
  clock.stepWall(3_600_000); // NTP steps the wall clock an hour ahead
  await advance(clock, 10_000);
  assert.deepEqual(b.log, [], 'still inside the 15 s of monotonic time since b first saw the record');
  assert.equal(server.lease.spec.holderIdentity, 'other');
  await advance(clock, 4000);
  assert.equal(b.log.length, 1, 'takes over once 15 s of monotonic time have passed');
  b.abort.abort();
  await b.done;
});

test('a wall clock step backward on the leader does not stretch its renew deadline', async () => {
  const server = new MemoryLeases();
  const clock = new FakeClock(0);
  const a = candidate(server, clock, 'a');
  await flush();
  await advance(clock, 2000); // renewed at 2 s: the deadline is 12 s
  a.link.down = true;
  clock.stepWall(-3_600_000);
  await advance(clock, 12_100);
  assert.equal(a.leading?.aborted, true);
  assert.deepEqual(a.log, ['started@0', `stopped@${12_000 - 3_600_000}`]);
  await a.done;
});

test('on abort the leader drains first, renewing meanwhile, then stops leading and releases the lease', async () => {
  const server = new MemoryLeases();
  const clock = new FakeClock(0);
  const abort = new AbortController();
  const elector = new LeaderElector({ port: server, namespace: 'ns', name: 'l', identity: 'a', clock, logger: silent, random: () => 0 });
  let leading: AbortSignal | undefined;
  let finishDrain: (() => void) | undefined;
  const events: string[] = [];
  const done = elector.run(abort.signal, {
    onStartedLeading: (s) => {
      leading = s;
    },
    drain: () =>
      new Promise<void>((resolve) => {
        events.push(`drain@${clock.now()}`);
        finishDrain = resolve;
      }),
    onStoppedLeading: (reason) => void events.push(`${reason}@${clock.now()}`),
  });
  await flush();
  abort.abort();
  await advance(clock, 30_000); // a drain longer than the renew deadline: renewals must go on
  assert.equal(leading?.aborted, false, 'still leading (and fenced open) while draining');
  assert.equal(server.lease?.spec.holderIdentity, 'a');
  assert.equal(server.lease?.spec.renewTime, '1970-01-01T00:00:30.000000Z');
  assert.equal(elector.isLeader(), true);
  finishDrain?.();
  await advance(clock, 100);
  await done;
  assert.equal(leading?.aborted, true);
  assert.equal(server.lease?.spec.holderIdentity, '');
  assert.deepEqual(events, ['drain@0', 'released@30100']);
});

test('a standby reports the API server reachable while its lease calls get answers, and not when they fail', async () => {
  const { clock, a, b } = await leaderAndChallenger();
  const elector = new LeaderElector({ port: b.link, namespace: 'kruise-system', name: 'cloneset-controller', identity: 'c', clock, logger: silent, random: () => 0 });
  const abort = new AbortController();
  const done = elector.run(abort.signal, { onStartedLeading: () => undefined, onStoppedLeading: () => undefined });
  await flush();
  assert.equal(elector.apiReachable(), true);
  b.link.down = true;
  await advance(clock, 16_000);
  assert.equal(elector.apiReachable(), false);
  b.link.down = false;
  await advance(clock, 3000);
  assert.equal(elector.apiReachable(), true);
  for (const c of [a, b]) c.abort.abort();
  abort.abort();
  await Promise.all([a.done, b.done, done]);
});

test('timings that could let a standby take over from a live leader are refused with the flags to fix', () => {
  const server = new MemoryLeases();
  assert.throws(
    () => new LeaderElector({ port: server, namespace: 'ns', name: 'l', identity: 'a', clock: new FakeClock(0), logger: silent, leaseDurationMs: 10_000, renewDeadlineMs: 10_000 }),
    /lease duration \(10000ms\) > renew deadline \(10000ms\).*--leader-election-lease-duration/,
  );
});

test('a leader that finds another holder after a pause stops leading at once, not at a fresh deadline', async () => {
  const { server, clock, a } = await leaderAndChallenger();
  await advance(clock, 3000);
  // While a was paused, its lease expired and another replica took it (a write: a new resourceVersion).
  const held = server.lease;
  assert.ok(held !== undefined);
  assert.equal((await server.update('kruise-system', 'cloneset-controller', { ...held, spec: { ...held.spec, holderIdentity: 'c' } })).kind, 'ok');
  await advance(clock, 2100);
  assert.equal(a.leading?.aborted, true);
  assert.deepEqual(a.log, ['started@0', 'stopped@4000']);
  await a.done;
});

test('after a pause longer than the renew deadline the lease is invalid at once, before the renew loop has run', async () => {
  const server = new MemoryLeases();
  const clock = new FakeClock(0);
  const abort = new AbortController();
  const elector = new LeaderElector({ port: server, namespace: 'ns', name: 'l', identity: 'a', clock, logger: silent, random: () => 0 });
  const done = elector.run(abort.signal, { onStartedLeading: () => undefined, onStoppedLeading: () => undefined });
  await flush();
  await advance(clock, 9000);
  assert.equal(elector.leaseValid(), true, 'renewed every 2 s');
  clock.advance(10_000); // a 10 s pause: every timer fires, but no continuation has run yet
  assert.equal(elector.isLeader(), true, 'the renew loop has not noticed yet');
  assert.equal(elector.leaseValid(), false, 'but the write guard already refuses');
  abort.abort();
  await advance(clock, 1000);
  await done;
});
