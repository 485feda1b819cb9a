// docs/features.md#image-pre-download (Kruise pkg/controller/cloneset/cloneset_predownload_image.go): which ImagePullJobs a new update revision gets, and when pre-download does not apply.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet, CloneSetUpdateStrategy } from '../../api/cloneset.ts';
import { FEATURE_GATE_DEFAULTS } from '../../api/well-known.ts';
import type { Container, ControllerRevision } from '../../kube/types.ts';
import { newRevision } from '../plan/revisions.ts';
import { planImagePreDownload, type PreDownloadPlan } from './predownload.ts';
import { isAtLeast132 } from '../predownload-sync.ts';

function cloneSet(containers: readonly Container[], o: { replicas?: number; strategy?: Partial<CloneSetUpdateStrategy>; annotations?: Record<string, string> } = {}): CloneSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: 'web', namespace: 'ns', uid: 'uid-web', ...(o.annotations !== undefined ? { annotations: o.annotations } : {}) },
    spec: {
      replicas: o.replicas ?? 10,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' }, annotations: { team: 'a' } }, spec: { containers, imagePullSecrets: [{ name: 'regcred' }] } },
      updateStrategy: { type: 'InPlaceIfPossible', ...o.strategy },
    },
  };
}

const app = (image: string): Container => ({ name: 'app', image });
const side = (image: string): Container => ({ name: 'side', image });

function plan(oldC: readonly Container[], newC: readonly Container[], o: Parameters<typeof cloneSet>[1] = {}, labels: Record<string, string> = {}): PreDownloadPlan {
  const cur = newRevision(cloneSet(oldC, o), 1, 0);
  const cs = cloneSet(newC, o);
  const upd0 = newRevision(cs, 2, 0);
  const upd: ControllerRevision = { ...upd0, metadata: { ...upd0.metadata, labels: { ...upd0.metadata.labels, ...labels } } };
  return planImagePreDownload(cs, cur, upd, FEATURE_GATE_DEFAULTS);
}

describe('planImagePreDownload (docs/features.md#image-pre-download)', () => {
  test('one job per changed container, with the inPlaceUpdateStrategy tuning, owner, selector and policies', () => {
    const p = plan([app('a:1'), side('s:1')], [app('a:2'), side('s:1')], {
      strategy: { inPlaceUpdateStrategy: { imagePreDownloadParallelism: 5, imagePreDownloadTimeoutSeconds: 120 } },
    });
    assert.equal(p.kind, 'create');
    if (p.kind !== 'create') return;
    assert.equal(p.jobs.length, 1);
    const job = p.jobs[0];
    assert.ok(job !== undefined);
    const rev = newRevision(cloneSet([app('a:2'), side('s:1')]), 2, 0);
    const name = rev.metadata.name ?? '';
    const hash = rev.metadata.labels?.['controller.kubernetes.io/hash'] ?? '';
    assert.deepEqual(job, {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ImagePullJob',
      metadata: {
        name: `${name}-app`,
        namespace: 'ns',
        labels: { app: 'web', 'controller.kubernetes.io/hash': hash },
        ownerReferences: [{ apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'web', uid: 'uid-web', controller: true, blockOwnerDeletion: true }],
      },
      spec: {
        image: 'a:2',
        pullSecrets: ['regcred'],
        podSelector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'controller-revision-hash', operator: 'NotIn', values: [name, hash] }] },
        parallelism: 5,
        pullPolicy: { backoffLimit: 1, timeoutSeconds: 120 },
        completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 600 },
        sandboxConfig: { annotations: { team: 'a' }, labels: { app: 'web', 'controller.kubernetes.io/hash': hash } },
      },
    });
  });

  test('defaults: parallelism 1, timeout 300', () => {
    const p = plan([app('a:1')], [app('a:2')]);
    assert.ok(p.kind === 'create');
    assert.equal(p.jobs[0]?.spec.parallelism, 1);
    assert.equal(p.jobs[0]?.spec.pullPolicy.timeoutSeconds, 300);
  });

  test('replicas <= 3 are ignored', () => {
    assert.deepEqual(plan([app('a:1')], [app('a:2')], { replicas: 3 }), { kind: 'ignore', reason: 'replicas 3 <= 3' });
    assert.equal(plan([app('a:1')], [app('a:2')], { replicas: 4 }).kind, 'create');
  });

  test('ReCreate, all-at-once and not-in-place updates are ignored', () => {
    assert.equal(plan([app('a:1')], [app('a:2')], { strategy: { type: 'ReCreate' } }).kind, 'ignore');
    assert.equal(plan([app('a:1')], [app('a:2')], { strategy: { maxUnavailable: '100%' } }).kind, 'ignore');
    assert.equal(plan([app('a:1')], [app('a:2')], { strategy: { maxUnavailable: '100%', partition: 1 } }).kind, 'create');
    assert.equal(plan([app('a:1')], [{ ...app('a:2'), command: ['x'] }]).kind, 'ignore');
  });

  test('waits for imagePreDownloadMinUpdatedReadyPods', () => {
    assert.equal(plan([app('a:1')], [app('a:2')], { strategy: { inPlaceUpdateStrategy: { imagePreDownloadMinUpdatedReadyPods: 2 } } }).kind, 'none');
  });

  test('a revision already handled is left alone; equal revisions clean up', () => {
    assert.equal(plan([app('a:1')], [app('a:2')], {}, { 'apps.kruise.io/pre-predownload-created': 'true' }).kind, 'none');
    assert.equal(plan([app('a:1')], [app('a:2')], {}, { 'apps.kruise.io/image-predownload-ignored': 'true' }).kind, 'none');
    const cs = cloneSet([app('a:1')]);
    const rev = newRevision(cs, 1, 0);
    assert.deepEqual(planImagePreDownload(cs, rev, rev, FEATURE_GATE_DEFAULTS), { kind: 'cleanup' });
  });
});

describe('isAtLeast132 (Kruise resize version rule, docs/features.md#in-place-resources)', () => {
  test('versions', () => {
    assert.equal(isAtLeast132('v1.34.4'), true);
    assert.equal(isAtLeast132('v1.32.0-rc.1'), true);
    assert.equal(isAtLeast132('v1.31.9'), false);
    assert.equal(isAtLeast132('v1.32'), false);
    assert.equal(isAtLeast132('v2.0.0'), true);
  });
});
