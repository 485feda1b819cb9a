// The invariant checker of chaos runs (node --test bench/chaos-checker.test.ts): its streams fed by hand, out of
// order the way separate watch streams deliver them, with resourceVersions as one etcd numbers them.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyList, InvariantChecker } from './chaos-checker.ts';
import { StreamPosition } from './chaos-order.ts';
import type { CloneSet } from '../src/api/cloneset.ts';
import { LABEL_INSTANCE_ID } from '../src/api/well-known.ts';
import type { KubeObject, PersistentVolumeClaim, Pod } from '../src/kube/types.ts';

const obj = (name: string, ready: boolean): KubeObject & { ready: boolean } => ({ metadata: { name }, ready });

describe('a relist', () => {
  it('is applied whole before any of its changes is judged: a removal sees the update listed with it', () => {
    // the checker knew: the replacement not ready yet, the old pod ready; the list after a lost watch: the
    // replacement ready, the old pod gone
    const m = new Map([
      ['replacement', obj('replacement', false)],
      ['old', obj('old', true)],
    ]);
    const changes = applyList(m, [obj('replacement', true)]);
    assert.deepEqual([...m.keys()], ['replacement']);
    assert.equal(m.get('replacement')?.ready, true, 'the map is the list when the first change is judged');
    assert.deepEqual(
      changes.map(([b, a]) => [b?.metadata?.name, b?.ready, a?.ready]),
      [
        ['old', true, undefined],
        ['replacement', false, true],
      ],
    );
  });

  it('reports objects new to the checker with no before', () => {
    const m = new Map<string, KubeObject & { ready: boolean }>();
    const changes = applyList(m, [obj('a', true)]);
    assert.deepEqual(
      changes.map(([b, a]) => [b, a?.metadata?.name]),
      [[undefined, 'a']],
    );
  });
});

/** The `recreate` CloneSet of the chaos workload: maxUnavailable 2, maxSurge 1. */
function cloneSet(rv: number, replicas: number, generation: number, observedGeneration: number): CloneSet {
  return {
    metadata: { name: 'recreate', namespace: 'ns', uid: 'cs-uid', resourceVersion: String(rv), generation },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'recreate' } },
      template: { metadata: { labels: { app: 'recreate' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      updateStrategy: { type: 'ReCreate', maxUnavailable: 2, maxSurge: 1 },
    },
    status: { observedGeneration, replicas, readyReplicas: replicas, availableReplicas: replicas, updatedReplicas: replicas, updatedReadyReplicas: replicas },
  };
}

function pod(id: string, rv: number, state: 'ready' | 'terminating' = 'ready'): Pod {
  return {
    metadata: {
      name: `recreate-${id}`,
      namespace: 'ns',
      uid: `uid-${id}`,
      resourceVersion: String(rv),
      labels: { app: 'recreate', [LABEL_INSTANCE_ID]: id },
      ownerReferences: [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'recreate', uid: 'cs-uid', controller: true }],
      ...(state === 'terminating' ? { deletionTimestamp: '2026-11-27T07:42:15Z' } : {}),
    },
    spec: { containers: [{ name: 'c', image: 'nginx' }], nodeName: 'kwok-node-0' },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

function pvc(id: string, rv: number, deleting: boolean): PersistentVolumeClaim {
  return {
    metadata: {
      name: `data-recreate-${id}`,
      namespace: 'ns',
      uid: `uid-pvc-${id}`,
      resourceVersion: String(rv),
      labels: { [LABEL_INSTANCE_ID]: id },
      ownerReferences: [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'recreate', uid: 'cs-uid', controller: false }],
      ...(deleting ? { deletionTimestamp: '2026-11-27T07:42:15Z' } : {}),
    },
  };
}

const IDS = ['fbj2v', 'kz4j5', 'qs8wk', 'q4q78', 'a1b2c', 'd3e4f', 'g5h6i', 'j7k8l'];

const stops: AbortController[] = [];
afterEach(() => {
  for (const s of stops.splice(0)) s.abort();
});

