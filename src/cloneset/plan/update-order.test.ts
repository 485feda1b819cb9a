import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet, CloneSetUpdateStrategy, UpdatePriorityStrategy, UpdateScatterTerm } from '../../api/cloneset.ts';
import type { Pod } from '../../kube/types.ts';
import { orderUpdateCandidates, scatterPods, sortPodsByPriority } from './update-order.ts';

const NOW = Date.parse('2024-05-01T12:00:00Z');

/** A running, ready, scheduled pod named `name` with the given labels. */
function pod(name: string, labels: Record<string, string> = {}, ready = true): Pod {
  return {
    metadata: { name, labels, creationTimestamp: '2024-05-01T00:00:00Z' },
    spec: { containers: [{ name: 'c' }], nodeName: 'node-1' },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: '2024-05-01T01:00:00Z' }],
    },
  };
}

const names = (pods: readonly Pod[]): string[] => pods.map((p) => p.metadata.name ?? '');
/** Pods named "0".."n-1". */
const podsWith = (labels: readonly Record<string, string>[]): Pod[] => labels.map((l, i) => pod(String(i), l));
const indexes = (pods: readonly Pod[]): number[] => pods.map((p) => Number(p.metadata.name));

const cloneSet = (updateStrategy: CloneSetUpdateStrategy = {}): CloneSet => ({
  metadata: { name: 'cs', namespace: 'default' },
  spec: {
    replicas: 10,
    selector: { matchLabels: { app: 'x' } },
    template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c' }] } },
    updateStrategy,
  },
});

describe('priority strategy (docs/features.md#update-order)', () => {
  const byPriority = (labels: readonly Record<string, string>[], strategy: UpdatePriorityStrategy | undefined): number[] => indexes(sortPodsByPriority(podsWith(labels), strategy));

  test('weight priority puts the pods with the larger sum of matching weights first', () => {
    const strategy: UpdatePriorityStrategy = {
      weightPriority: [
        { weight: 100, matchSelector: { matchLabels: { foo: 'bar' } } },
        { weight: 90, matchSelector: { matchLabels: { hello: 'world' } } },
      ],
    };
    assert.deepEqual(byPriority([{ hello: 'world' }, {}, { foo: 'bar' }, {}], strategy), [2, 0, 1, 3]);
  });

  test('the weights of every matching term are added up', () => {
    const strategy: UpdatePriorityStrategy = {
      weightPriority: [
        { weight: 20, matchSelector: { matchLabels: { key1: 'foo' } } },
        { weight: 10, matchSelector: { matchLabels: { key2: 'bar' } } },
        { weight: 15, matchSelector: { matchLabels: { key3: 'baz' } } },
      ],
    };
    assert.deepEqual(byPriority([{ key1: 'foo' }, { key2: 'bar', key3: 'baz' }], strategy), [1, 0]);
  });

  test('weight priority takes precedence over order priority when both are set', () => {
    const strategy: UpdatePriorityStrategy = {
      weightPriority: [{ weight: 1, matchSelector: { matchLabels: { w: 'yes' } } }],
      orderPriority: [{ orderedKey: 'o' }],
    };
    assert.deepEqual(byPriority([{ o: '9' }, { w: 'yes', o: '1' }], strategy), [1, 0]);
  });

  test('pods with none of the ordered keys come first', () => {
    const strategy: UpdatePriorityStrategy = { orderPriority: [{ orderedKey: 'key1' }, { orderedKey: 'key2' }] };
    assert.deepEqual(byPriority([{ key1: 'o-1' }, { key2: 'o-1' }, {}], strategy), [2, 0, 1]);
  });

  test('a higher trailing number is updated first, so o-10 comes before o-5', () => {
    const strategy: UpdatePriorityStrategy = { orderPriority: [{ orderedKey: 'key1' }] };
    assert.deepEqual(byPriority([{ key1: 'o-5' }, { key1: 'o-10' }, { key1: 'o-20' }], strategy), [2, 1, 0]);
  });

  test('the first term whose key the pod carries decides its level', () => {
    const strategy: UpdatePriorityStrategy = { orderPriority: [{ orderedKey: 'key1' }, { orderedKey: 'key2' }] };
    // pod 0 is on level 1 (key2 only) despite its large number; pod 1 is on level 0 through key1
    assert.deepEqual(byPriority([{ key2: 'o-99' }, { key2: 'o-100', key1: 'o-1' }], strategy), [1, 0]);
  });

  test('a value without trailing digits or overflowing int64 counts as order 0', () => {
    const strategy: UpdatePriorityStrategy = { orderPriority: [{ orderedKey: 'k' }] };
    const labels = [{ k: 'abc' }, { k: 'x-99999999999999999999' }, { k: '007' }, { k: '1a' }, { k: '9223372036854775807' }];
    assert.deepEqual(byPriority(labels, strategy), [4, 2, 0, 1, 3]);
  });

  test('more than 12 pods of equal priority keep their incoming order', () => {
    const labels = Array.from({ length: 30 }, (_, i) => (i % 3 === 0 ? { tier: 'hot' } : {}));
    const weighted = byPriority(labels, { weightPriority: [{ weight: 5, matchSelector: { matchLabels: { tier: 'hot' } } }] });
    const all = labels.map((_, i) => i);
    assert.deepEqual(weighted, [...all.filter((i) => i % 3 === 0), ...all.filter((i) => i % 3 !== 0)]);
    assert.deepEqual(byPriority(labels, { weightPriority: [{ weight: 5, matchSelector: { matchLabels: { none: 'x' } } }] }), all);
    assert.deepEqual(byPriority(labels, { orderPriority: [{ orderedKey: 'absent' }] }), all);
  });

  test('no strategy or an empty one leaves the order unchanged', () => {
    assert.deepEqual(byPriority([{ a: '1' }, {}, { a: '2' }], undefined), [0, 1, 2]);
    assert.deepEqual(byPriority([{ a: '1' }, {}, { a: '2' }], { weightPriority: [], orderPriority: [] }), [0, 1, 2]);
  });
});

