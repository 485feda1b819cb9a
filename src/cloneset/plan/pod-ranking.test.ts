import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node, Pod, PodPhase } from '../../kube/types.ts';
import { choosePodsToDelete, deletionCost, rankPodsForDeletion, sameNodeRanks, sortPodsForUpdate, spreadConstraintRanks, type RankOptions } from './pod-ranking.ts';

const NOW = Date.parse('2024-05-01T12:00:00Z');
const ago = (s: number): string => new Date(NOW - s * 1000).toISOString();

interface PodSpec {
  node?: string;
  phase?: PodPhase;
  /** Seconds since Ready (true: Ready with no transition time; undefined: not Ready). */
  readyFor?: number | true;
  restarts?: number;
  createdAgo?: number;
  cost?: string;
  state?: string;
}

function pod(name: string, s: PodSpec = {}): Pod {
  const labels = s.state !== undefined ? { 'lifecycle.apps.kruise.io/state': s.state } : undefined;
  return {
    metadata: {
      name,
      ...(labels !== undefined ? { labels } : {}),
      ...(s.cost !== undefined ? { annotations: { 'controller.kubernetes.io/pod-deletion-cost': s.cost } } : {}),
      ...(s.createdAgo !== undefined ? { creationTimestamp: ago(s.createdAgo) } : {}),
    },
    spec: { containers: [{ name: 'c' }], ...(s.node !== undefined ? { nodeName: s.node } : {}) },
    status: {
      ...(s.phase !== undefined ? { phase: s.phase } : {}),
      ...(s.readyFor !== undefined ? { conditions: [{ type: 'Ready', status: 'True', ...(s.readyFor === true ? {} : { lastTransitionTime: ago(s.readyFor) }) }] } : {}),
      ...(s.restarts !== undefined
        ? {
            containerStatuses: [
              { name: 'c', restartCount: s.restarts },
              { name: 'd', restartCount: 0 },
            ],
          }
        : {}),
    },
  };
}

/** A healthy, scheduled, long-ready, old pod; each test changes one thing. */
const healthy = (name: string, s: PodSpec = {}): Pod => pod(name, { node: `node-${name}`, phase: 'Running', readyFor: 3600, createdAgo: 7200, ...s });

const OPTS: RankOptions = { minReadySeconds: 0, nowMs: NOW, nodes: new Map() };
const names = (pods: readonly Pod[]): string[] => pods.map((p) => p.metadata.name ?? '');
const deletionOrder = (pods: readonly Pod[], opts: RankOptions = OPTS): string[] => names(rankPodsForDeletion(pods, opts));

describe('deletion order (docs/features.md#deletion-order)', () => {
  test('rule 1: an unassigned pod is deleted before an assigned one', () => {
    assert.deepEqual(deletionOrder([healthy('a'), pod('b', { phase: 'Running', readyFor: 3600 })]), ['b', 'a']);
  });

  test('rule 2: Pending before Unknown before Running, and an unset phase counts as Pending', () => {
    const pods = [healthy('run'), healthy('unk', { phase: 'Unknown' }), healthy('pend', { phase: 'Pending' })];
    assert.deepEqual(deletionOrder(pods), ['pend', 'unk', 'run']);
    assert.deepEqual(deletionOrder([healthy('unk', { phase: 'Unknown' }), pod('none', { node: 'n' })]), ['none', 'unk']);
  });

  test('rule 3: a pod that is not available yet (minReadySeconds, lifecycle) is deleted first', () => {
    const fresh = healthy('fresh', { readyFor: 10, createdAgo: 9000 });
    assert.deepEqual(deletionOrder([healthy('old'), fresh], { ...OPTS, minReadySeconds: 60 }), ['fresh', 'old']);
    assert.deepEqual(deletionOrder([healthy('a'), healthy('b', { state: 'Updating' })]), ['b', 'a']);
  });

  test('rule 4: a not-ready pod is deleted first', () => {
    const notReady = pod('nr', { node: 'n', phase: 'Running', createdAgo: 9000 });
    assert.deepEqual(deletionOrder([healthy('r'), notReady]), ['nr', 'r']);
  });

  test('rule 5: pod-deletion-cost -100 goes before its peers, higher costs go last', () => {
    const pods = [healthy('a'), healthy('b', { cost: '100' }), healthy('c', { cost: '-100' }), healthy('d')];
    assert.deepEqual(deletionOrder(pods), ['c', 'a', 'd', 'b']);
  });

  test('rule 5: an invalid deletion cost counts as 0', () => {
    for (const bad of ['+5', '007', 'abc', '', '1.5', '2147483648', '-2147483649', '-']) {
      assert.equal(deletionCost(healthy('x', { cost: bad })), 0, JSON.stringify(bad));
    }
    assert.equal(deletionCost(healthy('x', { cost: '-007' })), -7);
    assert.equal(deletionCost(healthy('x', { cost: '2147483647' })), 2147483647);
    assert.equal(deletionCost(healthy('x', { cost: '-0' })), 0);
    assert.deepEqual(deletionOrder([healthy('bad', { cost: '+5' }), healthy('neg', { cost: '-1' })]), ['neg', 'bad']);
  });

  test('rule 6: pods sharing a node are deleted before a pod alone on its node', () => {
    const pods = [healthy('alone'), healthy('x1', { node: 'n' }), healthy('x2', { node: 'n' })];
    assert.deepEqual(deletionOrder(pods), ['x1', 'alone', 'x2']);
  });

  test('rule 7: the more recently ready pod is deleted first; an unknown ready time counts as most recent', () => {
    const pods = [healthy('long', { readyFor: 5000 }), healthy('recent', { readyFor: 100 }), healthy('unknown', { readyFor: true })];
    assert.deepEqual(deletionOrder(pods), ['unknown', 'recent', 'long']);
  });

  test('rule 8: more container restarts is deleted first', () => {
    assert.deepEqual(deletionOrder([healthy('calm', { restarts: 1 }), healthy('crashy', { restarts: 7 })]), ['crashy', 'calm']);
  });

  test('rule 9: the newer pod is deleted first; a pod without creation time counts as newest', () => {
    const pods = [healthy('old', { createdAgo: 9000 }), healthy('new', { createdAgo: 10 }), pod('zero', { node: 'node-zero', phase: 'Running', readyFor: 3600 })];
    assert.deepEqual(deletionOrder(pods), ['zero', 'new', 'old']);
  });

  test('rule 10: complete ties keep their list order (stable sort), whatever the list length', () => {
    const pods = Array.from({ length: 40 }, (_, i) => healthy(`p${i}`));
    assert.deepEqual(deletionOrder(pods), names(pods));
  });

  test('earlier rules win over later ones: an unassigned pod goes first even with a high cost', () => {
    const pods = [healthy('cheap', { cost: '-1000' }), pod('unassigned', { phase: 'Running', readyFor: 3600, cost: '1000' })];
    assert.deepEqual(deletionOrder(pods), ['unassigned', 'cheap']);
  });

  test('the input list is left untouched', () => {
    const pods = [healthy('a'), healthy('b', { phase: 'Pending' })];
    rankPodsForDeletion(pods, OPTS);
    assert.deepEqual(names(pods), ['a', 'b']);
  });
});

