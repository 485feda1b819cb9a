import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FEATURE_GATE_DEFAULTS } from '../api/well-known.ts';
import type { Pod } from '../kube/types.ts';
import { defaultCloneSet, type CloneSetVersion } from './mutating.ts';
import { formatFieldError, formatInvalid } from './field-errors.ts';
import { deletionProtectionDenial, IMMUTABLE_SPEC_MESSAGE, validateCloneSet, type ValidationContext } from './validate.ts';

type Obj = Record<string, unknown>;
type Loose = Obj;

const UID = '1b6c0e3e-0000-4000-8000-000000000001';
const ctx: ValidationContext = { pods: new Map(), gates: FEATURE_GATE_DEFAULTS };

function base(version: CloneSetVersion): Loose {
  return {
    apiVersion: `apps.kruise.io/${version}`,
    kind: 'CloneSet',
    metadata: { name: 'sample', namespace: 'default', uid: UID },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'sample' } },
      template: { metadata: { labels: { app: 'sample' } }, spec: { containers: [{ name: 'main', image: 'nginx:1.25' }] } },
    },
  };
}

/** The error lines Kruise would print for `mutate(base)` after defaulting (CREATE unless an old object is given). */
function errorsOf(version: CloneSetVersion, mutate: (cs: Loose) => void, opts: { old?: Loose; ctx?: ValidationContext } = {}): string[] {
  const cs = base(version);
  mutate(cs);
  const object = defaultCloneSet(cs, version, { injectTemplateDefaults: true });
  const oldObject = opts.old === undefined ? undefined : defaultCloneSet(opts.old, version, { injectTemplateDefaults: true });
  const errs = validateCloneSet({ version, operation: oldObject === undefined ? 'CREATE' : 'UPDATE', object, ...(oldObject !== undefined ? { oldObject } : {}) }, opts.ctx ?? ctx);
  for (const e of errs) assert.ok(e.field.length > 0, `error without a field path: ${formatFieldError(e)}`);
  return errs.map(formatFieldError);
}

/** The nested object at a key path (tests build the objects themselves, so the path exists). */
const at = (o: Loose, ...keys: readonly string[]): Loose => keys.reduce((cur: Loose, k) => cur[k] as Loose, o);

const rolling = (version: CloneSetVersion, cs: Loose): Loose => {
  const spec = at(cs, 'spec');
  if (version === 'v1alpha1') {
    spec['updateStrategy'] ??= {};
    return at(spec, 'updateStrategy');
  }
  spec['updateStrategy'] ??= { rollingUpdate: {} };
  at(spec, 'updateStrategy')['rollingUpdate'] ??= {};
  return at(spec, 'updateStrategy', 'rollingUpdate');
};
const rollingPath = (version: CloneSetVersion): string => (version === 'v1alpha1' ? 'spec.updateStrategy' : 'spec.updateStrategy.rollingUpdate');
const containers = (cs: Loose): Loose[] => at(cs, 'spec', 'template', 'spec')['containers'] as Loose[];
const first = (cs: Loose): Loose => containers(cs)[0] ?? {};

