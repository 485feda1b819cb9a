import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FEATURE_GATE_DEFAULTS } from '../api/well-known.ts';
import type { Pod } from '../kube/types.ts';
import { BadRequestError, mutate, parseAdmissionReview, podsToPrefetch, validate, type AdmissionRequest } from './admission-review.ts';
import type { AdmissionHandlers, AdmissionInput, FieldError } from './contracts.ts';
import { formatInvalid } from '../admission/field-errors.ts';
import type { JsonPatchOperation } from './json-patch.ts';
import { applyJsonPatch } from './testing/json-patch.ts';

const gates = FEATURE_GATE_DEFAULTS;
const cs = (spec: Record<string, unknown>): Record<string, unknown> => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  metadata: { name: 'web', namespace: 'ns' },
  spec,
});
const request = (over: Partial<AdmissionRequest>): AdmissionRequest => ({
  uid: 'u1',
  kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'CloneSet' },
  operation: 'CREATE',
  name: 'web',
  namespace: 'ns',
  ...over,
});
const envelope = (req: unknown): unknown => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: req });

/** A small test defaulter: replicas 1, and a template marker only when asked to inject template defaults. */
function recordingDefaulter(): { calls: boolean[]; defaultCloneSet: AdmissionHandlers['defaultCloneSet'] } {
  const calls: boolean[] = [];
  return {
    calls,
    defaultCloneSet: (obj, _v, opts) => {
      calls.push(opts.injectTemplateDefaults);
      const spec = { ...(obj.spec as Record<string, unknown>) };
      spec.replicas ??= 1;
      if (opts.injectTemplateDefaults) spec.template = { ...(spec.template as Record<string, unknown>), defaulted: true };
      return { ...obj, spec };
    },
  };
}

function decodePatch(patch: string | undefined): JsonPatchOperation[] {
  assert.ok(patch !== undefined);
  return JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as JsonPatchOperation[];
}

