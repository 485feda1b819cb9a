// The cheap CloneSet checks as CEL validation rules (`x-kubernetes-validations`) in the CRD schema, so that the
// API server enforces them itself, also while our admission webhook is down or not installed. Every rule is
// also a webhook rule (validate.ts) and never stricter than it; docs/validation-rules.md lists both.
// Rules that need more than a field and its neighbours (selector vs template labels, percent rounding against
// replicas, pods named in podsToDelete, the pod template at large) stay in the webhook, where they cost nothing
// against the API server's CEL budget.
//
// applyCelRules walks every served version's `schema.openAPIV3Schema` and attaches each rule at its path when
// that version has the path (v1alpha1 has `updateStrategy.partition`, v1beta1 `updateStrategy.rollingUpdate.
// partition`, …); a path a version does not have is skipped. Under the schemaless pod template it declares the
// few fields the rules read (CEL cannot see undeclared fields of x-kubernetes-preserve-unknown-fields objects).
// Needs Kubernetes >= 1.28 (fieldPath, messageExpression). Pure: returns a new object.
import { stringify, parse } from 'yaml';
import { IMMUTABLE_SPEC_MESSAGE } from './validate.ts';

type Obj = Record<string, unknown>;

export interface CelRule {
  readonly rule: string;
  readonly message?: string;
  readonly messageExpression?: string;
  readonly fieldPath?: string;
  readonly reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The percent syntax Kruise's GetScaledValueFromIntOrPercent accepts: a decimal number followed by '%'.
 * A numeric string without '%' ("5") is not a percentage.
 */
export const PERCENT_PATTERN = '^[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?%$';
/** Strings in int-or-string fields are bounded so that `matches` stays far inside the CEL cost budget. */
const INT_OR_PERCENT_MAX_LENGTH = 64;

const intOrPercentRule = (field: string): CelRule => ({
  rule: `type(self) == int || self.matches('${PERCENT_PATTERN}')`,
  messageExpression: `'${field} must be an integer or a percentage such as "20%" (a numeric string like "5" is not a percentage), not "' + string(self) + '"'`,
});

const partitionRules: readonly CelRule[] = [
  intOrPercentRule('partition'),
  {
    rule: "type(self) == int ? self >= 0 : !self.startsWith('-')",
    message: 'partition must be greater than or equal to 0',
  },
];

const priorityRules: readonly CelRule[] = [
  {
    rule: '!(has(self.weightPriority) && size(self.weightPriority) > 0 && has(self.orderPriority) && size(self.orderPriority) > 0)',
    message: 'only one of weightPriority and orderPriority can be used',
    reason: 'FieldValueRequired',
  },
];

/** The schema node at a path of property names ('[]' = the items of a list); undefined when absent. */
function nodeAt(root: Obj, path: readonly string[]): Obj | undefined {
  let cur: Obj | undefined = root;
  for (const p of path) {
    if (cur === undefined) return undefined;
    const next: unknown = p === '[]' ? cur['items'] : isObj(cur['properties']) ? cur['properties'][p] : undefined;
    cur = isObj(next) ? next : undefined;
  }
  return cur;
}

function addRules(node: Obj | undefined, rules: readonly CelRule[]): void {
  if (node === undefined || rules.length === 0) return;
  const existing = Array.isArray(node['x-kubernetes-validations']) ? (node['x-kubernetes-validations'] as unknown[]) : [];
  const known = new Set(existing.map((r) => (isObj(r) ? r['rule'] : undefined)));
  node['x-kubernetes-validations'] = [...existing, ...rules.filter((r) => !known.has(r.rule))];
}

function addProperty(node: Obj | undefined, name: string, schema: Obj): Obj | undefined {
  if (node === undefined) return undefined;
  const props = isObj(node['properties']) ? node['properties'] : {};
  node['properties'] = props;
  const current = props[name];
  if (isObj(current)) return current;
  props[name] = schema;
  return schema;
}

const hasProp = (node: Obj | undefined, name: string): boolean => isObj(node?.['properties']) && isObj((node['properties'] as Obj)[name]);

/** The string fields under an int-or-string schema are bounded (see INT_OR_PERCENT_MAX_LENGTH). */
function boundIntOrString(node: Obj | undefined): void {
  if (node !== undefined && node['x-kubernetes-int-or-string'] === true && node['maxLength'] === undefined) {
    node['maxLength'] = INT_OR_PERCENT_MAX_LENGTH;
  }
}

/** Rules of the fields v1alpha1 keeps under updateStrategy and v1beta1 under updateStrategy.rollingUpdate. */
function rollingRules(rolling: Obj | undefined, policyField: 'type' | 'podUpdatePolicy', surgeMessage: string): void {
  if (rolling === undefined) return;
  for (const f of ['partition', 'maxUnavailable', 'maxSurge']) boundIntOrString(nodeAt(rolling, [f]));
  addRules(nodeAt(rolling, ['partition']), partitionRules);
  addRules(nodeAt(rolling, ['maxUnavailable']), [intOrPercentRule('maxUnavailable')]);
  addRules(nodeAt(rolling, ['maxSurge']), [intOrPercentRule('maxSurge')]);
  if (hasProp(rolling, 'maxSurge') && hasProp(rolling, policyField)) {
    // Only integers: a percentage of zero replicas resolves to 0, which the webhook accepts.
    addRules(rolling, [
      {
        rule: `!has(self.${policyField}) || self.${policyField} != 'InPlaceOnly' || !has(self.maxSurge) || type(self.maxSurge) == string || self.maxSurge <= 0`,
        message: surgeMessage,
        fieldPath: '.maxSurge',
      },
    ]);
  }
  addRules(nodeAt(rolling, ['priorityStrategy']), priorityRules);
  addRules(nodeAt(rolling, ['priorityStrategy', 'orderPriority', '[]', 'orderedKey']), [{ rule: 'size(self) > 0', message: 'order key can not be empty' }]);
  addRules(nodeAt(rolling, ['scatterStrategy', '[]', 'key']), [{ rule: 'size(self) > 0', message: 'key should not be empty' }]);
  // Kruise checks the image pre-download fields on the v1beta1 path only (its v1alpha1 validator ignores them).
  if (policyField !== 'podUpdatePolicy') return;
  const inPlace = nodeAt(rolling, ['inPlaceUpdateStrategy']);
  const parallelism = nodeAt(inPlace ?? {}, ['imagePreDownloadParallelism']);
  boundIntOrString(parallelism);
  addRules(parallelism, [
    {
      rule: "type(self) == int ? self >= 0 : self.matches('^[+]?[0-9]+$')",
      message: 'imagePreDownloadParallelism must be a non-negative integer (a percentage is not supported)',
    },
  ]);
  for (const f of ['imagePreDownloadTimeoutSeconds', 'imagePreDownloadMinUpdatedReadyPods']) {
    const n = nodeAt(inPlace ?? {}, [f]);
    if (n !== undefined && n['minimum'] === undefined) addRules(n, [{ rule: 'self >= 0', message: 'must be greater than or equal to 0' }]);
  }
}

/** Adds the rules to one version's openAPIV3Schema (mutates the given copy). */
function applyToSchema(root: Obj): void {
  const spec = nodeAt(root, ['spec']);
  if (spec === undefined) return;

  const replicas = nodeAt(spec, ['replicas']);
  if (replicas !== undefined && replicas['minimum'] === undefined) {
    addRules(replicas, [{ rule: 'self >= 0', message: 'must be greater than or equal to 0' }]);
  }

  addRules(nodeAt(spec, ['selector']), [
    { rule: 'self == oldSelf', message: IMMUTABLE_SPEC_MESSAGE, reason: 'FieldValueForbidden' },
    {
      rule: '(has(self.matchLabels) && size(self.matchLabels) > 0) || (has(self.matchExpressions) && size(self.matchExpressions) > 0)',
      message: 'empty selector is invalid for cloneset',
    },
  ]);

  const updateStrategy = nodeAt(spec, ['updateStrategy']);
  const v1beta1Shape = hasProp(updateStrategy, 'rollingUpdate');
  const type = nodeAt(updateStrategy ?? {}, ['type']);
  if (type !== undefined && type['enum'] === undefined) {
    addRules(type, [
      v1beta1Shape
        ? { rule: "self in ['RollingUpdate', 'OnDelete', '']", message: "must be 'RollingUpdate' or 'OnDelete'" }
        : { rule: "self in ['ReCreate', 'InPlaceIfPossible', 'InPlaceOnly']", message: "must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'" },
    ]);
  }
  if (v1beta1Shape) {
    addRules(updateStrategy, [
      {
        // The mutating webhook defaults partition only for RollingUpdate; with OnDelete a rollingUpdate block needs one.
        rule: "!has(self.type) || self.type != 'OnDelete' || !has(self.rollingUpdate) || has(self.rollingUpdate.partition)",
        message: 'failed GetScaledValueFromIntOrPercent for partition: nil value for IntOrString (set rollingUpdate.partition or remove rollingUpdate)',
        fieldPath: '.rollingUpdate',
        reason: 'FieldValueRequired',
      },
    ]);
    const rolling = nodeAt(updateStrategy ?? {}, ['rollingUpdate']);
    const policy = nodeAt(rolling ?? {}, ['podUpdatePolicy']);
    if (policy !== undefined && policy['enum'] === undefined) {
      addRules(policy, [
        {
          rule: "self in ['ReCreate', 'InPlaceIfPossible', 'InPlaceOnly', '']",
          message: "must be 'ReCreate', 'InPlaceIfPossible' or 'InPlaceOnly'",
        },
      ]);
    }
    rollingRules(rolling, 'podUpdatePolicy', 'can not use maxSurge with podUpdatePolicy InPlaceOnly');
  } else {
    rollingRules(updateStrategy, 'type', 'can not use maxSurge with strategy type InPlaceOnly');
    // v1alpha1 only (Kruise's v1beta1 path does not check it).
    if (hasProp(spec, 'progressDeadlineSeconds')) {
      addRules(spec, [
        {
          rule:
            '!has(self.progressDeadlineSeconds) || self.progressDeadlineSeconds < 0 || self.progressDeadlineSeconds == 2147483647 || ' +
            'self.progressDeadlineSeconds > (has(self.minReadySeconds) ? self.minReadySeconds : 0)',
          message: 'must be greater than minReadySeconds',
          fieldPath: '.progressDeadlineSeconds',
        },
      ]);
    }
  }

  // The pod template: declare the fields the rules read, keep everything else schemaless.
  const template = nodeAt(spec, ['template']);
  const podSpec = addProperty(template, 'spec', { type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  addRules(addProperty(podSpec, 'restartPolicy', { type: 'string' }), [
    {
      rule: "self == 'Always' || self == ''",
      messageExpression: '\'unsupported value "\' + self + \'": supported values: "Always"\'',
    },
  ]);
  addProperty(podSpec, 'activeDeadlineSeconds', { type: 'integer', format: 'int64' });
  addProperty(podSpec, 'containers', { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } });
  addRules(podSpec, [
    {
      rule: '!has(self.activeDeadlineSeconds)',
      message: 'activeDeadlineSeconds in cloneset is not Supported',
      fieldPath: '.activeDeadlineSeconds',
      reason: 'FieldValueForbidden',
    },
    {
      rule: 'has(self.containers) && size(self.containers) > 0',
      message: 'a CloneSet pod needs at least one container',
      fieldPath: '.containers',
      reason: 'FieldValueRequired',
    },
  ]);
}

/** The CRD with the CEL rules added to every served version's schema. Pure. */
export function applyCelRules(crd: Record<string, unknown>): Record<string, unknown> {
  const out = structuredClone(crd);
  const spec = out['spec'];
  const versions = isObj(spec) && Array.isArray(spec['versions']) ? (spec['versions'] as unknown[]) : [];
  for (const v of versions) {
    if (!isObj(v) || v['served'] === false) continue;
    const schema = isObj(v['schema']) ? v['schema']['openAPIV3Schema'] : undefined;
    if (isObj(schema)) applyToSchema(schema);
  }
  return out;
}

/** The rendered CRD YAML (header comment + document) with the CEL rules applied; what hack/gen-crd.ts writes. */
export function withCelRules(crdYaml: string): string {
  const lines = crdYaml.split('\n');
  const body = lines.findIndex((l) => !l.startsWith('#'));
  const header = lines
    .slice(0, body < 0 ? lines.length : body)
    .map((l) => `${l}\n`)
    .join('');
  const crd: unknown = parse(crdYaml);
  if (!isObj(crd)) throw new Error('withCelRules: the rendered CRD is not a YAML mapping');
  return header + stringify(applyCelRules(crd), { sortMapEntries: true, lineWidth: 120 });
}