for (const version of ['v1alpha1', 'v1beta1'] as const) {
  describe(`validateCloneSet ${version}: rules both versions share`, () => {
    test('the defaulted manual sample is valid', () => {
      assert.deepEqual(
        errorsOf(version, () => undefined),
        [],
      );
    });

    test('replicas must be non-negative', () => {
      assert.deepEqual(
        errorsOf(version, (cs) => {
          at(cs, 'spec')['replicas'] = -1;
        }),
        ['spec.replicas: Invalid value: -1: must be greater than or equal to 0'],
      );
    });

    test('an empty selector is invalid for a CloneSet', () => {
      assert.deepEqual(
        errorsOf(version, (cs) => {
          at(cs, 'spec')['selector'] = {};
        }),
        ['spec.selector: Invalid value: {}: empty selector is invalid for cloneset'],
      );
    });

    test('a missing selector is required and matches no template labels', () => {
      const errs = errorsOf(version, (cs) => {
        delete at(cs, 'spec')['selector'];
      });
      assert.equal(errs[0]?.startsWith('spec.selector: Required value'), true);
      assert.equal(errs[1], 'spec.template.metadata.labels: Invalid value: {"app":"sample"}: `selector` does not match template `labels`');
    });

    test('the selector must match the template labels', () => {
      assert.deepEqual(
        errorsOf(version, (cs) => {
          at(cs, 'spec')['selector'] = { matchLabels: { app: 'other' } };
        }),
        ['spec.template.metadata.labels: Invalid value: {"app":"sample"}: `selector` does not match template `labels`'],
      );
    });

    test('a selector with a bad operator is invalid and the template is not checked further', () => {
      const errs = errorsOf(version, (cs) => {
        at(cs, 'spec')['selector'] = { matchExpressions: [{ key: 'app', operator: 'Like', values: ['x'] }] };
        containers(cs).length = 0;
      });
      assert.deepEqual(errs, [
        'spec.selector.matchExpressions[0].operator: Invalid value: "Like": not a valid selector operator',
        'spec.selector: Invalid value: {"matchExpressions":[{"key":"app","operator":"Like","values":["x"]}]}',
      ]);
    });

    test('restartPolicy must be Always and activeDeadlineSeconds is forbidden', () => {
      const errs = errorsOf(version, (cs) => {
        at(cs, 'spec', 'template', 'spec')['restartPolicy'] = 'OnFailure';
        at(cs, 'spec', 'template', 'spec')['activeDeadlineSeconds'] = 30;
      });
      assert.deepEqual(errs, [
        'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"',
        'spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in cloneset is not Supported',
      ]);
    });

    test('containers must exist, with unique DNS-1123 names and an image', () => {
      assert.deepEqual(
        errorsOf(version, (cs) => {
          containers(cs).length = 0;
        }),
        ['spec.template.spec.containers: Required value: a CloneSet pod needs at least one container'],
      );
      const errs = errorsOf(version, (cs) => {
        containers(cs).push({ name: 'main' }, { name: 'Bad_Name', image: 'x' });
      });
      assert.deepEqual(errs.slice(0, 3), [
        'spec.template.spec.containers[1].name: Duplicate value: "main"',
        'spec.template.spec.containers[1].image: Required value',
        `spec.template.spec.containers[2].name: Invalid value: "Bad_Name": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`,
      ]);
    });

    test('template label syntax is checked', () => {
      const errs = errorsOf(version, (cs) => {
        at(cs, 'spec', 'template', 'metadata', 'labels')['bad key!'] = 'v';
      });
      assert.equal(errs.length, 1);
      assert.match(errs[0] ?? '', /^spec\.template\.metadata\.labels: Invalid value: "bad key!": name part must consist of/);
    });

    test('ports, env names, resources, mounts and probes follow Kubernetes pod validation', () => {
      const errs = errorsOf(version, (cs) => {
        Object.assign(first(cs), {
          ports: [{ containerPort: 70000 }, { containerPort: 80, name: 'http', protocol: 'ICMP' }, { containerPort: 81, name: 'http' }],
          env: [{ name: '1X', value: 'a' }, { name: '' }],
          resources: { limits: { cpu: '1' }, requests: { cpu: '2' } },
          volumeMounts: [
            { name: 'missing', mountPath: '/data' },
            { name: 'data', mountPath: '/data' },
          ],
          readinessProbe: { periodSeconds: -1 },
          livenessProbe: { tcpSocket: { port: 8080 }, successThreshold: 2 },
        });
        at(cs, 'spec')['volumeClaimTemplates'] = [{ metadata: { name: 'data' } }];
      });
      const c = 'spec.template.spec.containers[0]';
      assert.deepEqual(errs, [
        `${c}.ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive`,
        `${c}.ports[1].protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP"`,
        `${c}.ports[2].name: Duplicate value: "http"`,
        `${c}.env[0].name: Invalid value: "1X": a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')`,
        `${c}.env[1].name: Required value`,
        `${c}.resources.requests[cpu]: Invalid value: "2": must be less than or equal to cpu limit of 1`,
        `${c}.volumeMounts[0].name: Invalid value: "missing": not found: add a volume of that name to spec.template.spec.volumes or a volumeClaimTemplate`,
        `${c}.volumeMounts[1].mountPath: Invalid value: "/data": must be unique`,
        `${c}.livenessProbe.successThreshold: Invalid value: 2: must be 1`,
        `${c}.readinessProbe: Required value: must specify a handler type`,
        `${c}.readinessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0`,
      ]);
    });

    test('volumes need a DNS-1123 name, unique also against the volume claim templates', () => {
      const errs = errorsOf(version, (cs) => {
        at(cs, 'spec', 'template', 'spec')['volumes'] = [
          { name: 'data', emptyDir: {} },
          { name: 'cfg', configMap: { name: 'c' }, secret: { secretName: 's' } },
        ];
        at(cs, 'spec')['volumeClaimTemplates'] = [{ metadata: { name: 'data' } }];
      });
      assert.deepEqual(errs, ['spec.template.spec.volumes[1]: Forbidden: may not specify more than 1 volume type', 'spec.template.spec.volumes[2].name: Duplicate value: "data"']);
    });

    test('pod-level fields: nodeSelector, service account, tolerations, topology spread, volume sources, env refs, init probes', () => {
      const errs = errorsOf(version, (cs) => {
        Object.assign(at(cs, 'spec', 'template', 'spec'), {
          nodeSelector: { 'bad key!': 'x' },
          serviceAccountName: 'Bad_SA',
          tolerations: [
            { operator: 'Equal', value: 'x' },
            { key: 'k', operator: 'Exists', value: 'v' },
            { key: 'k', effect: 'NoSchedule', tolerationSeconds: 5 },
          ],
          topologySpreadConstraints: [{ maxSkew: 0, whenUnsatisfiable: 'Maybe' }],
          volumes: [{ name: 'cfg', configMap: {} }],
          initContainers: [{ name: 'init', image: 'busybox', readinessProbe: { exec: { command: ['true'] } } }],
        });
        first(cs)['env'] = [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'c' } } }];
      });
      const sp = 'spec.template.spec';
      assert.deepEqual(
        errs.map((e) => e.replace(/: [a-z] .*$|: (name part|a lowercase).*$/, '')),
        [
          `${sp}.volumes[0].configMap.name: Required value`,
          `${sp}.nodeSelector: Invalid value: "bad key!"`,
          `${sp}.serviceAccountName: Invalid value: "Bad_SA"`,
          `${sp}.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when \`key\` is empty, which means "match all values and all keys"`,
          `${sp}.tolerations[1].operator: Invalid value: "v": value must be empty when \`operator\` is 'Exists'`,
          `${sp}.tolerations[2].effect: Invalid value: "NoSchedule": effect must be 'NoExecute' when \`tolerationSeconds\` is set`,
          `${sp}.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero`,
          `${sp}.topologySpreadConstraints[0].topologyKey: Required value: can not be empty`,
          `${sp}.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": supported values: "DoNotSchedule", "ScheduleAnyway"`,
          `${sp}.initContainers[0].readinessProbe: Forbidden: may not be set for init containers without restartPolicy=Always`,
          `${sp}.containers[0].env[0].valueFrom.configMapKeyRef.key: Required value`,
        ],
      );
    });

    test('podsToDelete must not contain duplicates', () => {
      assert.deepEqual(
        errorsOf(version, (cs) => {
          at(cs, 'spec')['scaleStrategy'] = { podsToDelete: ['a', 'b', 'a'] };
        }),
        ['spec.scaleStrategy.podsToDelete: Invalid value: ["a","b","a"]: duplicated items [a]'],
      );
    });

    test('partition, maxUnavailable and maxSurge need an integer or a percent string; "5" is not a percentage', () => {
      const p = rollingPath(version);
      const errs = errorsOf(version, (cs) => Object.assign(rolling(version, cs), { partition: '5', maxUnavailable: 'x%', maxSurge: '12.5%' }));
      assert.deepEqual(errs, [
        `${p}.partition: Invalid value: "5": failed GetScaledValueFromIntOrPercent for partition: invalid value for IntOrString: invalid type: string is not a percentage`,
        `${p}.maxUnavailable: Invalid value: "x%": failed GetScaledValueFromIntOrPercent for maxUnavailable: invalid value for IntOrString: invalid value "x%": strconv.ParseFloat: parsing "x": invalid syntax`,
      ]);
    });

    test('partition must not be negative', () => {
      assert.deepEqual(
        errorsOf(version, (cs) => {
          rolling(version, cs)['partition'] = -2;
        }),
        [`${rollingPath(version)}.partition: Invalid value: -2: must be greater than or equal to 0`],
      );
    });

    test('maxUnavailable and maxSurge must not both be below 1 while replicas > 0 (maxSurge counts on both versions)', () => {
      assert.deepEqual(
        errorsOf(version, (cs) => Object.assign(rolling(version, cs), { maxUnavailable: 0, maxSurge: 0 })),
        [`${rollingPath(version)}.maxUnavailable: Invalid value: 0: maxUnavailable and maxSurge should not both be less than 1`],
      );
      // Kruise's v1beta1 validator rejects this (shadowed maxSurge); we accept it like its v1alpha1 path.
      assert.deepEqual(
        errorsOf(version, (cs) => Object.assign(rolling(version, cs), { maxUnavailable: 0, maxSurge: 1 })),
        [],
      );
      assert.deepEqual(
        errorsOf(version, (cs) => {
          at(cs, 'spec')['replicas'] = 0;
          Object.assign(rolling(version, cs), { maxUnavailable: 0, maxSurge: 0 });
        }),
        [],
      );
    });

    test("priority strategy: Kruise's first failure as a Required value", () => {
      const p = `${rollingPath(version)}.priorityStrategy`;
      const check = (strategy: unknown, message: string): void => {
        assert.deepEqual(
          errorsOf(version, (cs) => {
            rolling(version, cs)['priorityStrategy'] = strategy;
          }),
          [`${p}: Required value: ${message}`],
        );
      };
      check(
        { weightPriority: [{ weight: 1, matchSelector: { matchLabels: { a: 'b' } } }], orderPriority: [{ orderedKey: 'k' }] },
        'only one of weightPriority and orderPriority can be used',
      );
      check({ weightPriority: [{ weight: 101, matchSelector: { matchLabels: { a: 'b' } } }] }, 'weight must be valid number in the range 1-100');
      check({ weightPriority: [{ weight: 10, matchSelector: {} }] }, 'selector can not be empty');
      check({ orderPriority: [{ orderedKey: '' }] }, 'order key can not be empty');
      assert.deepEqual(
        errorsOf(version, (cs) => {
          rolling(version, cs)['priorityStrategy'] = { weightPriority: [{ weight: 0, matchSelector: { matchLabels: { a: 'b' } } }] };
        }),
        [],
      );
    });

    test('scatter strategy: empty keys and duplicate pairs', () => {
      const p = `${rollingPath(version)}.scatterStrategy`;
      assert.deepEqual(
        errorsOf(version, (cs) => {
          rolling(version, cs)['scatterStrategy'] = [{ key: '', value: 'x' }];
        }),
        [`${p}: Required value: key should not be empty`],
      );
      assert.deepEqual(
        errorsOf(version, (cs) => {
          rolling(version, cs)['scatterStrategy'] = [
            { key: 'k', value: 'v' },
            { key: 'k', value: 'v' },
          ];
        }),
        [`${p}: Required value: duplicated key=k value=v`],
      );
    });

    test('the selector is immutable on update', () => {
      const old = base(version);
      const errs = errorsOf(
        version,
        (cs) => {
          at(cs, 'spec')['selector'] = { matchLabels: { app: 'sample', tier: 'web' } };
          at(cs, 'spec', 'template', 'metadata', 'labels')['tier'] = 'web';
        },
        { old },
      );
      assert.deepEqual(errs, [`spec: Forbidden: ${IMMUTABLE_SPEC_MESSAGE}`]);
      // nil and empty lists are the same selector (apiequality.Semantic)
      assert.deepEqual(
        errorsOf(
          version,
          (cs) => {
            at(cs, 'spec', 'selector')['matchExpressions'] = [];
          },
          { old },
        ),
        [],
      );
    });

    test('values Go cannot decode are reported at their path and stop validation (Kruise answers 400)', () => {
      assert.deepEqual(
        errorsOf(version, (cs) => {
          at(cs, 'spec')['replicas'] = 'three';
        }),
        ['spec.replicas: Invalid value: "three": cannot unmarshal string into Go value of type int32'],
      );
      assert.deepEqual(
        errorsOf(version, (cs) => {
          first(cs)['ports'] = [{ containerPort: '80' }];
        }),
        ['spec.template.spec.containers[0].ports[0].containerPort: Invalid value: "80": cannot unmarshal string into Go value of type int32; fix the value\'s JSON type'],
      );
    });

    test('the metadata name must be a DNS subdomain', () => {
      const errs = errorsOf(version, (cs) => {
        at(cs, 'metadata')['name'] = 'Sample';
      });
      assert.equal(errs.length, 1);
      assert.match(errs[0] ?? '', /^metadata\.name: Invalid value: "Sample": a lowercase RFC 1123 subdomain/);
    });
  });
}

