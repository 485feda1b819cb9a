// Can Kruise's Go types hold this CloneSet? Kruise decodes the admission request into its structs first and
// answers 400 when that fails (a string where an int32 belongs, a fractional replica count, …), before any rule
// runs. We report the same failures as field errors with the path of the offending value, so that garbage never
// reaches the rules (which then may trust the JSON types) and every rejection names a field. The pod template
// and the volume claim templates are decoded with the core/v1 tables of src/api/go-json.ts. Pure.
import { goTypedMarshal, GoJsonError } from '../api/go-json.ts';
import { child, index, invalid, key, type FieldError } from './field-errors.ts';
import type { CloneSetVersion } from './mutating.ts';

type GoType =
  | 'int32'
  | 'int64'
  | 'string'
  | 'bool'
  | 'intOrString'
  | 'any'
  | { readonly list: GoType }
  | { readonly map: GoType }
  | { readonly struct: Readonly<Record<string, GoType>> }
  | { readonly core: 'PodTemplateSpec' | 'PersistentVolumeClaim' };

const selector: GoType = {
  struct: {
    matchLabels: { map: 'string' },
    matchExpressions: { list: { struct: { key: 'string', operator: 'string', values: { list: 'string' } } } },
  },
};
const hook: GoType = { struct: { labelsHandler: { map: 'string' }, finalizersHandler: { list: 'string' }, markPodNotReady: 'bool' } };
const priority: GoType = {
  struct: {
    weightPriority: { list: { struct: { weight: 'int32', matchSelector: selector } } },
    orderPriority: { list: { struct: { orderedKey: 'string' } } },
  },
};
const scatter: GoType = { list: { struct: { key: 'string', value: 'string' } } };
/** apis/apps/pub InPlaceUpdateStrategy, shared by both versions in Kruise HEAD. */
const inPlace: GoType = {
  struct: {
    gracePeriodSeconds: 'int32',
    imagePreDownloadParallelism: 'intOrString',
    imagePreDownloadTimeoutSeconds: 'int32',
    imagePreDownloadMinUpdatedReadyPods: 'int32',
  },
};
const rollingFields = {
  partition: 'intOrString',
  maxUnavailable: 'intOrString',
  maxSurge: 'intOrString',
  paused: 'bool',
  priorityStrategy: priority,
  scatterStrategy: scatter,
} as const satisfies Record<string, GoType>;

function specType(version: CloneSetVersion): GoType {
  const common = {
    replicas: 'int32',
    selector,
    template: { core: 'PodTemplateSpec' },
    volumeClaimTemplates: { list: { core: 'PersistentVolumeClaim' } },
    revisionHistoryLimit: 'int32',
    minReadySeconds: 'int32',
    lifecycle: { struct: { preDelete: hook, inPlaceUpdate: hook, preNormal: hook } },
    progressDeadlineSeconds: 'int32',
  } as const satisfies Record<string, GoType>;
  if (version === 'v1alpha1') {
    return {
      struct: {
        ...common,
        scaleStrategy: {
          struct: { podsToDelete: { list: 'string' }, maxUnavailable: 'intOrString', disablePVCReuse: 'bool', excludePreparingDelete: 'bool' },
        },
        updateStrategy: { struct: { type: 'string', ...rollingFields, inPlaceUpdateStrategy: inPlace } },
      },
    };
  }
  return {
    struct: {
      ...common,
      scaleStrategy: {
        struct: { podsToDelete: { list: 'string' }, maxUnavailable: 'intOrString', enablePVCReuse: 'bool', excludePreparingDelete: 'bool' },
      },
      updateStrategy: {
        struct: {
          type: 'string',
          rollingUpdate: { struct: { ...rollingFields, podUpdatePolicy: 'string', inPlaceUpdateStrategy: inPlace } },
        },
      },
    },
  };
}

const describe = (v: unknown): string => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v);
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function intFits(v: number, bits: 32 | 64): boolean {
  if (!Number.isInteger(v)) return false;
  const limit = bits === 32 ? 2 ** 31 : 2 ** 63;
  return v >= -limit && v < limit;
}

