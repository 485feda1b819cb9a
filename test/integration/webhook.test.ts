// The admission webhook on a real API server (hack/test.sh runs `cloneset-controller webhook` in URL mode for the
// whole run): rejections through `kubectl apply --dry-run=server` name every field path, including the rules only
// the webhook can check (the podsToDelete pods, which it reads); Kruise's defaults are stored; the conversion
// webhook lets both versions read the same objects.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { ApiError } from '../../src/kube/api-error.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { CLONESETS, NAMESPACES, PODS } from '../../src/kube/resources.ts';
import type { Pod } from '../../src/kube/types.ts';
import { newCloneSet } from '../helpers/cloneset.ts';
import { kubectl, kubectlOk, newNamespace, testClient } from '../helpers/kube.ts';

type Obj = Record<string, unknown>;
const CLONESETS_V1BETA1 = { ...CLONESETS, version: 'v1beta1' };

describe('admission webhook (mutating, validating, conversion) through the API server', () => {
  let client: KubeClient;
  let ns: string;
  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'webhook');
  });
  after(async () => {
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  it('kubectl apply --dry-run=server rejects a bad CloneSet with every field path, including a podsToDelete pod that does not exist', () => {
    const cs = newCloneSet(ns, 'bad', 2) as unknown as Obj;
    const spec = cs.spec as Obj;
    (spec.template as { metadata: { labels: Obj } }).metadata.labels = { app: 'other' };
    spec.scaleStrategy = { podsToDelete: ['ghost'] };
    const r = kubectl(['apply', '--dry-run=server', '-f', '-'], stringify(cs));
    assert.notEqual(r.code, 0, r.stdout);
    assert.match(r.stderr, /spec\.template\.metadata\.labels: Invalid value: .*`selector` does not match template `labels`/);
    assert.match(r.stderr, /spec\.scaleStrategy\.podsToDelete: Invalid value: "ghost": find pod ghost failed: pods "ghost" not found/);
    assert.equal(kubectl(['get', 'clonesets', '-n', ns, 'bad']).code, 1, 'nothing was stored');
  });

  it('the rejection is a 422 Invalid whose causes carry the field paths (what clients other than kubectl read)', async () => {
    const stray: Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'stray', namespace: ns }, spec: { containers: [{ name: 'c', image: 'nginx:alpine' }] } } as Pod;
    await client.create(PODS, ns, stray);
    const cs = newCloneSet(ns, 'steal', 1, { spec: { scaleStrategy: { podsToDelete: ['stray'] } } });
    const err = await client.create(CLONESETS, ns, cs, { dryRun: true }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.code, 422);
    assert.equal(err.reason, 'Invalid');
    const status = err.status as { message: string; details: { causes: { field: string; message: string }[] } };
    assert.deepEqual(
      status.details.causes.map((c) => c.field),
      ['spec.scaleStrategy.podsToDelete'],
    );
    assert.match(status.details.causes[0]?.message ?? '', /find pod stray owner is not this CloneSet/);
    assert.match(status.message, /admission webhook "vcloneset\.kb\.io" denied the request: CloneSet\.apps\.kruise\.io "steal" is invalid: spec\.scaleStrategy\.podsToDelete/);
  });

  it("a created v1alpha1 CloneSet is stored with Kruise's defaults (strategy and pod template)", async () => {
    kubectlOk(['create', '-f', '-'], stringify(newCloneSet(ns, 'defaults', 0)));
    const got = await client.get<Obj>(CLONESETS, ns, 'defaults');
    const spec = got.spec as { revisionHistoryLimit: number; updateStrategy: Obj; template: { spec: Obj & { containers: Obj[] } } };
    assert.equal(spec.revisionHistoryLimit, 10);
    assert.deepEqual(spec.updateStrategy, { type: 'ReCreate', partition: 0, maxUnavailable: '20%', maxSurge: 0 });
    const pod = spec.template.spec;
    assert.deepEqual([pod.restartPolicy, pod.dnsPolicy, pod.schedulerName, pod.terminationGracePeriodSeconds], ['Always', 'ClusterFirst', 'default-scheduler', 30]);
    assert.deepEqual(pod.securityContext, {});
    const c = pod.containers[0] ?? {};
    assert.deepEqual([c.imagePullPolicy, c.terminationMessagePath, c.terminationMessagePolicy], ['Always', '/dev/termination-log', 'File']);
  });

  it('a CloneSet created as v1beta1 is defaulted as v1beta1 and listed by both versions (conversion webhook)', async () => {
    const v1beta1: Obj = {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'CloneSet',
      metadata: { name: 'beta', namespace: ns },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'beta' } },
        template: { metadata: { labels: { app: 'beta' } }, spec: { containers: [{ name: 'c', image: 'nginx:alpine' }] } },
      },
    };
    await client.create(CLONESETS_V1BETA1, ns, v1beta1);
    const beta = await client.get<Obj>(CLONESETS_V1BETA1, ns, 'beta');
    const betaSpec = beta.spec as { revisionHistoryLimit: number; template: { spec: { containers: Obj[] } } };
    assert.equal(betaSpec.revisionHistoryLimit, 10);
    assert.equal(betaSpec.template.spec.containers[0]?.imagePullPolicy, 'Always');
    const list = (v: string): string => kubectlOk(['get', `clonesets.${v}.apps.kruise.io`, '-n', ns, '-o', 'jsonpath={.items[*].metadata.name} {.items[*].apiVersion}']);
    assert.equal(list('v1alpha1'), 'beta defaults apps.kruise.io/v1alpha1 apps.kruise.io/v1alpha1');
    assert.equal(list('v1beta1'), 'beta defaults apps.kruise.io/v1beta1 apps.kruise.io/v1beta1');
  });
});