describe('validateCloneSet v1alpha1 only', () => {
  test("the update strategy type must be one of Kruise's three (message quirk kept)", () => {
    assert.deepEqual(
      errorsOf('v1alpha1', (cs) => {
        at(cs, 'spec')['updateStrategy'] = { type: 'OnDelete' };
      }),
      ["spec.updateStrategy.type: Invalid value: \"OnDelete\": must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'"],
    );
  });

  test('maxSurge cannot be used with InPlaceOnly', () => {
    assert.deepEqual(
      errorsOf('v1alpha1', (cs) => {
        at(cs, 'spec')['updateStrategy'] = { type: 'InPlaceOnly', maxSurge: 1 };
      }),
      ['spec.updateStrategy.maxSurge: Invalid value: "1": can not use maxSurge with strategy type InPlaceOnly'],
    );
  });

  test('progressDeadlineSeconds must be non-negative and above minReadySeconds unless it is MaxInt32', () => {
    assert.deepEqual(
      errorsOf('v1alpha1', (cs) => {
        Object.assign(at(cs, 'spec'), { minReadySeconds: 10, progressDeadlineSeconds: 10 });
      }),
      ['spec.progressDeadlineSeconds: Invalid value: 10: must be greater than minReadySeconds'],
    );
    assert.deepEqual(
      errorsOf('v1alpha1', (cs) => {
        Object.assign(at(cs, 'spec'), { progressDeadlineSeconds: -1 });
      }),
      ['spec.progressDeadlineSeconds: Invalid value: -1: must be greater than or equal to 0'],
    );
    assert.deepEqual(
      errorsOf('v1alpha1', (cs) => {
        Object.assign(at(cs, 'spec'), { minReadySeconds: 10, progressDeadlineSeconds: 2147483647 });
      }),
      [],
    );
  });

  const pod = (name: string, ownerUid: string | undefined, deleting = false): Pod => ({
    metadata: {
      name,
      namespace: 'default',
      ...(ownerUid !== undefined ? { ownerReferences: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'sample', uid: ownerUid, controller: true }] } : {}),
      ...(deleting ? { deletionTimestamp: '2025-01-02T03:04:05Z' } : {}),
    },
    spec: { containers: [] },
  });

  test('newly added podsToDelete must exist, not be terminating and be owned by this CloneSet (sorted order)', () => {
    const pods = new Map([
      ['own', pod('own', UID)],
      ['foreign', pod('foreign', 'other')],
      ['dying', pod('dying', UID, true)],
    ]);
    const old = base('v1alpha1');
    at(old, 'spec')['scaleStrategy'] = { podsToDelete: ['gone-before'] };
    const errs = errorsOf(
      'v1alpha1',
      (cs) => {
        at(cs, 'spec')['scaleStrategy'] = { podsToDelete: ['own', 'missing', 'foreign', 'dying', 'gone-before'] };
      },
      { old, ctx: { pods, gates: FEATURE_GATE_DEFAULTS } },
    );
    assert.deepEqual(errs, [
      'spec.scaleStrategy.podsToDelete: Invalid value: "dying": find pod dying already terminating',
      'spec.scaleStrategy.podsToDelete: Invalid value: "foreign": find pod foreign owner is not this CloneSet',
      'spec.scaleStrategy.podsToDelete: Invalid value: "missing": find pod missing failed: pods "missing" not found',
    ]);
  });

  test('on v1beta1 podsToDelete names are not looked up', () => {
    assert.deepEqual(
      errorsOf('v1beta1', (cs) => {
        at(cs, 'spec')['scaleStrategy'] = { podsToDelete: ['missing'] };
      }),
      [],
    );
  });

  test('InPlaceOnly updates may only replace container images', () => {
    const old = base('v1alpha1');
    at(old, 'spec')['updateStrategy'] = { type: 'InPlaceOnly', maxUnavailable: 1 };
    const set = (cs: Loose): void => {
      at(cs, 'spec')['updateStrategy'] = { type: 'InPlaceOnly', maxUnavailable: 1 };
    };
    assert.deepEqual(
      errorsOf(
        'v1alpha1',
        (cs) => {
          set(cs);
          first(cs)['image'] = 'nginx:1.27';
        },
        { old },
      ),
      [],
    );
    assert.deepEqual(
      errorsOf(
        'v1alpha1',
        (cs) => {
          set(cs);
          first(cs)['env'] = [{ name: 'A', value: '1' }];
        },
        { old },
      ),
      ['spec: Forbidden: only allowed to update images in spec for InPlaceOnly, but found add /containers/0/env'],
    );
  });
});