describe('scatter strategy (docs/features.md#update-order)', () => {
  const A: UpdateScatterTerm = { key: 'labelA', value: 'AAA' };
  /** '-' = no label, 'A' = labelA=AAA; all pods are candidates in index order. */
  const scatterVector = (vector: string, terms: readonly UpdateScatterTerm[] = [A]): number[] => {
    const pods = podsWith([...vector].map((c) => (c === 'A' ? { labelA: 'AAA' } : {})));
    return indexes(scatterPods(pods, pods, terms));
  };

  test('[-,-,-,-,A,A] becomes [4,0,1,2,3,5]', () => assert.deepEqual(scatterVector('----AA'), [4, 0, 1, 2, 3, 5]));
  test('[-,-,-,A,A,A] becomes [3,0,1,4,2,5]', () => assert.deepEqual(scatterVector('---AAA'), [3, 0, 1, 4, 2, 5]));
  test('[-,-,-,A,-,-,A] becomes [3,0,1,2,4,5,6]', () => assert.deepEqual(scatterVector('---A--A'), [3, 0, 1, 2, 4, 5, 6]));
  test('[-,-,-,-,-,-,A,A,A] becomes [6,0,1,2,7,3,4,5,8]', () => assert.deepEqual(scatterVector('------AAA'), [6, 0, 1, 2, 7, 3, 4, 5, 8]));
  test('[-,-,A,A,A,A] becomes [2,3,0,4,1,5] (group sizes round half away from zero)', () => assert.deepEqual(scatterVector('--AAAA'), [2, 3, 0, 4, 1, 5]));
  test('[-,-,A,-,A,A,A,A,A] becomes [2,4,0,5,6,1,7,3,8]', () => assert.deepEqual(scatterVector('--A-AAAAA'), [2, 4, 0, 5, 6, 1, 7, 3, 8]));
  test('[-,A,-,A,-,-,A,A,A] becomes [1,0,3,2,6,4,7,5,8]', () => assert.deepEqual(scatterVector('-A-A--AAA'), [1, 0, 3, 2, 6, 4, 7, 5, 8]));

  test('one matching or one unmatched candidate leaves the order unchanged', () => {
    assert.deepEqual(scatterVector('-'), [0]);
    assert.deepEqual(scatterVector('A'), [0]);
    assert.deepEqual(scatterVector('A-'), [0, 1]);
    assert.deepEqual(scatterVector('--A--'), [0, 1, 2, 3, 4]);
    assert.deepEqual(scatterVector('-AAAA'), [0, 1, 2, 3, 4]);
  });

  test('a label with another value or key does not match the term', () => {
    const pods = podsWith([{}, {}, {}, {}, { labelA: 'ee' }, { other: 'AAA' }, {}, { labelA: 'AAA' }, { labelA: 'AAA' }, { labelA: 'AAA', labelB: 'BBB' }]);
    assert.deepEqual(indexes(scatterPods(pods, pods, [A])), [7, 0, 1, 2, 3, 8, 4, 5, 6, 9]);
  });

  test('10 pods with 3 matching have the matching pods updated 1st, 6th and 10th', () => {
    for (const vector of ['AAA-------', '-------AAA', '-A--A----A', '--A-A-A---']) {
      const pods = podsWith([...vector].map((c) => (c === 'A' ? { foo: 'bar' } : {})));
      const order = scatterPods(pods, pods, [{ key: 'foo', value: 'bar' }]);
      const positions = order.flatMap((p, i) => (p.metadata.labels?.['foo'] === 'bar' ? [i + 1] : []));
      assert.deepEqual(positions, [1, 6, 10], vector);
    }
  });

  test('the density is measured over all claimed pods, not only the candidates', () => {
    // all pods: 6 matching, 6 not; candidates: 3 matching then 6 not — fewer matching candidates than the
    // overall density warrants, so the unmatched remainder goes first
    const all = podsWith([...'AAAAAA------'].map((c) => (c === 'A' ? { labelA: 'AAA' } : {})));
    const candidates = [...all.slice(0, 3), ...all.slice(6)];
    assert.deepEqual(indexes(scatterPods(candidates, all, [A])), [6, 7, 8, 9, 0, 10, 1, 11, 2]);
  });

  test('densities are compared in float32 like Kruise', () => {
    // 2949 matching + 2949 other pods; candidates all but one of each. The unmatched/matched ratios
    // 2949/2948 and 2948/2947 differ in float64 but are equal in float32, so the candidates' own grouping wins
    // (no unmatched remainder first) and a matching pod is updated first.
    const all = [...Array.from({ length: 2949 }, (_, i) => pod(`m${i}`, { labelA: 'AAA' })), ...Array.from({ length: 2949 }, (_, i) => pod(`u${i}`))];
    const candidates = all.filter((p) => p.metadata.name !== 'm2948' && p.metadata.name !== 'u2948');
    const order = names(scatterPods(candidates, all, [A]));
    assert.deepEqual(order.slice(0, 4), ['m0', 'u0', 'm1', 'u1']);
    assert.deepEqual(order.slice(-3), ['u2946', 'u2947', 'm2947']);
  });

  test('a single-term strategy is applied as is', () => {
    const pods = podsWith([{}, {}, {}, {}, { x: 'eee' }, { y: 'same' }, { labelB: 'BBB' }, { labelA: 'AAA' }, { labelA: 'AAA' }, { labelA: 'AAA', labelB: 'BBB' }]);
    assert.deepEqual(indexes(scatterPods(pods, pods, [{ key: 'labelB', value: 'BBB' }])), [6, 0, 1, 2, 3, 4, 5, 7, 8, 9]);
  });

  test('a multi-term strategy applies the most-matched term first, ties in strategy order', () => {
    const B: UpdateScatterTerm = { key: 'labelB', value: 'BBB' };
    const C: UpdateScatterTerm = { key: 'labelC', value: 'CCC' };
    const twoDims = podsWith([{ labelB: 'BBB' }, { labelB: 'BBB' }, {}, {}, { labelA: 'AAA' }, { labelA: 'AAA' }]);
    assert.deepEqual(indexes(scatterPods(twoDims, twoDims, [A, B])), [0, 4, 2, 3, 5, 1]);

    const sameCount = podsWith([{}, {}, {}, {}, { x: 'eee' }, { y: 'same' }, { labelB: 'BBB' }, { labelA: 'AAA' }, { labelA: 'AAA' }, { labelB: 'BBB' }]);
    assert.deepEqual(indexes(scatterPods(sameCount, sameCount, [B, A])), [7, 6, 0, 1, 2, 3, 4, 5, 9, 8]);
    assert.deepEqual(indexes(scatterPods(sameCount, sameCount, [A, B])), [6, 7, 0, 1, 2, 3, 4, 5, 8, 9]);

    const threeDims = podsWith([
      {},
      { labelA: 'AAA' },
      { labelA: 'AAA' },
      { labelB: 'BBB' },
      { labelB: 'BBB' },
      { labelC: 'CCC' },
      { labelC: 'CCC' },
      { labelC: 'CCC' },
      { labelC: 'CCC' },
      { labelC: 'CCC' },
    ]);
    assert.deepEqual(indexes(scatterPods(threeDims, threeDims, [A, B, C])), [3, 1, 5, 0, 6, 7, 8, 9, 2, 4]);

    const overlapping = podsWith([
      {},
      { labelA: 'AAA' },
      { labelA: 'AAA', labelC: 'CCC' },
      { labelB: 'BBB', labelC: 'CCC' },
      { labelB: 'BBB' },
      {},
      {},
      { labelC: 'CCC' },
      { labelC: 'CCC' },
      { labelC: 'CCC' },
    ]);
    assert.deepEqual(indexes(scatterPods(overlapping, overlapping, [A, B, C])), [3, 2, 0, 7, 8, 5, 6, 9, 1, 4]);
  });

  test('no strategy or a single candidate leaves the order unchanged', () => {
    const pods = podsWith([{ labelA: 'AAA' }, {}, { labelA: 'AAA' }, {}]);
    assert.deepEqual(indexes(scatterPods(pods, pods, undefined)), [0, 1, 2, 3]);
    assert.deepEqual(indexes(scatterPods(pods, pods, [])), [0, 1, 2, 3]);
    assert.deepEqual(indexes(scatterPods(pods.slice(0, 1), pods, [A])), [0]);
  });
});

