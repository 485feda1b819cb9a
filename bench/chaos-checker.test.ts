// The relist rule of chaos-checker.ts (node --test bench/chaos-checker.test.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyList } from './chaos-checker.ts';
import type { KubeObject } from '../src/kube/types.ts';

const obj = (name: string, ready: boolean): KubeObject & { ready: boolean } => ({ metadata: { name }, ready });

describe('a relist', () => {
  it('is applied whole before any of its changes is judged: a removal sees the update listed with it', () => {
    // the checker knew: the replacement not ready yet, the old pod ready; the list after a lost watch: the
    // replacement ready, the old pod gone
    const m = new Map([['replacement', obj('replacement', false)], ['old', obj('old', true)]]);
    const changes = applyList(m, [obj('replacement', true)]);
    assert.deepEqual([...m.keys()], ['replacement']);
    assert.equal(m.get('replacement')?.ready, true, 'the map is the list when the first change is judged');
    assert.deepEqual(changes.map(([b, a]) => [b?.metadata?.name, b?.ready, a?.ready]), [
      ['old', true, undefined],
      ['replacement', false, true],
    ]);
  });

  it('reports objects new to the checker with no before', () => {
    const m = new Map<string, KubeObject & { ready: boolean }>();
    const changes = applyList(m, [obj('a', true)]);
    assert.deepEqual(changes.map(([b, a]) => [b, a?.metadata?.name]), [[undefined, 'a']]);
  });
});