describe('validateCloneSet v1alpha1 InPlaceOnly and objects stored without defaults', () => {
  test('an image update of a CloneSet stored before the webhook existed (no template defaults) is allowed', () => {
    const old = base('v1alpha1');
    at(old, 'spec')['updateStrategy'] = { type: 'InPlaceOnly', partition: 0, maxUnavailable: 1, maxSurge: 0 };
    const object = defaultCloneSet(structuredClone(old), 'v1alpha1', { injectTemplateDefaults: true });
    (at(object, 'spec', 'template', 'spec')['containers'] as Loose[]).forEach((c) => {
      c['image'] = 'nginx:1.27';
    });
    assert.deepEqual(validateCloneSet({ version: 'v1alpha1', operation: 'UPDATE', object, oldObject: old }, ctx), []);
  });
});

describe('validateCloneSet v1beta1 only', () => {
  test('type must be RollingUpdate or OnDelete and podUpdatePolicy one of the three', () => {
    assert.deepEqual(
      errorsOf('v1beta1', (cs) => {
        at(cs, 'spec')['updateStrategy'] = { type: 'InPlaceOnly', rollingUpdate: { podUpdatePolicy: 'Sometimes', partition: 0, maxUnavailable: 1 } };
      }),
      [
        "spec.updateStrategy.type: Invalid value: \"InPlaceOnly\": must be 'RollingUpdate' or 'OnDelete'",
        "spec.updateStrategy.rollingUpdate.podUpdatePolicy: Invalid value: \"Sometimes\": must be 'ReCreate', 'InPlaceIfPossible' or 'InPlaceOnly'",
      ],
    );
  });

  test('OnDelete with a rollingUpdate block needs a partition; without the block it is fine', () => {
    assert.deepEqual(
      errorsOf('v1beta1', (cs) => {
        at(cs, 'spec')['updateStrategy'] = { type: 'OnDelete', rollingUpdate: { maxUnavailable: 1 } };
      }),
      ['spec.updateStrategy.rollingUpdate.partition: Invalid value: "<nil>": failed GetScaledValueFromIntOrPercent for partition: nil value for IntOrString'],
    );
    assert.deepEqual(
      errorsOf('v1beta1', (cs) => {
        at(cs, 'spec')['updateStrategy'] = { type: 'OnDelete' };
      }),
      [],
    );
  });

  test('maxSurge cannot be used with podUpdatePolicy InPlaceOnly', () => {
    assert.deepEqual(
      errorsOf('v1beta1', (cs) => Object.assign(rolling('v1beta1', cs), { podUpdatePolicy: 'InPlaceOnly', maxSurge: '50%' })),
      ['spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: "50%": can not use maxSurge with podUpdatePolicy InPlaceOnly'],
    );
  });

  test('image pre-download fields: parallelism a non-negative integer, timeouts non-negative', () => {
    const p = 'spec.updateStrategy.rollingUpdate.inPlaceUpdateStrategy';
    const check = (s: Obj, expected: string[]): void => {
      assert.deepEqual(
        errorsOf('v1beta1', (cs) => {
          rolling('v1beta1', cs)['inPlaceUpdateStrategy'] = s;
        }),
        expected,
      );
    };
    check({ imagePreDownloadParallelism: '50%' }, [`${p}.imagePreDownloadParallelism: Invalid value: "50%": imagePreDownloadParallelism does not support percentage value`]);
    check({ imagePreDownloadParallelism: 'two' }, [
      `${p}.imagePreDownloadParallelism: Invalid value: "two": imagePreDownloadParallelism must be a valid integer: strconv.Atoi: parsing "two": invalid syntax`,
    ]);
    check({ imagePreDownloadParallelism: -1 }, [`${p}.imagePreDownloadParallelism: Invalid value: -1: imagePreDownloadParallelism must be non-negative`]);
    check({ imagePreDownloadParallelism: '3', imagePreDownloadTimeoutSeconds: -5 }, [`${p}.imagePreDownloadTimeoutSeconds: Invalid value: -5: must be greater than or equal to 0`]);
  });

  test('progressDeadlineSeconds is not checked on v1beta1 (as in Kruise)', () => {
    assert.deepEqual(
      errorsOf('v1beta1', (cs) => {
        Object.assign(at(cs, 'spec'), { minReadySeconds: 10, progressDeadlineSeconds: 5 });
      }),
      [],
    );
  });
});