/** A checker that has listed `recreate` at generation 1 (observed) with 8 replicas and its 8 Ready pods, at rv 100. */
function checkerOf8(holdBoundMs?: number): InvariantChecker {
  const stop = new AbortController();
  stops.push(stop);
  const c = new InvariantChecker({ leaseName: 'lease', signal: stop.signal, log: () => undefined, ...(holdBoundMs === undefined ? {} : { holdBoundMs }) });
  c.cloneSetList([cloneSet(90, 8, 1, 1)], '100');
  c.podList(
    IDS.map((id, i) => pod(id, 50 + i)),
    '100',
  );
  c.pvcList(
    IDS.map((id, i) => pvc(id, 60 + i, false)),
    '100',
  );
  return c;
}

/** The scale-in of the run: four pods deleted (terminating) at rv 110–113. */
function deleteFour(c: InvariantChecker): void {
  for (const [i, id] of IDS.slice(0, 4).entries()) c.podEvent({ type: 'MODIFIED', object: pod(id, 110 + i, 'terminating') });
}

describe('the checker judges a pod change against the CloneSet as of its resourceVersion', () => {
  it('reports nothing for pod deletions that arrive before the scale-down they carry out', () => {
    const c = checkerOf8();
    deleteFour(c);
    assert.equal(c.podsOf('recreate').filter((p) => p.metadata.deletionTimestamp !== undefined).length, 0, 'the deletions wait for the CloneSet stream');
    // the CloneSet stream, behind: the scale-down to 4 (rv 105), observed by the controller (rv 106), a bookmark past the deletions
    c.cloneSetEvent({ type: 'MODIFIED', object: cloneSet(105, 4, 2, 1) });
    c.cloneSetEvent({ type: 'MODIFIED', object: cloneSet(106, 4, 2, 2) });
    c.cloneSetEvent({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '120' } } });
    assert.deepEqual(c.violations, []);
    assert.equal(c.podsOf('recreate').filter((p) => p.metadata.deletionTimestamp !== undefined).length, 4, 'all four deletions were judged');
    assert.deepEqual([c.podHold.ordered, c.podHold.unordered], [5, 0], 'the list and the four deletions, each in order');
  });

  it('reports too-unavailable for the same deletions with no scale-down', () => {
    const c = checkerOf8();
    deleteFour(c);
    c.cloneSetEvent({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '120' } } });
    assert.deepEqual(
      c.violations.map((v) => [v.kind, v.detail]),
      [
        ['too-unavailable', 'recreate: pod recreate-qs8wk made unavailable with 3 unavailable > maxUnavailable 2 (replicas 8)'],
        ['too-unavailable', 'recreate: pod recreate-q4q78 made unavailable with 4 unavailable > maxUnavailable 2 (replicas 8)'],
      ],
    );
  });

  it('judges a deletion against the scale-down only from its resourceVersion on: a scale-down after the deletions does not excuse them', () => {
    const c = checkerOf8();
    deleteFour(c);
    c.cloneSetEvent({ type: 'MODIFIED', object: cloneSet(115, 4, 2, 2) });
    assert.deepEqual(
      c.violations.map((v) => v.kind),
      ['too-unavailable', 'too-unavailable'],
    );
  });

  it('proves the CloneSet stream has passed a pod change by a fresh list holding exactly the versions it delivered', async () => {
    const stop = new AbortController();
    stops.push(stop);
    const lists: string[] = [];
    const c = new InvariantChecker({
      leaseName: 'lease',
      signal: stop.signal,
      log: () => undefined,
      listFresh: async (r) => {
        lists.push(r.plural);
        return { items: [cloneSet(90, 8, 1, 1)], resourceVersion: '130' };
      },
    });
    c.cloneSetList([cloneSet(90, 8, 1, 1)], '100');
    c.podList(
      IDS.map((id, i) => pod(id, 50 + i)),
      '100',
    );
    deleteFour(c);
    for (const deadline = Date.now() + 5000; c.podHold.pending > 0 && Date.now() < deadline; ) await new Promise((res) => setTimeout(res, 10));
    assert.equal(c.podHold.pending, 0, 'the fresh list released the held deletions');
    assert.deepEqual(lists, ['clonesets']);
    assert.equal(c.cloneSetStream.passed, 130);
    assert.deepEqual(
      c.violations.map((v) => v.kind),
      ['too-unavailable', 'too-unavailable'],
    );
  });

  it('judges a change the CloneSet stream did not pass within the bound anyway, and its violation says so', () => {
    const c = checkerOf8(0);
    deleteFour(c);
    assert.deepEqual([c.podHold.ordered, c.podHold.unordered], [1, 4]);
    assert.match(
      c.violations[0]?.detail ?? '',
      /with 3 unavailable > maxUnavailable 2 \(replicas 8\) \[judged unordered: the CloneSet stream had not passed resourceVersion 112 within 0 s\]$/,
    );
  });
});