describe('same-node ranker', () => {
  test('node-c holding p5, p3, p4 (sorted in that order) ranks them 2, 1, 0; rank beats age', () => {
    const pods = [
      healthy('p3', { node: 'node-c', createdAgo: 200 }),
      healthy('p1', { node: 'node-a', createdAgo: 50 }), // the newest, but alone on its node
      healthy('p4', { node: 'node-c', createdAgo: 300 }),
      healthy('p5', { node: 'node-c', createdAgo: 100 }),
    ];
    const ranks = sameNodeRanks(pods);
    assert.deepEqual(
      pods.map((p) => ranks.get(p) ?? 0),
      [1, 0, 0, 2],
    );
    assert.deepEqual(deletionOrder(pods), ['p5', 'p3', 'p1', 'p4']);
  });

  test('Kruise vector: nodes a{0,4,10} b{3,6} c{5} d{7,8,9} and two unscheduled pods', () => {
    const layout: [string, string | undefined][] = [
      ['0', 'a'],
      ['1', undefined],
      ['2', undefined],
      ['3', 'b'],
      ['4', 'a'],
      ['5', 'c'],
      ['6', 'b'],
      ['7', 'd'],
      ['8', 'd'],
      ['9', 'd'],
      ['10', 'a'],
    ];
    const pods = layout.map(([n, node]) => pod(n, node !== undefined ? { node } : {}));
    const ranks = sameNodeRanks(pods);
    assert.deepEqual(Object.fromEntries([...ranks].map(([p, r]) => [p.metadata.name, r])), { 0: 2, 4: 1, 3: 1, 7: 2, 8: 1 });
  });
});