describe('formatInvalid', () => {
  test('one error, several errors (deduplicated) and none, as the API server prints them', () => {
    const e1 = { type: 'Invalid' as const, field: 'spec.replicas', value: -1, detail: 'must be greater than or equal to 0' };
    const e2 = { type: 'Required' as const, field: 'spec.selector', detail: '' };
    assert.equal(
      formatInvalid('CloneSet.apps.kruise.io', 'x', [e1]),
      'CloneSet.apps.kruise.io "x" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    );
    assert.equal(
      formatInvalid('CloneSet.apps.kruise.io', 'x', [e1, e2, e1]),
      'CloneSet.apps.kruise.io "x" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.selector: Required value]',
    );
    assert.equal(formatInvalid('CloneSet.apps.kruise.io', 'x', []), 'CloneSet.apps.kruise.io "x" is invalid');
  });
});

describe('deletionProtectionDenial', () => {
  const gates = { ...FEATURE_GATE_DEFAULTS, ResourcesDeletionProtection: true };
  const withLabel = (value: string, replicas: number): Obj => ({
    metadata: { name: 'x', labels: { 'policy.kruise.io/delete-protection': value } },
    spec: { replicas },
  });

  test('Always blocks, Cascading blocks while replicas > 0, nothing without the gate', () => {
    assert.equal(deletionProtectionDenial(withLabel('Always', 0), gates), 'forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always');
    assert.equal(
      deletionProtectionDenial(withLabel('Cascading', 2), gates),
      'forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and replicas 2>0',
    );
    assert.equal(deletionProtectionDenial(withLabel('Cascading', 0), gates), undefined);
    assert.equal(deletionProtectionDenial(withLabel('Always', 1), FEATURE_GATE_DEFAULTS), undefined);
  });
});
