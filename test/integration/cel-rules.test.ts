// The CEL rules of the CRD (src/admission/cel-rules.ts) on a real API server, with no webhook involved: the
// generated CRD is installed a second time under another group (`clonesets.celtest.kruise.io`, no conversion
// webhook, and no admission webhook registered for that group), so every rejection below comes from the CRD's
// own schema and CEL rules — what still holds while our webhook is down or not installed. The test also proves
// that the API server accepts the rules (they compile within the CEL cost budget) and that the CRD installed
// for apps.kruise.io carries the same rules.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse, stringify } from 'yaml';
import { withCelRules } from '../../src/admission/cel-rules.ts';
import { IMMUTABLE_SPEC_MESSAGE } from '../../src/admission/validate.ts';
import { renderCrdYaml } from '../../src/api/crd-schema.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { NAMESPACES } from '../../src/kube/resources.ts';
import { eventually, kubectl, kubectlOk, newNamespace, testClient } from '../helpers/kube.ts';

type Obj = Record<string, unknown>;

const TWIN_GROUP = 'celtest.kruise.io';
const TWIN_CRD = `clonesets.${TWIN_GROUP}`;

interface CrdShape {
  metadata: { name: string };
  spec: { group: string; conversion?: unknown; versions: { name: string; served: boolean; schema?: unknown }[] };
}

/** The generated CRD (what hack/gen-crd.ts writes) moved to the twin group, without the conversion webhook. */
function twinCrd(): CrdShape {
  const crd = parse(withCelRules(renderCrdYaml())) as CrdShape;
  crd.metadata.name = TWIN_CRD;
  crd.spec.group = TWIN_GROUP;
  crd.spec.conversion = { strategy: 'None' };
  return crd;
}

/** Every CEL rule of a CRD (per version, in schema order). */
function celRules(crd: CrdShape): string[] {
  const out: string[] = [];
  const walk = (v: unknown, where: string): void => {
    if (Array.isArray(v)) {
      for (const e of v) walk(e, where);
    } else if (typeof v === 'object' && v !== null) {
      for (const [k, e] of Object.entries(v)) {
        if (k === 'x-kubernetes-validations' && Array.isArray(e)) for (const r of e) out.push(`${where}: ${String((r as { rule?: unknown }).rule)}`);
        else walk(e, where);
      }
    }
  };
  for (const v of crd.spec.versions) walk(v.schema, v.name);
  return out.sort();
}

function baseCloneSet(version: string, ns: string, name: string): Obj {
  const updateStrategy =
    version === 'v1alpha1'
      ? { type: 'ReCreate', partition: 0, maxUnavailable: '20%', maxSurge: 0 }
      : { type: 'RollingUpdate', rollingUpdate: { podUpdatePolicy: 'ReCreate', partition: 0, maxUnavailable: '20%', maxSurge: 0 } };
  return {
    apiVersion: `${TWIN_GROUP}/${version}`,
    kind: 'CloneSet',
    metadata: { name, namespace: ns },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'nginx:1.25' }] } },
      updateStrategy,
    },
  };
}

interface Case {
  readonly title: string;
  readonly versions: readonly string[];
  /** Changes the base object into the bad one. */
  readonly mutate: (cs: Obj, spec: Obj, rolling: Obj) => void;
  /** Substrings the rejection must contain (field path and message). */
  readonly expect: readonly string[];
}

const both = ['v1alpha1', 'v1beta1'];
const tspec = (spec: Obj): Obj => (spec['template'] as { spec: Obj }).spec;

