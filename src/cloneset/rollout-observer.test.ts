// What the reconciler's passes leave for the metrics and the log: blocked reasons and since when, one warning per
// long blocked episode, rollout and in-place durations observed once, and nothing left of a deleted CloneSet.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { ANNOTATION_INPLACE_UPDATE_STATE } from '../api/well-known.ts';
import { FakeClock } from '../runtime/clock.ts';
import type { Blocker } from './plan/blockers.ts';
import { aCloneSet, aPod, readyPods, revisionName, T0 } from './plan/testing/builders.ts';
import { RolloutObserver, type RolloutMetricsSink } from './rollout-observer.ts';

const MIN = 60_000;

function harness(maxCloneSets = 10): { observer: RolloutObserver; clock: FakeClock; warnings: Record<string, unknown>[]; observed: string[] } {
  const clock = new FakeClock(T0);
  const warnings: Record<string, unknown>[] = [];
  const observed: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (s: string) => void warnings.push(JSON.parse(s) as Record<string, unknown>) });
  const sink: RolloutMetricsSink = {
    rolloutFinished: (ns, name, s) => void observed.push(`rollout ${ns}/${name} ${s}s`),
    inPlaceUpdated: (ns, name, s) => void observed.push(`inplace ${ns}/${name} ${s}s`),
    forgotten: (ns, name) => void observed.push(`forgotten ${ns}/${name}`),
  };
  return { observer: new RolloutObserver({ clock, logger, sink, maxCloneSets, warnBlockedAfterMs: 10 * MIN }), clock, warnings, observed };
}

const budget: Blocker = { reason: 'maxUnavailable', message: 'maxUnavailable budget of 1 spent' };

test('a reason that holds across passes keeps its start time; the series go with the CloneSet', () => {
  const h = harness();
  const cs = aCloneSet('shop').replicas(2).build();
  const pods = readyPods(cs, 2, 'r1');
  const pass = { cloneSet: cs, pods, updateRevision: revisionName(cs, 'r2'), updateRevisionCreatedMs: T0, blockers: [budget] };
  h.observer.observe('default/shop', pass);
  h.clock.advance(3 * MIN);
  h.observer.observe('default/shop', pass);
  assert.deepEqual(
    [...h.observer.blocked()].map((b) => [b.cloneSet, b.reason, b.sinceMs]),
    [['shop', 'maxUnavailable', T0]],
  );
  h.observer.observe('default/shop', { ...pass, blockers: [] });
  assert.deepEqual([...h.observer.blocked()], []);
  h.observer.forget('default/shop');
  assert.deepEqual([...h.observer.keys()], []);
  assert.deepEqual(h.observed, ['forgotten default/shop']);
});

test('a rollout blocked past the threshold is warned about once, a paused one never', () => {
  const h = harness();
  const shop = aCloneSet('shop').replicas(2).build();
  const api = aCloneSet('api').replicas(2).paused().build();
  h.observer.observe('default/shop', { cloneSet: shop, pods: readyPods(shop, 2, 'r1'), updateRevision: revisionName(shop, 'r2'), updateRevisionCreatedMs: T0, blockers: [budget] });
  h.observer.observe('default/api', {
    cloneSet: api,
    pods: readyPods(api, 2, 'r1'),
    updateRevision: revisionName(api, 'r2'),
    updateRevisionCreatedMs: T0,
    blockers: [{ reason: 'paused', message: 'paused' }],
  });
  h.clock.advance(9 * MIN);
  assert.equal(h.warnings.length, 0);
  h.clock.advance(2 * MIN); // the sweep timer runs every 30 s while something is blocked
  h.clock.advance(30 * MIN);
  assert.equal(h.warnings.length, 1);
  assert.equal(h.warnings[0]?.['cloneset'], 'default/shop');
  assert.equal(h.warnings[0]?.['reason'], 'maxUnavailable');
  assert.match(String(h.warnings[0]?.['msg']), /^rollout blocked: maxUnavailable budget of 1 spent$/);
});

test("a rollout seen in progress is timed once from its revision's creation; one already done at start-up is not", () => {
  const h = harness();
  const cs = aCloneSet('shop').replicas(2).build();
  const update = revisionName(cs, 'r2');
  h.observer.observe('default/done', {
    cloneSet: aCloneSet('done').replicas(1).build(),
    pods: readyPods(aCloneSet('done').build(), 1, 'r2'),
    updateRevision: revisionName(aCloneSet('done').build(), 'r2'),
    updateRevisionCreatedMs: T0 - 10 * MIN,
    blockers: [],
  });
  h.observer.observe('default/shop', { cloneSet: cs, pods: readyPods(cs, 2, 'r1'), updateRevision: update, updateRevisionCreatedMs: T0, blockers: [] });
  h.clock.advance(90_000);
  const done = { cloneSet: cs, pods: readyPods(cs, 2, 'r2'), updateRevision: update, updateRevisionCreatedMs: T0, blockers: [] };
  h.observer.observe('default/shop', done);
  h.observer.observe('default/shop', done);
  assert.deepEqual(h.observed, ['rollout default/shop 90s']);
});

test('an in-place update is timed from its state annotation to the pod being ready again, once', () => {
  const h = harness();
  const cs = aCloneSet('shop').replicas(1).build();
  const update = revisionName(cs, 'r2');
  const state = JSON.stringify({ revision: update, updateTimestamp: new Date(T0 + 5_000).toISOString(), lastContainerStatuses: {} });
  const pod = aPod(cs)
    .ofRevision('r2')
    .instanceId('abcde')
    .ready()
    .since(T0 + 12_000)
    .inPlaceUpdateReady(true)
    .build();
  const updated = { ...pod, metadata: { ...pod.metadata, annotations: { [ANNOTATION_INPLACE_UPDATE_STATE]: state } } };
  h.clock.set(T0 + 20_000);
  const pass = { cloneSet: cs, pods: [updated], updateRevision: update, updateRevisionCreatedMs: T0, blockers: [] };
  h.observer.observe('default/shop', pass);
  h.observer.observe('default/shop', pass);
  assert.deepEqual(
    h.observed.filter((o) => o.startsWith('inplace')),
    ['inplace default/shop 7s'],
  );
});

test('past --metrics-max-clonesets a CloneSet gets no series and is counted; a deleted one frees its slot', () => {
  const h = harness(1);
  const a = aCloneSet('a').replicas(1).build();
  const b = aCloneSet('b').replicas(1).build();
  const pass = (cs: typeof a) => ({ cloneSet: cs, pods: readyPods(cs, 1, 'r1'), updateRevision: revisionName(cs, 'r2'), updateRevisionCreatedMs: T0, blockers: [budget] });
  h.observer.observe('default/a', pass(a));
  h.observer.observe('default/b', pass(b));
  assert.deepEqual([...h.observer.keys()], ['default/a']);
  assert.equal(h.observer.omitted(), 1);
  h.observer.forget('default/a');
  h.observer.observe('default/b', pass(b));
  assert.deepEqual([...h.observer.keys()], ['default/b']);
});