describe('parseAdmissionReview', () => {
  test('reads uid, kind, operation, name, namespace and both objects', () => {
    const r = parseAdmissionReview(
      envelope({
        uid: 'u',
        kind: { group: 'apps.kruise.io', version: 'v1beta1', kind: 'CloneSet' },
        operation: 'UPDATE',
        name: 'n',
        namespace: 'ns',
        object: { a: 1 },
        oldObject: { a: 0 },
      }),
    );
    assert.deepEqual(r, {
      uid: 'u',
      kind: { group: 'apps.kruise.io', version: 'v1beta1', kind: 'CloneSet' },
      operation: 'UPDATE',
      name: 'n',
      namespace: 'ns',
      object: { a: 1 },
      oldObject: { a: 0 },
    });
  });

  test('a null oldObject (CREATE) is absent', () => {
    const r = parseAdmissionReview(envelope({ uid: 'u', kind: { group: 'g', version: 'v', kind: 'K' }, operation: 'CREATE', object: {}, oldObject: null }));
    assert.equal(r.oldObject, undefined);
  });

  test('malformed envelopes are bad requests that name the field', () => {
    const bad = (body: unknown, re: RegExp): void =>
      assert.throws(
        () => parseAdmissionReview(body),
        (e: unknown) => e instanceof BadRequestError && re.test(e.message),
      );
    bad('x', /not a JSON object/);
    bad({ apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview' }, /admissionReviewVersions: \[v1\]/);
    bad(envelope(undefined), /^request: Required value/);
    bad(envelope({ kind: { version: 'v', kind: 'K' }, operation: 'CREATE' }), /request.uid: Required value/);
    bad(envelope({ uid: 'u', kind: { version: 'v', kind: 'K' }, operation: 'PATCH' }), /request.operation: Unsupported value: "PATCH"/);
    bad(envelope({ uid: 'u', kind: { version: 'v', kind: 'K' }, operation: 'CREATE', object: [1] }), /request.object: must be a JSON object/);
  });
});

describe('mutate', () => {
  test('a create gets the defaults as a base64 JSON Patch that turns the object into the defaulted one', () => {
    const d = recordingDefaulter();
    const obj = cs({ template: { spec: {} } });
    const res = mutate(request({ object: obj }), 'v1alpha1', d, gates);
    assert.equal(res.allowed, true);
    assert.equal(res.patchType, 'JSONPatch');
    assert.deepEqual(applyJsonPatch(obj, decodePatch(res.patch)), cs({ template: { spec: {}, defaulted: true }, replicas: 1 }));
    assert.deepEqual(d.calls, [true]);
  });

  test('nothing to default: allowed without a patch', () => {
    const res = mutate(
      request({ operation: 'UPDATE', object: cs({ replicas: 2, template: {} }), oldObject: cs({ replicas: 2, template: {} }) }),
      'v1alpha1',
      recordingDefaulter(),
      gates,
    );
    assert.deepEqual(res, { uid: 'u1', allowed: true });
  });

  test('template defaults on create and on an update that changes the template only (Kruise), never with TemplateNoDefaults', () => {
    const d = recordingDefaulter();
    mutate(request({ operation: 'UPDATE', object: cs({ template: { a: 1 } }), oldObject: cs({ template: { a: 1 } }) }), 'v1alpha1', d, gates);
    mutate(request({ operation: 'UPDATE', object: cs({ template: { a: 2 } }), oldObject: cs({ template: { a: 1 } }) }), 'v1alpha1', d, gates);
    mutate(request({ object: cs({ template: {} }) }), 'v1alpha1', d, { ...gates, TemplateNoDefaults: true });
    assert.deepEqual(d.calls, [false, true, false]);
  });

  test('a request of another kind or version than the endpoint is a bad request', () => {
    assert.throws(() => mutate(request({ object: cs({}), kind: { group: 'apps', version: 'v1', kind: 'Deployment' } }), 'v1alpha1', recordingDefaulter(), gates), BadRequestError);
    assert.throws(
      () => mutate(request({ object: cs({}), kind: { group: 'apps.kruise.io', version: 'v1beta1', kind: 'CloneSet' } }), 'v1alpha1', recordingDefaulter(), gates),
      /v1beta1 sent to the v1alpha1 endpoint/,
    );
  });
});

describe('validate', () => {
  const pods = new Map<string, Pod>();
  const rejecting = (errs: FieldError[]): Pick<AdmissionHandlers, 'validateCloneSet' | 'formatInvalid'> & { inputs: AdmissionInput[] } => {
    const inputs: AdmissionInput[] = [];
    return {
      inputs,
      validateCloneSet: (req) => {
        inputs.push(req);
        return errs;
      },
      formatInvalid,
    };
  };

  test('no errors: allowed', () => {
    const h = rejecting([]);
    assert.deepEqual(validate(request({ object: cs({}) }), 'v1alpha1', h, { pods, gates }), { uid: 'u1', allowed: true });
    assert.deepEqual(h.inputs, [{ version: 'v1alpha1', operation: 'CREATE', object: cs({}) }]);
  });

  test('errors: 422 Invalid with the aggregate message and one cause per field path', () => {
    const res = validate(
      request({ object: cs({}) }),
      'v1alpha1',
      rejecting([
        { type: 'Invalid', field: 'spec.replicas', value: -1, detail: 'must be greater than or equal to 0' },
        { type: 'Required', field: 'spec.selector', detail: '' },
      ]),
      { pods, gates },
    );
    assert.equal(res.allowed, false);
    assert.deepEqual(res.status, {
      status: 'Failure',
      code: 422,
      reason: 'Invalid',
      message: 'CloneSet.apps.kruise.io "web" is invalid: [spec.replicas: Invalid value: -1: must be greater than or equal to 0, spec.selector: Required value]',
      details: {
        name: 'web',
        group: 'apps.kruise.io',
        kind: 'CloneSet',
        causes: [
          { reason: 'FieldValueInvalid', message: 'Invalid value: -1: must be greater than or equal to 0', field: 'spec.replicas' },
          { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.selector' },
        ],
      },
    });
  });

  test('a DELETE refused by deletion protection is 403 Forbidden with its message; without the old object it is allowed', () => {
    const h = { ...rejecting([]), deletionDenial: () => 'forbidden by ResourcesProtectionDeletion' };
    assert.deepEqual(validate(request({ operation: 'DELETE', oldObject: cs({}) }), 'v1alpha1', h, { pods, gates }).status, {
      status: 'Failure',
      code: 403,
      reason: 'Forbidden',
      message: 'forbidden by ResourcesProtectionDeletion',
    });
    assert.equal(validate(request({ operation: 'DELETE' }), 'v1alpha1', h, { pods, gates }).allowed, true);
    assert.equal(validate(request({ operation: 'DELETE', oldObject: cs({}) }), 'v1alpha1', rejecting([]), { pods, gates }).allowed, true);
  });

  test('an UPDATE without its old object is a bad request', () => {
    assert.throws(() => validate(request({ operation: 'UPDATE', object: cs({}) }), 'v1alpha1', rejecting([]), { pods, gates }), /request.oldObject: Required value/);
  });
});

describe('podsToPrefetch', () => {
  const withPods = (names: unknown): Record<string, unknown> => cs({ scaleStrategy: { podsToDelete: names } });
  test('only the names an update adds, each once', () => {
    assert.deepEqual(podsToPrefetch(request({ operation: 'UPDATE', object: withPods(['a', 'b', 'b', 'c']), oldObject: withPods(['a']) })), ['b', 'c']);
  });
  test('all names on create; none on delete or without the field; non-strings ignored', () => {
    assert.deepEqual(podsToPrefetch(request({ object: withPods(['x', 3, '']) })), ['x']);
    assert.deepEqual(podsToPrefetch(request({ operation: 'DELETE', oldObject: withPods(['x']) })), []);
    assert.deepEqual(podsToPrefetch(request({ object: cs({}) })), []);
  });
});