const cases: readonly Case[] = [
  {
    title: 'restartPolicy OnFailure in the pod template',
    versions: both,
    mutate: (_c, s) => {
      tspec(s)['restartPolicy'] = 'OnFailure';
    },
    expect: ['spec.template.spec.restartPolicy', 'supported values: "Always"'],
  },
  {
    title: 'activeDeadlineSeconds in the pod template',
    versions: both,
    mutate: (_c, s) => {
      tspec(s)['activeDeadlineSeconds'] = 30;
    },
    expect: ['spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in cloneset is not Supported'],
  },
  {
    title: 'a pod template without containers',
    versions: both,
    mutate: (_c, s) => {
      tspec(s)['containers'] = [];
    },
    expect: ['spec.template.spec.containers', 'needs at least one container'],
  },
  {
    title: 'a negative replica count',
    versions: both,
    mutate: (_c, s) => {
      s['replicas'] = -1;
    },
    expect: ['spec.replicas', 'greater than or equal to 0'],
  },
  {
    title: 'an empty selector',
    versions: both,
    mutate: (_c, s) => {
      s['selector'] = { matchLabels: {} };
    },
    expect: ['spec.selector', 'empty selector is invalid for cloneset'],
  },
  {
    title: 'a bare numeric string as partition',
    versions: both,
    mutate: (_c, _s, r) => {
      r['partition'] = '5';
    },
    expect: ['partition', 'a numeric string like "5" is not a percentage'],
  },
  {
    title: 'a negative partition',
    versions: both,
    mutate: (_c, _s, r) => {
      r['partition'] = -1;
    },
    expect: ['partition', 'partition must be greater than or equal to 0'],
  },
  {
    title: 'a negative percentage as partition',
    versions: both,
    mutate: (_c, _s, r) => {
      r['partition'] = '-10%';
    },
    expect: ['partition', 'partition must be greater than or equal to 0'],
  },
  {
    title: 'a bare numeric string as maxUnavailable',
    versions: both,
    mutate: (_c, _s, r) => {
      r['maxUnavailable'] = '5';
    },
    expect: ['maxUnavailable', 'maxUnavailable must be an integer or a percentage'],
  },
  {
    title: 'a malformed percentage as maxSurge',
    versions: both,
    mutate: (_c, _s, r) => {
      r['maxSurge'] = 'abc%';
    },
    expect: ['maxSurge', 'maxSurge must be an integer or a percentage'],
  },
  {
    title: 'maxSurge with InPlaceOnly (v1alpha1 type)',
    versions: ['v1alpha1'],
    mutate: (_c, _s, r) => {
      r['type'] = 'InPlaceOnly';
      r['maxSurge'] = 1;
    },
    expect: ['maxSurge', 'can not use maxSurge with strategy type InPlaceOnly'],
  },
  {
    title: 'maxSurge with podUpdatePolicy InPlaceOnly (v1beta1)',
    versions: ['v1beta1'],
    mutate: (_c, _s, r) => {
      r['podUpdatePolicy'] = 'InPlaceOnly';
      r['maxSurge'] = 1;
    },
    expect: ['maxSurge', 'can not use maxSurge with podUpdatePolicy InPlaceOnly'],
  },
  {
    title: 'both weight and order priority',
    versions: both,
    mutate: (_c, _s, r) => {
      r['priorityStrategy'] = { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { a: 'b' } } }], orderPriority: [{ orderedKey: 'k' }] };
    },
    expect: ['priorityStrategy', 'only one of weightPriority and orderPriority can be used'],
  },
  {
    title: 'an empty order priority key',
    versions: both,
    mutate: (_c, _s, r) => {
      r['priorityStrategy'] = { orderPriority: [{ orderedKey: '' }] };
    },
    expect: ['orderedKey', 'order key can not be empty'],
  },
  {
    title: 'an empty scatter key',
    versions: both,
    mutate: (_c, _s, r) => {
      r['scatterStrategy'] = [{ key: '', value: 'x' }];
    },
    expect: ['scatterStrategy', 'key should not be empty'],
  },
  {
    title: 'a progress deadline not above minReadySeconds (v1alpha1)',
    versions: ['v1alpha1'],
    mutate: (_c, s) => {
      s['minReadySeconds'] = 10;
      s['progressDeadlineSeconds'] = 10;
    },
    expect: ['spec.progressDeadlineSeconds', 'must be greater than minReadySeconds'],
  },
  {
    title: 'an OnDelete strategy with a rollingUpdate block but no partition (v1beta1)',
    versions: ['v1beta1'],
    mutate: (_c, s) => {
      s['updateStrategy'] = { type: 'OnDelete', rollingUpdate: { maxUnavailable: 1 } };
    },
    expect: ['spec.updateStrategy.rollingUpdate', 'nil value for IntOrString'],
  },
  {
    title: 'a percentage as imagePreDownloadParallelism (v1beta1)',
    versions: ['v1beta1'],
    mutate: (_c, _s, r) => {
      r['inPlaceUpdateStrategy'] = { imagePreDownloadParallelism: '50%' };
    },
    expect: ['imagePreDownloadParallelism', 'a percentage is not supported'],
  },
];

