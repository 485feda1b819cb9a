import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, PodCondition, PodPhase } from '../../kube/types.ts';
import {
  isLifecycleNormalOrUnset,
  isPodActive,
  isPodAvailable,
  isPodReady,
  isPodReadyFor,
  isReadyForDelete,
  isSpecifiedDelete,
  lifecycleStateOf,
  podCondition,
  revisionMatches,
  shortHash,
  timestampMs,
} from './pod-predicates.ts';

const NOW = Date.parse('2024-05-01T12:00:00Z');
const secondsAgo = (s: number): string => new Date(NOW - s * 1000).toISOString();

function pod(opts: { name?: string; phase?: PodPhase; conditions?: PodCondition[]; labels?: Record<string, string>; deletionTimestamp?: string }): Pod {
  return {
    metadata: {
      name: opts.name ?? 'p',
      ...(opts.labels !== undefined ? { labels: opts.labels } : {}),
      ...(opts.deletionTimestamp !== undefined ? { deletionTimestamp: opts.deletionTimestamp } : {}),
    },
    spec: { containers: [{ name: 'c' }] },
    status: {
      ...(opts.phase !== undefined ? { phase: opts.phase } : {}),
      ...(opts.conditions !== undefined ? { conditions: opts.conditions } : {}),
    },
  };
}

const readySince = (s: number | null): PodCondition => ({
  type: 'Ready',
  status: 'True',
  lastTransitionTime: s === null ? null : secondsAgo(s),
});

describe('isPodActive', () => {
  test('a running pod is active', () => assert.equal(isPodActive(pod({ phase: 'Running' })), true));
  test('a pod without a phase yet is active', () => assert.equal(isPodActive(pod({})), true));
  test('Succeeded and Failed pods are not active', () => {
    assert.equal(isPodActive(pod({ phase: 'Succeeded' })), false);
    assert.equal(isPodActive(pod({ phase: 'Failed' })), false);
  });
  test('a pod being deleted is not active', () => assert.equal(isPodActive(pod({ phase: 'Running', deletionTimestamp: secondsAgo(1) })), false));
});

describe('podCondition / isPodReady', () => {
  test('the first condition of a type wins', () => {
    const p = pod({
      conditions: [
        { type: 'Ready', status: 'False' },
        { type: 'Ready', status: 'True' },
      ],
    });
    assert.equal(podCondition(p, 'Ready')?.status, 'False');
    assert.equal(isPodReady(p), false);
  });
  test('Ready True is ready whatever the phase', () => assert.equal(isPodReady(pod({ phase: 'Pending', conditions: [readySince(1)] })), true));
  test('no conditions is not ready', () => assert.equal(isPodReady(pod({ phase: 'Running' })), false));
});

describe('isPodReadyFor (Kruise ready(pod, minReady), docs/features.md#scaling)', () => {
  test('Running and Ready with minReadySeconds 0 is ready, even without a transition time', () =>
    assert.equal(isPodReadyFor(pod({ phase: 'Running', conditions: [readySince(null)] }), 0, NOW), true));
  test('a Ready pod that is not Running is not ready', () => assert.equal(isPodReadyFor(pod({ phase: 'Pending', conditions: [readySince(100)] }), 0, NOW), false));
  test('Ready for longer than minReadySeconds is ready', () => assert.equal(isPodReadyFor(pod({ phase: 'Running', conditions: [readySince(61)] }), 60, NOW), true));
  test('Ready for exactly minReadySeconds is not yet ready (strictly before now − minReady)', () =>
    assert.equal(isPodReadyFor(pod({ phase: 'Running', conditions: [readySince(60)] }), 60, NOW), false));
  test('with minReadySeconds > 0 an unknown (zero) transition time is not ready', () => {
    assert.equal(isPodReadyFor(pod({ phase: 'Running', conditions: [readySince(null)] }), 5, NOW), false);
    const zero: PodCondition = { type: 'Ready', status: 'True', lastTransitionTime: '0001-01-01T00:00:00Z' };
    assert.equal(isPodReadyFor(pod({ phase: 'Running', conditions: [zero] }), 5, NOW), false);
  });
  test('InPlaceUpdateReady False makes the pod not ready; True or absent is fine', () => {
    const base = [readySince(100)];
    const f = pod({ phase: 'Running', conditions: [...base, { type: 'InPlaceUpdateReady', status: 'False' }] });
    const t = pod({ phase: 'Running', conditions: [...base, { type: 'InPlaceUpdateReady', status: 'True' }] });
    assert.equal(isPodReadyFor(f, 0, NOW), false);
    assert.equal(isPodReadyFor(t, 0, NOW), true);
  });
});