describe('the checker judges a pod creation against the CloneSet as of its resourceVersion', () => {
  it('reports nothing for pods that arrive before the scale-up allowing them', () => {
    const c = checkerOf8();
    c.podEvent({ type: 'ADDED', object: pod('new01', 110) });
    c.podEvent({ type: 'ADDED', object: pod('new02', 111) });
    c.cloneSetEvent({ type: 'MODIFIED', object: cloneSet(105, 12, 2, 1) });
    c.cloneSetEvent({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '120' } } });
    assert.deepEqual(c.violations, []);
    assert.equal(c.podsOf('recreate').length, 10);
  });

  it('reports too-many-pods for the same pods with no scale-up', () => {
    const c = checkerOf8();
    c.podEvent({ type: 'ADDED', object: pod('new01', 110) });
    c.podEvent({ type: 'ADDED', object: pod('new02', 111) });
    c.cloneSetEvent({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '120' } } });
    assert.deepEqual(
      c.violations.map((v) => [v.kind, v.detail]),
      [['too-many-pods', 'recreate: pod recreate-new02 created with 10 pods counted > replicas + maxSurge = 9']],
    );
  });
});

describe('the checker judges a pod change in a relist gap of the CloneSet stream against the versions before and after it', () => {
  // The CloneSet stream was lost at rv 100 (an API server restart) while the pod stream came back first: the
  // scale-up at rv 105 and the controller's status write at rv 115 reach the checker only as a relist at rv 120.

  it('reports nothing for pods created for a scale-up the relist folded in', () => {
    const c = checkerOf8();
    c.podEvent({ type: 'ADDED', object: pod('new01', 110) });
    c.podEvent({ type: 'ADDED', object: pod('new02', 111) });
    c.cloneSetList([cloneSet(115, 10, 2, 2)], '120');
    assert.deepEqual(c.violations, []);
    assert.deepEqual([c.podHold.ordered, c.podHold.unordered], [3, 0], 'the list and both creations, released by the relist');
    assert.equal(c.podsOf('recreate').length, 10);
  });

  it('logs the relist and what changed in its gap', () => {
    const stop = new AbortController();
    stops.push(stop);
    const logged: string[] = [];
    const c = new InvariantChecker({ leaseName: 'lease', signal: stop.signal, log: (m) => logged.push(m) });
    c.cloneSetList([cloneSet(90, 8, 1, 1)], '100');
    c.cloneSetList([cloneSet(115, 10, 2, 2)], '120');
    assert.deepEqual(logged, ['checker: clonesets relisted at resourceVersion 120 (the stream was at 100); changed in the gap: recreate@115 (generation 1 → 2)']);
  });

  it('reports nothing for pod deletions carrying out a scale-down the relist folded in', () => {
    const c = checkerOf8();
    deleteFour(c);
    c.cloneSetList([cloneSet(115, 4, 2, 2)], '120');
    assert.deepEqual(c.violations, []);
  });

  it('still reports too-many-pods when the pods exceed the bound of the listed version too', () => {
    const c = checkerOf8();
    for (const [i, id] of ['new01', 'new02', 'new03', 'new04'].entries()) c.podEvent({ type: 'ADDED', object: pod(id, 110 + i) });
    c.cloneSetList([cloneSet(115, 10, 2, 2)], '120');
    assert.deepEqual(
      c.violations.map((v) => [v.kind, v.detail]),
      [
        [
          'too-many-pods',
          'recreate: pod recreate-new04 created with 12 pods counted > replicas + maxSurge = 11 [judged across a relist of the CloneSet stream: its versions at resourceVersions 90 and 115]',
        ],
      ],
    );
  });

  it('still reports too-many-pods when only the status changed in the gap', () => {
    const c = checkerOf8();
    c.podEvent({ type: 'ADDED', object: pod('new01', 110) });
    c.podEvent({ type: 'ADDED', object: pod('new02', 111) });
    c.cloneSetList([cloneSet(115, 8, 1, 1)], '120');
    assert.deepEqual(
      c.violations.map((v) => v.detail),
      [
        'recreate: pod recreate-new02 created with 10 pods counted > replicas + maxSurge = 9 [judged across a relist of the CloneSet stream: its versions at resourceVersions 90 and 115]',
      ],
    );
  });

  it('judges a pod change after the listed version against it alone', () => {
    const c = checkerOf8();
    c.podEvent({ type: 'ADDED', object: pod('new01', 116) });
    c.podEvent({ type: 'ADDED', object: pod('new02', 117) });
    c.cloneSetList([cloneSet(115, 4, 2, 2)], '120');
    assert.deepEqual(
      c.violations.map((v) => v.detail),
      ['recreate: pod recreate-new01 created with 9 pods counted > replicas + maxSurge = 5', 'recreate: pod recreate-new02 created with 10 pods counted > replicas + maxSurge = 5'],
    );
  });
});

