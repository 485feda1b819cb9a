// The loop beside a long scale-up (readiness-beside-scale-up.ts): it plans the readiness writes again from the
// cache every READINESS_BESIDE_INTERVAL_MS, writes each pod at most once per pass, skips pods whose last write
// the cache does not show, and stops only once its writes are answered.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FakeClock } from '../runtime/clock.ts';
import { ResourceVersionExpectations } from '../runtime/expectations.ts';
import type { Pod } from '../kube/types.ts';
import type { PlanAction } from './plan/actions.ts';
import { READINESS_BESIDE_INTERVAL_MS, READINESS_BESIDE_MAX_IN_FLIGHT, startReadinessBeside, wantsReadinessBeside } from './readiness-beside-scale-up.ts';
import { aCloneSet } from './plan/testing/builders.ts';
import type { Outcome } from './execute.ts';

const cs = aCloneSet('sample').replicas(300).build();
const pod = (name: string, rv: string): Pod => ({ metadata: { name, uid: `uid-${name}`, resourceVersion: rv }, spec: { containers: [] } });
const ready = (p: Pod): PlanAction => ({ kind: 'SetInPlaceUpdateReady', pod: { name: p.metadata.name ?? '', uid: p.metadata.uid ?? '' } });
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function loop(clock: FakeClock, cache: { pods: Pod[] }, rv = new ResourceVersionExpectations(clock)) {
  const written: string[][] = [];
  const beside = startReadinessBeside(cs, {
    clock,
    rvExpectations: rv,
    logger: pino({ level: 'silent' }),
    pods: () => cache.pods,
    // every pod the cache shows waits for its readiness write
    plan: (pods) => pods.map(ready),
    execute: async (actions): Promise<Outcome> => {
      written.push(actions.map((a) => ('pod' in a ? a.pod.name : '')));
      return { writes: actions.length };
    },
  });
  return { beside, written };
}

describe('readiness beside a long scale-up', () => {
  test('only scale-ups of more than 64 creates get it', () => {
    const creates = (n: number): PlanAction[] => [{ kind: 'CreatePods', pods: Array.from({ length: n }, () => ({ pod: pod('x', '1'), pvcs: [], revision: 'r1' })) }];
    assert.equal(wantsReadinessBeside(creates(64)), false);
    assert.equal(wantsReadinessBeside(creates(65)), true);
  });

  test('every interval the pods the cache shows are written, each once per pass; stop reports the writes', async () => {
    const clock = new FakeClock(0);
    const cache = { pods: [pod('sample-a', '5')] };
    const { beside, written } = loop(clock, cache);
    await flush();
    assert.deepEqual(written, [], 'nothing before the first interval');
    clock.advance(READINESS_BESIDE_INTERVAL_MS);
    await flush();
    assert.deepEqual(written, [['sample-a']]);
    cache.pods = [pod('sample-a', '5'), pod('sample-b', '6'), pod('sample-c', '7')];
    clock.advance(READINESS_BESIDE_INTERVAL_MS);
    await flush();
    assert.deepEqual(written, [['sample-a'], ['sample-b', 'sample-c']]);
    clock.advance(READINESS_BESIDE_INTERVAL_MS);
    await flush();
    assert.equal(written.length, 2, 'no pod is written twice in one pass');
    assert.equal(await beside.stop(), 3);
    clock.advance(10 * READINESS_BESIDE_INTERVAL_MS);
    await flush();
    assert.equal(written.length, 2, 'nothing after stop');
  });

  test('a pod whose last write of ours the cache does not show yet is skipped until it does', async () => {
    const clock = new FakeClock(0);
    const rv = new ResourceVersionExpectations(clock);
    rv.expect('uid-sample-a', '9');
    const cache = { pods: [pod('sample-a', '5')] };
    const { beside, written } = loop(clock, cache, rv);
    clock.advance(READINESS_BESIDE_INTERVAL_MS);
    await flush();
    assert.deepEqual(written, []);
    cache.pods = [pod('sample-a', '9')];
    clock.advance(READINESS_BESIDE_INTERVAL_MS);
    await flush();
    assert.deepEqual(written, [['sample-a']]);
    await beside.stop();
  });

  test('plans again while earlier writes are unanswered (a pipeline), with at most 64 writes in flight in all', async () => {
    const clock = new FakeClock(0);
    const answers: (() => void)[] = [];
    const sent: string[][] = [];
    const cache = { pods: Array.from({ length: 100 }, (_, i) => pod(`sample-${String(i)}`, '5')) };
    const beside = startReadinessBeside(cs, {
      clock,
      rvExpectations: new ResourceVersionExpectations(clock),
      logger: pino({ level: 'silent' }),
      pods: () => cache.pods,
      plan: (pods) => pods.map(ready),
      execute: (actions) =>
        new Promise<Outcome>((resolve) => {
          sent.push(actions.map((a) => ('pod' in a ? a.pod.name : '')));
          answers.push(() => resolve({ writes: actions.length }));
        }),
    });
    clock.advance(READINESS_BESIDE_INTERVAL_MS);
    await flush();
    assert.deepEqual(
      sent.map((b) => b.length),
      [READINESS_BESIDE_MAX_IN_FLIGHT],
    );
    clock.advance(READINESS_BESIDE_INTERVAL_MS);
    await flush();
    assert.equal(sent.length, 1, 'no room while 64 writes are unanswered');
    answers[0]?.();
    await flush();
    clock.advance(READINESS_BESIDE_INTERVAL_MS);
    await flush();
    assert.deepEqual(
      sent.map((b) => b.length),
      [64, 36],
    );
    // a pod scheduled now is sent at the next interval, though the 36 are still unanswered
    cache.pods = [...cache.pods, pod('sample-new', '7')];
    clock.advance(READINESS_BESIDE_INTERVAL_MS);
    await flush();
    assert.deepEqual(sent[2], ['sample-new']);
    assert.equal(new Set(sent.flat()).size, 101, 'each pod written once');
    const stopped = beside.stop();
    for (const answer of answers.slice(1)) answer();
    assert.equal(await stopped, 101);
  });

  test('stop waits for the writes in flight', async () => {
    const clock = new FakeClock(0);
    let answer: (() => void) | undefined;
    let answered = false;
    const beside = startReadinessBeside(cs, {
      clock,
      rvExpectations: new ResourceVersionExpectations(clock),
      logger: pino({ level: 'silent' }),
      pods: () => [pod('sample-a', '5')],
      plan: (pods) => pods.map(ready),
      execute: (actions) =>
        new Promise<Outcome>((resolve) => {
          answer = () => {
            answered = true;
            resolve({ writes: actions.length });
          };
        }),
    });
    clock.advance(READINESS_BESIDE_INTERVAL_MS);
    await flush();
    const stopped = beside.stop().then((n) => ({ n, answered }));
    await flush();
    answer?.();
    assert.deepEqual(await stopped, { n: 1, answered: true });
  });
});