describe('spread-constraints ranker (Kruise TestSpreadConstraintsRanker vectors)', () => {
  const ZONE = 'topology.kubernetes.io/zone';
  const HOST = 'kubernetes.io/hostname';
  const node = (name: string, zone?: string): Node => ({
    metadata: { name, labels: zone !== undefined ? { [HOST]: name, [ZONE]: zone } : {} },
  });
  const nodes = new Map(
    [node('a'), node('b', 'z1'), node('c', 'z1'), node('d', 'z1'), node('e', 'z2'), node('f', 'z2'), node('g', 'z2'), node('h', 'z3'), node('i', 'z3')].map((n) => [
      n.metadata.name ?? '',
      n,
    ]),
  );
  // z1: b 2, c 3, d 5 pods; z2: e 5, f 3; z3: i 5; node a has no labels.
  const pods = [
    ['a', 2],
    ['b', 2],
    ['c', 3],
    ['d', 5],
    ['e', 5],
    ['f', 3],
    ['i', 5],
  ].flatMap(([n, count]) => Array.from({ length: Number(count) }, (_, i) => pod(`${n}-${i}`, { node: String(n) })));
  const spread = (...keys: string[]): RankOptions => ({
    ...OPTS,
    nodes,
    topologySpreadConstraints: keys.map((topologyKey) => ({ topologyKey, maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule' })),
  });

  test('across zones, the most crowded zone (and within it the most crowded node) loses pods first', () => {
    assert.deepEqual(deletionOrder(pods, spread(ZONE)), [
      'd-0',
      'd-1',
      'c-0',
      'e-0',
      'd-2',
      'e-1',
      'b-0',
      'e-2',
      'c-1',
      'f-0',
      'i-0',
      'd-3',
      'e-3',
      'i-1',
      'b-1',
      'f-1',
      'i-2',
      'c-2',
      'e-4',
      'i-3',
      'd-4',
      'f-2',
      'i-4',
      'a-0',
      'a-1', // on a node without the label: rank 0
    ]);
  });

  test('zone and hostname constraints add up', () => {
    assert.deepEqual(deletionOrder(pods, spread(ZONE, HOST)), [
      'd-0',
      'e-0',
      'd-1',
      'e-1',
      'c-0',
      'i-0',
      'd-2',
      'e-2',
      'i-1',
      'f-0',
      'b-0',
      'c-1',
      'i-2',
      'd-3',
      'e-3',
      'f-1',
      'i-3',
      'b-1',
      'c-2',
      'e-4',
      'd-4',
      'f-2',
      'i-4',
      'a-0',
      'a-1',
    ]);
  });

  test('pods on nodes missing from the snapshot are ignored', () => {
    const ranks = spreadConstraintRanks([pod('x', { node: 'ghost' }), pod('y', { node: 'b' })], spread(ZONE).topologySpreadConstraints ?? [], nodes);
    assert.deepEqual([...ranks.values()], [Math.log(3)]);
  });

  test('without constraints the same-node ranker is used', () => {
    assert.deepEqual(deletionOrder([pod('solo', { node: 'x' }), pod('d1', { node: 'd' }), pod('d2', { node: 'd' })], { ...OPTS, nodes }), ['d1', 'solo', 'd2']);
  });
});

describe('choosePodsToDelete', () => {
  const olds = [healthy('o1'), healthy('o2', { phase: 'Pending' }), healthy('o3')];
  const news = [healthy('n1'), healthy('n2', { phase: 'Pending' }), healthy('n3')];

  test('old-revision pods only, when the old surplus covers the whole scale-in', () => assert.deepEqual(names(choosePodsToDelete(news, olds, 1, 2, OPTS)), ['o2']));

  test('old-revision pods first, then updated ones for the rest', () => assert.deepEqual(names(choosePodsToDelete(news, olds, 3, 1, OPTS)), ['o2', 'n2', 'n1']));

  test('updated pods only, when there is no old surplus', () => assert.deepEqual(names(choosePodsToDelete(news, olds, 2, 0, OPTS)), ['n2', 'n1']));

  test('a list taken whole keeps its order, and asking for more than there is returns them all', () => {
    assert.deepEqual(names(choosePodsToDelete(news, olds, 3, 3, OPTS)), ['o1', 'o2', 'o3']);
    assert.deepEqual(names(choosePodsToDelete(news, olds, 5, 5, OPTS)), ['o1', 'o2', 'o3']);
  });
});

describe('default update order (docs/features.md#update-order)', () => {
  test('Kruise example: {0 Pending+Ready, 1 Pending, 3 Running+Ready, 4 Running} → [1, 0, 4, 3]', () => {
    const pods = [
      pod('0', { node: 'n', phase: 'Pending', readyFor: 100 }),
      pod('1', { node: 'n', phase: 'Pending' }),
      pod('3', { node: 'n', phase: 'Running', readyFor: 100 }),
      pod('4', { node: 'n', phase: 'Running' }),
    ];
    assert.deepEqual(names(sortPodsForUpdate(pods, NOW)), ['1', '0', '4', '3']);
  });

  test('unassigned first, then recently ready, more restarts, newer', () => {
    const pods = [
      healthy('old'),
      healthy('newer', { createdAgo: 100 }),
      healthy('crashy', { restarts: 3 }),
      healthy('recent', { readyFor: 10 }),
      pod('unassigned', { phase: 'Running', readyFor: 3600 }),
    ];
    assert.deepEqual(names(sortPodsForUpdate(pods, NOW)), ['unassigned', 'recent', 'crashy', 'newer', 'old']);
  });

  test('deletion cost, availability and node sharing do not matter for updates', () => {
    const pods = [healthy('a', { cost: '100', node: 'n' }), healthy('b', { cost: '-100', state: 'Updating', node: 'n' })];
    assert.deepEqual(names(sortPodsForUpdate(pods, NOW)), ['a', 'b']);
  });
});
