import { test } from 'node:test';
import assert from 'node:assert/strict';
import { segmentActions } from './execute.ts';
import type { PlanAction } from './plan/actions.ts';

const ref = (name: string) => ({ name, uid: `uid-${name}` });
const lifecycle = (name: string): PlanAction => ({ kind: 'PatchPodLifecycle', pod: ref(name), state: 'Normal' });
const ready = (name: string): PlanAction => ({ kind: 'SetInPlaceUpdateReady', pod: ref(name) });

test('writes to one pod stay in plan order while different pods form separate groups', () => {
  const segments = segmentActions([ready('a'), ready('b'), lifecycle('a'), lifecycle('c')]);
  assert.equal(segments.length, 1);
  const [s] = segments;
  assert.equal(s?.kind, 'pods');
  if (s?.kind !== 'pods') return;
  assert.deepEqual(
    s.groups.map((g) => g.map((a) => `${a.kind}:${'pod' in a ? a.pod.name : ''}`)),
    [['SetInPlaceUpdateReady:a', 'PatchPodLifecycle:a'], ['SetInPlaceUpdateReady:b'], ['PatchPodLifecycle:c']],
  );
});

test('pod creates and deletes are barriers: per-pod writes before them finish first, those after start later', () => {
  const create: PlanAction = { kind: 'CreatePods', pods: [] };
  const fail: PlanAction = { kind: 'FailUpdate', message: 'no' };
  const kinds = segmentActions([ready('a'), create, ready('b'), fail]).map((s) => s.kind);
  assert.deepEqual(kinds, ['pods', 'barrier', 'pods', 'barrier']);
});
