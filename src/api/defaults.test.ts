import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defaultPodTemplate, defaultVolumeClaimTemplate, imageTag, setCloneSetDefaults } from './defaults.ts';
import type { CloneSet } from './cloneset.ts';
import type { PodTemplateSpec } from '../kube/types.ts';

/** [image, pull policy Kubernetes gives an init container] computed by Go (distribution/reference). */
const PULL_POLICIES = (
  JSON.parse(readFileSync(resolve(import.meta.dirname, 'go-json.vectors.json'), 'utf8')) as {
    readonly initContainerPullPolicy: readonly (readonly [string, string])[];
  }
).initContainerPullPolicy;

function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

const sampleTemplate: PodTemplateSpec = { metadata: { labels: { app: 'sample' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:alpine' }] } };

describe('defaultPodTemplate', () => {
  test('the manual sample gets exactly the webhook defaults its revision hash is computed over (docs/features.md#revisions)', () => {
    assert.deepEqual(defaultPodTemplate(sampleTemplate), {
      metadata: { labels: { app: 'sample' } },
      spec: {
        containers: [
          {
            name: 'nginx',
            image: 'nginx:alpine',
            imagePullPolicy: 'Always',
            terminationMessagePath: '/dev/termination-log',
            terminationMessagePolicy: 'File',
          },
        ],
        dnsPolicy: 'ClusterFirst',
        restartPolicy: 'Always',
        securityContext: {},
        terminationGracePeriodSeconds: 30,
        schedulerName: 'default-scheduler',
      },
    });
  });

  test('is pure: works on frozen input and returns a new object', () => {
    const frozen = deepFreeze(structuredClone(sampleTemplate));
    const out = defaultPodTemplate(frozen);
    assert.notEqual(out, frozen);
    assert.deepEqual(frozen, sampleTemplate);
  });

  test('is idempotent and keeps explicit values', () => {
    const t: PodTemplateSpec = {
      spec: {
        containers: [{ name: 'c', image: 'x', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'FallbackToLogsOnError' }],
        dnsPolicy: 'None',
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 0,
        schedulerName: 'mine',
      },
    };
    const once = defaultPodTemplate(t);
    assert.deepEqual(defaultPodTemplate(once), once);
    assert.equal(once.spec.containers[0]?.imagePullPolicy, 'IfNotPresent');
    assert.equal(once.spec.containers[0]?.['terminationMessagePolicy'], 'FallbackToLogsOnError');
    assert.equal(once.spec['terminationGracePeriodSeconds'], 0);
    assert.equal(once.spec['dnsPolicy'], 'None');
  });

  test('containers: ports, env fieldRef, probes, lifecycle, resources', () => {
    const out = defaultPodTemplate({
      spec: {
        containers: [
          {
            name: 'c',
            ports: [{ containerPort: 80 }],
            env: [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
            livenessProbe: { httpGet: { port: 80 } },
            readinessProbe: { exec: { command: ['true'] }, periodSeconds: 5 },
            lifecycle: { preStop: { httpGet: { port: 'http' } } },
            resources: { limits: { cpu: '0.0001', memory: '1024Mi' } },
          },
        ],
      },
    });
    const c = out.spec.containers[0];
    assert.deepEqual(c?.['ports'], [{ containerPort: 80, protocol: 'TCP' }]);
    assert.deepEqual(c?.['env'], [{ name: 'N', valueFrom: { fieldRef: { fieldPath: 'metadata.name', apiVersion: 'v1' } } }]);
    assert.deepEqual(c?.['livenessProbe'], {
      httpGet: { port: 80, path: '/', scheme: 'HTTP' },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    assert.deepEqual(c?.['readinessProbe'], { exec: { command: ['true'] }, periodSeconds: 5, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3 });
    assert.deepEqual(c?.['lifecycle'], { preStop: { httpGet: { port: 'http', path: '/', scheme: 'HTTP' } } });
    assert.deepEqual(c?.resources, { limits: { cpu: '1m', memory: '1Gi' } });
  });

  test('init containers follow the Kubernetes pull-policy rule, ephemeral containers get no pull policy', () => {
    const out = defaultPodTemplate({
      spec: {
        containers: [{ name: 'c', image: 'busybox:1.36' }],
        initContainers: [
          { name: 'a', image: 'busybox' },
          { name: 'b', image: 'busybox:1.36' },
        ],
        ephemeralContainers: [{ name: 'e', image: 'busybox', ports: [{ containerPort: 1 }] }],
      },
    });
    assert.equal(out.spec.containers[0]?.imagePullPolicy, 'Always');
    assert.deepEqual(
      out.spec.initContainers?.map((c) => c.imagePullPolicy),
      ['Always', 'IfNotPresent'],
    );
    assert.deepEqual(out.spec['ephemeralContainers'], [{ name: 'e', image: 'busybox', ports: [{ containerPort: 1, protocol: 'TCP' }] }]);
  });

  test(`image tag parsing matches Kubernetes (${PULL_POLICIES.length} images)`, () => {
    for (const [image, policy] of PULL_POLICIES) {
      assert.equal(imageTag(image) === 'latest' ? 'Always' : 'IfNotPresent', policy, JSON.stringify(image));
    }
  });

  test('volumes', () => {
    const out = defaultPodTemplate({
      spec: {
        containers: [],
        volumes: [
          { name: 'none' },
          { name: 'hp', hostPath: { path: '/x' } },
          { name: 's', secret: { secretName: 's' } },
          { name: 'cm', configMap: { name: 'c', defaultMode: 256 } },
          { name: 'd', downwardAPI: { items: [{ path: 'p', fieldRef: { fieldPath: 'metadata.name' } }] } },
          { name: 'p', projected: { sources: [{ serviceAccountToken: { path: 't' } }, { downwardAPI: { items: [{ path: 'q', fieldRef: { fieldPath: 'x' } }] } }] } },
          { name: 'pvc', persistentVolumeClaim: { claimName: 'c' } },
        ],
      },
    });
    assert.deepEqual(out.spec.volumes, [
      { name: 'none', emptyDir: {} },
      { name: 'hp', hostPath: { path: '/x', type: '' } },
      { name: 's', secret: { secretName: 's', defaultMode: 420 } },
      { name: 'cm', configMap: { name: 'c', defaultMode: 256 } },
      { name: 'd', downwardAPI: { items: [{ path: 'p', fieldRef: { fieldPath: 'metadata.name', apiVersion: 'v1' } }], defaultMode: 420 } },
      {
        name: 'p',
        projected: {
          sources: [{ serviceAccountToken: { path: 't', expirationSeconds: 3600 } }, { downwardAPI: { items: [{ path: 'q', fieldRef: { fieldPath: 'x', apiVersion: 'v1' } }] } }],
          defaultMode: 420,
        },
      },
      { name: 'pvc', persistentVolumeClaim: { claimName: 'c' } },
    ]);
  });

  test('host-network host ports only with the gate', () => {
    const t: PodTemplateSpec = { spec: { hostNetwork: true, containers: [{ name: 'c', ports: [{ containerPort: 8080 }] }] } };
    assert.equal((defaultPodTemplate(t).spec.containers[0]?.['ports'] as { hostPort?: number }[] | undefined)?.[0]?.hostPort, undefined);
    const gated = defaultPodTemplate(t, { defaultHostNetworkHostPorts: true });
    assert.equal((gated.spec.containers[0]?.['ports'] as { hostPort?: number }[] | undefined)?.[0]?.hostPort, 8080);
  });
});

describe('defaultVolumeClaimTemplate', () => {
  test('phase Pending and rounded quantities', () => {
    assert.deepEqual(defaultVolumeClaimTemplate({ metadata: { name: 'd' }, spec: { resources: { requests: { storage: '1024Mi' } } } }), {
      metadata: { name: 'd' },
      spec: { resources: { requests: { storage: '1Gi' } } },
      status: { phase: 'Pending' },
    });
  });
});

describe('setCloneSetDefaults (v1alpha1)', () => {
  const cs: CloneSet = { metadata: { name: 'sample' }, spec: { selector: { matchLabels: { app: 'sample' } }, template: sampleTemplate } };

  test('fills replicas, history limit, strategy and template defaults', () => {
    const out = setCloneSetDefaults(cs);
    assert.equal(out.spec.replicas, 1);
    assert.equal(out.spec.revisionHistoryLimit, 10);
    assert.deepEqual(out.spec.updateStrategy, { type: 'ReCreate', partition: 0, maxUnavailable: '20%', maxSurge: 0 });
    assert.equal(out.spec.template.spec.containers[0]?.imagePullPolicy, 'Always');
    assert.equal(cs.spec.template.spec.containers[0]?.imagePullPolicy, undefined);
  });

  test('in-place types get an empty inPlaceUpdateStrategy; explicit values stay', () => {
    const out = setCloneSetDefaults({
      ...cs,
      spec: { ...cs.spec, replicas: 0, updateStrategy: { type: 'InPlaceIfPossible', partition: '50%', maxSurge: 1 } },
    });
    assert.equal(out.spec.replicas, 0);
    assert.deepEqual(out.spec.updateStrategy, {
      type: 'InPlaceIfPossible',
      inPlaceUpdateStrategy: {},
      partition: '50%',
      maxUnavailable: '20%',
      maxSurge: 1,
    });
  });

  test('without template defaults (gate TemplateNoDefaults) the template is untouched', () => {
    assert.equal(setCloneSetDefaults(cs, { injectTemplateDefaults: false }).spec.template, cs.spec.template);
  });
});