describe('lifecycle, availability and readiness for delete', () => {
  const running = (labels?: Record<string, string>): Pod => pod({ phase: 'Running', conditions: [readySince(100)], ...(labels !== undefined ? { labels } : {}) });
  const state = (s: string): Record<string, string> => ({ 'lifecycle.apps.kruise.io/state': s });

  test('lifecycleStateOf reads the label, unset is ""', () => {
    assert.equal(lifecycleStateOf(running()), '');
    assert.equal(lifecycleStateOf(running(state('PreparingDelete'))), 'PreparingDelete');
  });
  test('an unknown lifecycle value is reported as "" but is not Normal', () => {
    assert.equal(lifecycleStateOf(running(state('Bogus'))), '');
    assert.equal(isLifecycleNormalOrUnset(running(state('Bogus'))), false);
    assert.equal(isPodAvailable(running(state('Bogus')), 0, NOW), false);
  });
  test('available needs lifecycle unset or Normal', () => {
    assert.equal(isPodAvailable(running(), 0, NOW), true);
    assert.equal(isPodAvailable(running(state('Normal')), 0, NOW), true);
    for (const s of ['PreparingNormal', 'PreparingUpdate', 'Updating', 'Updated', 'PreparingDelete']) {
      assert.equal(isPodAvailable(running(state(s)), 0, NOW), false, s);
    }
  });
  test('available honours minReadySeconds, ready-for-delete does not', () => {
    const fresh = pod({ phase: 'Running', conditions: [readySince(10)] });
    assert.equal(isPodAvailable(fresh, 30, NOW), false);
    assert.equal(isReadyForDelete(fresh, NOW), true);
    assert.equal(isReadyForDelete(running(state('Updating')), NOW), false);
  });
});

describe('isSpecifiedDelete', () => {
  test('the specified-delete label with any value (even empty) marks the pod', () =>
    assert.equal(isSpecifiedDelete(pod({ labels: { 'apps.kruise.io/specified-delete': '' } }), undefined), true));
  test('a name listed in podsToDelete marks the pod', () => {
    assert.equal(isSpecifiedDelete(pod({ name: 'a' }), ['b', 'a']), true);
    assert.equal(isSpecifiedDelete(pod({ name: 'a' }), ['b']), false);
    assert.equal(isSpecifiedDelete(pod({ name: 'a' }), undefined), false);
  });
});

describe('revision matching (docs/features.md#short-hash)', () => {
  const labelled = (v: string): Pod => pod({ labels: { 'controller-revision-hash': v } });
  test('shortHash is the part after the last "-"', () => {
    assert.equal(shortHash('sample-d4d4fb5bd'), 'd4d4fb5bd');
    assert.equal(shortHash('my-app-56dfb978d4'), '56dfb978d4');
    assert.equal(shortHash('d4d4fb5bd'), 'd4d4fb5bd');
  });
  test('full label and full name match', () => assert.equal(revisionMatches(labelled('s-abc'), 's-abc'), true));
  test('a short-hash label matches the full revision name', () => assert.equal(revisionMatches(labelled('abc'), 's-abc'), true));
  test('a different hash does not match', () => assert.equal(revisionMatches(labelled('s-abd'), 's-abc'), false));
  test('an unlabelled pod does not match', () => assert.equal(revisionMatches(pod({}), 's-abc'), false));
});

