// metav1.LabelSelector semantics (LabelSelectorAsSelector): matching, the canonical string form used for
// status.labelSelector (docs/features.md#status-counters; Kruise pkg/controller/cloneset/cloneset_status.go) and the basic validation Kubernetes applies to selectors.
import type { LabelSelector, LabelSelectorRequirement } from './types.ts';

type Labels = Readonly<Record<string, string>>;

interface Requirement {
  readonly key: string;
  readonly op: 'Equals' | 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  readonly values: readonly string[];
}

const byteCompare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** True when the selector selects by nothing: no matchLabels and no matchExpressions (nil or empty). */
export function isEmptySelector(selector: LabelSelector | undefined | null): boolean {
  if (selector === undefined || selector === null) return true;
  return Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0;
}

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Problems with a label key (Kubernetes IsQualifiedName); empty when valid. */
export function validateLabelKey(key: string): string[] {
  const parts = key.split('/');
  let name: string;
  const errs: string[] = [];
  if (parts.length === 1) {
    name = parts[0] ?? '';
  } else if (parts.length === 2) {
    const prefix = parts[0] ?? '';
    name = parts[1] ?? '';
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else if (prefix.length > 253) errs.push('prefix part must be no more than 253 characters');
    else if (!DNS1123_SUBDOMAIN.test(prefix)) errs.push('prefix part must be a lowercase RFC 1123 subdomain');
  } else {
    return ["a qualified name must consist of alphanumeric characters, '-', '_' or '.', with an optional DNS subdomain prefix and '/'"];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push('name part must be no more than 63 characters');
  else if (!QUALIFIED_NAME.test(name)) {
    errs.push("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character");
  }
  return errs;
}

/** Problems with a label value; empty when valid. */
export function validateLabelValue(value: string): string[] {
  if (value.length > 63) return ['must be no more than 63 characters'];
  if (!LABEL_VALUE.test(value)) {
    return ["a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"];
  }
  return [];
}

function toRequirements(selector: LabelSelector): { reqs: Requirement[]; errors: string[] } {
  const reqs: Requirement[] = [];
  const errors: string[] = [];
  const check = (key: string, values: readonly string[], where: string): void => {
    for (const e of validateLabelKey(key)) errors.push(`${where}: Invalid value: ${JSON.stringify(key)}: ${e}`);
    for (const v of values) for (const e of validateLabelValue(v)) errors.push(`${where}: Invalid value: ${JSON.stringify(v)}: ${e}`);
  };
  const labels = selector.matchLabels ?? {};
  for (const key of Object.keys(labels).sort(byteCompare)) {
    const value = labels[key] ?? '';
    if (typeof value !== 'string') {
      errors.push(`matchLabels.${key}: Invalid value: must be a string`);
      continue;
    }
    check(key, [value], `matchLabels`);
    reqs.push({ key, op: 'Equals', values: [value] });
  }
  (selector.matchExpressions ?? []).forEach((expr: LabelSelectorRequirement, i) => {
    const where = `matchExpressions[${i}]`;
    const values = expr.values ?? [];
    switch (expr.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) errors.push(`${where}.values: Required value: for 'in', 'notin' operators, values set can't be empty`);
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length !== 0) errors.push(`${where}.values: Invalid value: values set must be empty for exists and does not exist`);
        break;
      default:
        errors.push(`${where}.operator: Invalid value: ${JSON.stringify(expr.operator)}: is not a valid label selector operator`);
        return;
    }
    check(expr.key, values, where);
    reqs.push({ key: expr.key, op: expr.operator, values });
  });
  // Stable sort by key, like Go's sort of ByKey for the usual (short) selectors.
  const sorted = reqs
    .map((r, i) => ({ r, i }))
    .sort((a, b) => byteCompare(a.r.key, b.r.key) || a.i - b.i)
    .map((x) => x.r);
  return { reqs: sorted, errors };
}

/** Validation errors of a selector (keys, values, operators, value-set rules); empty when valid. */
export function validateLabelSelector(selector: LabelSelector | undefined | null): string[] {
  if (selector === undefined || selector === null) return [];
  return toRequirements(selector).errors;
}

function matches(r: Requirement, labels: Labels): boolean {
  const has = Object.hasOwn(labels, r.key);
  const value = labels[r.key];
  switch (r.op) {
    case 'Equals':
    case 'In':
      return has && value !== undefined && r.values.includes(value);
    case 'NotIn':
      return !has || value === undefined || !r.values.includes(value);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
  }
}

/**
 * Does the selector select these labels? A missing (nil) selector selects nothing, an empty one
 * everything; an invalid selector selects nothing (Kubernetes fails to convert it).
 */
export function matchesLabelSelector(selector: LabelSelector | undefined | null, labels: Labels | undefined | null): boolean {
  return labelSelectorMatcher(selector)(labels);
}

/**
 * matchesLabelSelector for one selector and many label sets: the selector is parsed and validated once (a
 * CloneSet's pass matches every one of its pods).
 */
export function labelSelectorMatcher(selector: LabelSelector | undefined | null): (labels: Labels | undefined | null) => boolean {
  if (selector === undefined || selector === null) return () => false;
  const { reqs, errors } = toRequirements(selector);
  if (errors.length > 0) return () => false;
  return (labels) => {
    const l = labels ?? {};
    // A plain loop: `reqs.every((r) => …)` allocated a closure per call, and a pass calls this for every pod.
    for (let i = 0; i < reqs.length; i++) {
      const r = reqs[i];
      if (r !== undefined && !matches(r, l)) return false;
    }
    return true;
  };
}

function requirementString(r: Requirement): string {
  const values = r.values.length === 1 ? (r.values[0] ?? '') : [...r.values].sort(byteCompare).join(',');
  switch (r.op) {
    case 'Equals':
      return `${r.key}=${values}`;
    case 'In':
      return `${r.key} in (${values})`;
    case 'NotIn':
      return `${r.key} notin (${values})`;
    case 'Exists':
      return r.key;
    case 'DoesNotExist':
      return `!${r.key}`;
  }
}

/**
 * The canonical selector string (labels.Selector.String()): requirements sorted by key, joined by ",";
 * `k=v`, `k in (a,b)`, `k notin (a,b)` (values sorted), `k`, `!k`. "" for an empty selector. Entries with
 * an unknown operator are left out.
 */
export function selectorToString(selector: LabelSelector | undefined | null): string {
  if (selector === undefined || selector === null) return '';
  return toRequirements(selector).reqs.map(requirementString).join(',');
}