describe('orderUpdateCandidates (docs/features.md#update-types)', () => {
  test('the default order comes first and pods of equal priority keep it (kruise#2106)', () => {
    const pods = [pod('ready'), pod('not-ready', {}, false)];
    const cs = cloneSet({ priorityStrategy: { weightPriority: [{ weight: 1, matchSelector: { matchLabels: { no: 'match' } } }] } });
    assert.deepEqual(names(orderUpdateCandidates(pods, pods, cs, NOW)), ['not-ready', 'ready']);
  });

  test('priority is applied after the default order, and scatter after priority', () => {
    const pods = [pod('a', { zone: 'z1' }), pod('b', { zone: 'z1', hot: 'y' }), pod('c', { hot: 'y' }), pod('d', {}, false), pod('e', { zone: 'z1' }), pod('f')];
    const cs = cloneSet({
      priorityStrategy: { weightPriority: [{ weight: 10, matchSelector: { matchLabels: { hot: 'y' } } }] },
      scatterStrategy: [{ key: 'zone', value: 'z1' }],
    });
    // default: d (not ready) first → [d,a,b,c,e,f]; priority: [b,c,d,a,e,f]; scatter zone=z1 (b,a,e):
    // matched [b,a] + last e, unmatched [c,d,f] → newGroup(2,3): sizes 1 and round(1.5)=2 → b,c,d,a,f,e
    assert.deepEqual(names(orderUpdateCandidates(pods, pods, cs, NOW)), ['b', 'c', 'd', 'a', 'f', 'e']);
  });

  test('PreparingUpdate candidates move to the front, keeping their relative order', () => {
    const state = { 'lifecycle.apps.kruise.io/state': 'PreparingUpdate' };
    const pods = [pod('a'), pod('b', state), pod('c', {}, false), pod('d', { ...state, w: 'y' }), pod('e', { w: 'y' })];
    const cs = cloneSet({ priorityStrategy: { weightPriority: [{ weight: 1, matchSelector: { matchLabels: { w: 'y' } } }] } });
    // default: [c,a,b,d,e]; priority: [d,e,c,a,b]; PreparingUpdate first: [d,b,e,c,a]
    assert.deepEqual(names(orderUpdateCandidates(pods, pods, cs, NOW)), ['d', 'b', 'e', 'c', 'a']);
  });

  test('without strategies the candidates are in the default order', () => {
    const pods = [pod('a'), pod('b', {}, false), pod('c')];
    assert.deepEqual(names(orderUpdateCandidates(pods, pods, cloneSet(), NOW)), ['b', 'a', 'c']);
  });
});