describe('timestampMs', () => {
  test('zero and missing times are undefined', () => {
    assert.equal(timestampMs(undefined), undefined);
    assert.equal(timestampMs(null), undefined);
    assert.equal(timestampMs(''), undefined);
    assert.equal(timestampMs('0001-01-01T00:00:00Z'), undefined);
    assert.equal(timestampMs('garbage'), undefined);
  });
  test('RFC 3339 parses to epoch ms', () => assert.equal(timestampMs('1970-01-01T00:00:01Z'), 1000));
});

describe('facts remembered per frozen pod', () => {
  const variants: Pod[] = [
    pod({}),
    pod({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: secondsAgo(30) }] }),
    pod({
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: 'True', lastTransitionTime: secondsAgo(5) },
        { type: 'InPlaceUpdateReady', status: 'True' },
      ],
    }),
    pod({
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: 'True' },
        { type: 'InPlaceUpdateReady', status: 'False' },
      ],
    }),
    pod({ phase: 'Pending', conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: secondsAgo(60) }] }),
    pod({ phase: 'Running', labels: { 'lifecycle.apps.kruise.io/state': 'Updated', 'controller-revision-hash': 'cs-abc' } }),
    pod({ labels: { 'lifecycle.apps.kruise.io/state': 'Bogus', 'controller-revision-hash': 'abc' } }),
  ];
  const answers = (p: Pod, now: number): unknown[] => [
    isPodReady(p),
    isPodReadyFor(p, 0, now),
    isPodReadyFor(p, 10, now),
    isPodAvailable(p, 10, now),
    isLifecycleNormalOrUnset(p),
    lifecycleStateOf(p),
    revisionMatches(p, 'other-abc'),
    revisionMatches(p, 'cs-xyz'),
    revisionMatches(p, 'abc'),
    revisionMatches(p, 'cs-ab'),
  ];
  test('a frozen pod answers as an unfrozen copy, at every time (the time-dependent part is never remembered)', () => {
    for (const p of variants) {
      const frozen = Object.freeze(structuredClone(p));
      for (const now of [NOW, NOW + 20_000, NOW - 20_000]) assert.deepEqual(answers(frozen, now), answers(p, now));
    }
  });
  test('an unfrozen pod changed in place is read afresh', () => {
    const conditions: PodCondition[] = [readySince(5)];
    const p = pod({ phase: 'Running', conditions });
    assert.equal(isPodReadyFor(p, 10, NOW), false);
    conditions[0] = readySince(30);
    assert.equal(isPodReadyFor(p, 10, NOW), true);
  });
  test("a frozen pod without a Ready time, or with Go's zero time, is never ready for minReadySeconds", () => {
    for (const since of [undefined, '0001-01-01T00:00:00Z']) {
      const p = Object.freeze(pod({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True', ...(since !== undefined ? { lastTransitionTime: since } : {}) }] }));
      assert.equal(isPodReadyFor(p, 10, NOW), false);
      assert.equal(isPodReadyFor(p, 10, NOW), false, 'and the same when remembered');
      assert.equal(isPodReadyFor(p, 0, NOW), true);
    }
  });
});

test('revisionMatches compares short hashes as shortHash does', () => {
  const names = ['', '-', 'a-', '-a', 'abc', 's-abc', 'x-s-abc', 's-ab', 's-abcd', 'ab-c', 'abc-', 'S-ABC'];
  for (const label of names) {
    for (const name of names) {
      const p = pod({ labels: { 'controller-revision-hash': label } });
      assert.equal(revisionMatches(p, name), label === name || shortHash(label) === shortHash(name), `${label} vs ${name}`);
    }
  }
});