describe('the checker judges a PVC deletion against the pods live at its resourceVersion', () => {
  it('reports nothing when the pod deletion before it arrives after it', () => {
    const c = checkerOf8();
    c.pvcEvent({ type: 'MODIFIED', object: pvc('fbj2v', 112, true) });
    c.podEvent({ type: 'MODIFIED', object: pod('fbj2v', 111, 'terminating') });
    c.podEvent({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '120' } } });
    assert.equal(c.pvcHold.ordered, 1);
    assert.deepEqual(c.violations, []);
  });

  it('reports nothing when a pod relist shows the pod gone: it may have ended anywhere in the gap before the list', () => {
    const c = checkerOf8();
    c.pvcEvent({ type: 'MODIFIED', object: pvc('fbj2v', 112, true) });
    c.podList(
      IDS.slice(1).map((id, i) => pod(id, 51 + i)),
      '120',
    );
    assert.equal(c.pvcHold.ordered, 1);
    assert.deepEqual(c.violations, []);
  });

  it('reports pvc-lost when its pod is still live at that resourceVersion', () => {
    const c = checkerOf8();
    c.pvcEvent({ type: 'MODIFIED', object: pvc('fbj2v', 112, true) });
    c.podEvent({ type: 'MODIFIED', object: pod('fbj2v', 113, 'terminating') });
    assert.deepEqual(
      c.violations.map((v) => [v.kind, v.detail]),
      [['pvc-lost', 'recreate: PVC data-recreate-fbj2v deleted while pod recreate-fbj2v (instance id fbj2v) lives']],
    );
  });
});

describe('a stream position', () => {
  const cm = (name: string, rv: number): KubeObject => ({ metadata: { name, resourceVersion: String(rv) } });

  it('is proven past a fresh list that holds exactly the versions it delivered', () => {
    const s = new StreamPosition();
    s.list([cm('a', 3)], 5);
    s.event('MODIFIED', cm('a', 7));
    assert.equal(s.prove([cm('a', 7)], 40), true);
    assert.equal(s.passed, 40);
  });

  it('is not proven by a list with a version, an object or a deletion it has not delivered', () => {
    const s = new StreamPosition();
    s.list([cm('a', 3), cm('b', 4)], 5);
    assert.equal(s.prove([cm('a', 9), cm('b', 4)], 40), false, 'a newer version');
    assert.equal(s.prove([cm('a', 3), cm('b', 4), cm('c', 8)], 40), false, 'a new object');
    assert.equal(s.prove([cm('a', 3)], 40), false, 'a deletion');
    assert.equal(s.passed, 5);
  });
});