/** The value at a go-json error path such as `spec.containers[0].ports[1].containerPort` (map keys contain no dots). */
function valueAt(root: unknown, path: string): unknown {
  let cur: unknown = root;
  for (const token of path.match(/[^.[\]]+|\[\d+\]/g) ?? []) {
    if (token.startsWith('[')) cur = Array.isArray(cur) ? cur[Number(token.slice(1, -1))] : undefined;
    else cur = isObj(cur) ? cur[token] : undefined;
  }
  return cur;
}

/** core/v1 decode through the go-json tables; its error path ("spec.containers[0].name") is relative to `path`. */
function decodeCore(v: unknown, struct: 'PodTemplateSpec' | 'PersistentVolumeClaim', path: string, errs: FieldError[]): void {
  try {
    goTypedMarshal(v, struct);
  } catch (e) {
    if (!(e instanceof GoJsonError)) throw e;
    const m = /^json: (.*) at (.*)$/.exec(e.message);
    const rel = m === null || m[2] === '<root>' ? '' : (m[2] ?? '');
    errs.push(invalid(rel === '' ? path : `${path}.${rel}`, valueAt(v, rel), `${m?.[1] ?? e.message}; fix the value's JSON type`));
  }
}

function check(v: unknown, t: GoType, path: string, errs: FieldError[]): void {
  if (v === undefined || v === null) return; // nil pointer / zero value
  const bad = (goType: string): void => {
    errs.push(invalid(path, v, `cannot unmarshal ${describe(v)} into Go value of type ${goType}`));
  };
  if (typeof t === 'string') {
    switch (t) {
      case 'any':
        return;
      case 'int32':
      case 'int64':
        if (typeof v !== 'number') {
          bad(t);
          return;
        }
        if (!intFits(v, t === 'int32' ? 32 : 64)) errs.push(invalid(path, v, `must be a whole number that fits in an ${t}`));
        return;
      case 'string':
        if (typeof v !== 'string') bad('string');
        return;
      case 'bool':
        if (typeof v !== 'boolean') bad('bool');
        return;
      case 'intOrString':
        if (typeof v === 'string') return;
        if (typeof v !== 'number') {
          bad('intstr.IntOrString');
          return;
        }
        if (!intFits(v, 32)) errs.push(invalid(path, v, 'must be a whole number that fits in an int32, or a percentage string such as "20%"'));
        return;
    }
  }
  if ('core' in t) {
    decodeCore(v, t.core, path, errs);
    return;
  }
  if ('list' in t) {
    if (!Array.isArray(v)) {
      bad('slice');
      return;
    }
    v.forEach((e: unknown, i) => {
      check(e, t.list, index(path, i), errs);
    });
    return;
  }
  if (!isObj(v)) {
    bad('map' in t ? 'map' : 'struct');
    return;
  }
  if ('map' in t) {
    for (const [k, e] of Object.entries(v)) check(e, t.map, key(path, k), errs);
    return;
  }
  for (const [k, ft] of Object.entries(t.struct)) check(v[k], ft, child(path, k), errs);
}

/**
 * The decode failures of a CloneSet object of the given version (empty when Go can hold it). Only the
 * fields the rules read are checked: metadata is the API server's, status is ignored by admission.
 */
export function decodeErrors(obj: Readonly<Record<string, unknown>>, version: CloneSetVersion): FieldError[] {
  const errs: FieldError[] = [];
  const metadata = obj['metadata'];
  if (metadata !== undefined && metadata !== null && !isObj(metadata)) {
    errs.push(invalid('metadata', metadata, 'cannot unmarshal into Go struct ObjectMeta'));
  } else if (isObj(metadata)) {
    check(metadata, { struct: { name: 'string', namespace: 'string', uid: 'string', labels: { map: 'string' }, annotations: { map: 'string' } } }, 'metadata', errs);
  }
  check(obj['spec'], specType(version), 'spec', errs);
  return errs;
}