function dryRun(obj: Obj): { code: number; stderr: string } {
  const r = kubectl(['apply', '--dry-run=server', '-f', '-'], stringify(obj));
  return { code: r.code, stderr: r.stderr };
}

describe('CEL rules of the CRD on a real API server (no webhook)', () => {
  let client: KubeClient;
  let ns: string;
  const generated = twinCrd();
  const versions = generated.spec.versions.filter((v) => v.served).map((v) => v.name);

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'cel');
    kubectlOk(['apply', '-f', '-'], stringify(generated));
    // Polled, not `kubectl wait --for condition=established`: that fails at once while a new CRD has no conditions.
    await eventually(`${TWIN_CRD} Established`, async () =>
      kubectl(['get', 'crd', TWIN_CRD, '-o', 'jsonpath={.status.conditions[?(@.type=="Established")].status}']).stdout === 'True' ? true : undefined,
    );
    // Established is not yet "served for writes in every version": wait until a dry run goes through.
    await eventually(`${TWIN_CRD} accepts a valid object`, async () => (dryRun(baseCloneSet(versions[0] ?? 'v1alpha1', ns, 'probe')).code === 0 ? true : undefined));
  });
  after(async () => {
    kubectl(['delete', 'crd', TWIN_CRD, '--wait=false']);
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  it('the CRD installed for apps.kruise.io carries the same CEL rules as the generated one', () => {
    const installed = JSON.parse(kubectlOk(['get', 'crd', 'clonesets.apps.kruise.io', '-o', 'json'])) as CrdShape;
    assert.ok(celRules(installed).length > 10, 'the installed CRD has no CEL rules: apply config/crd/apps.kruise.io_clonesets.yaml');
    assert.deepEqual(celRules(installed), celRules(generated));
  });

  for (const version of versions) {
    describe(`${version}`, () => {
      it('accepts a valid CloneSet (kubectl apply --dry-run=server)', () => {
        const r = dryRun(baseCloneSet(version, ns, 'valid'));
        assert.equal(r.code, 0, r.stderr);
      });

      for (const c of cases.filter((x) => x.versions.includes(version))) {
        it(`rejects ${c.title}`, () => {
          const cs = baseCloneSet(version, ns, 'bad');
          const spec = cs['spec'] as Obj;
          const us = spec['updateStrategy'] as Obj;
          const rolling = version === 'v1alpha1' ? us : (us['rollingUpdate'] as Obj);
          c.mutate(cs, spec, rolling);
          const r = dryRun(cs);
          assert.notEqual(r.code, 0, 'the API server accepted the object');
          for (const part of c.expect) assert.ok(r.stderr.includes(part), `expected ${JSON.stringify(part)} in: ${r.stderr}`);
        });
      }

      it('rejects a change of the selector of an existing CloneSet', () => {
        const name = `immutable-${version}`;
        kubectlOk(['apply', '-f', '-'], stringify(baseCloneSet(version, ns, name)));
        const changed = baseCloneSet(version, ns, name);
        const spec = changed['spec'] as Obj;
        spec['selector'] = { matchLabels: { app: name, tier: 'web' } };
        (spec['template'] as { metadata: { labels: Obj } }).metadata.labels['tier'] = 'web';
        const r = dryRun(changed);
        assert.notEqual(r.code, 0, 'the API server accepted a new selector');
        assert.ok(r.stderr.includes('spec.selector') && r.stderr.includes(IMMUTABLE_SPEC_MESSAGE), r.stderr);
      });
    });
  }
});
