// Kruise's FieldsValidation of the priority and scatter strategies (apis/apps/pub/update_priority.go and
// apis/apps/v1beta1/scatter_strategy.go in openkruise/kruise): the first failure only, in Kruise's words;
// the caller reports it as a Required-value error on the strategy's field, as Kruise does. Pure.
import { isEmptySelector, validateLabelSelector } from '../kube/selectors.ts';
import type { LabelSelector } from '../kube/types.ts';

const isObj = (v: unknown): v is Readonly<Record<string, unknown>> => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : []);

/** A selector as Go decodes it: absent strings are "", absent lists empty. */
function goSelector(v: unknown): LabelSelector {
  const sel = isObj(v) ? v : {};
  const exprs = list(sel['matchExpressions']).map((e) => {
    const expr = isObj(e) ? e : {};
    return {
      key: typeof expr['key'] === 'string' ? expr['key'] : '',
      operator: (typeof expr['operator'] === 'string' ? expr['operator'] : '') as 'In',
      values: list(expr['values']).filter((x): x is string => typeof x === 'string'),
    };
  });
  return { ...(isObj(sel['matchLabels']) ? { matchLabels: sel['matchLabels'] as Readonly<Record<string, string>> } : {}), matchExpressions: exprs };
}

/** UpdatePriorityStrategy.FieldsValidation; undefined when valid. */
export function priorityStrategyError(strategy: unknown): string | undefined {
  if (!isObj(strategy)) return undefined;
  const weights = list(strategy['weightPriority']);
  const orders = list(strategy['orderPriority']);
  if (weights.length > 0 && orders.length > 0) return 'only one of weightPriority and orderPriority can be used';
  for (const w of weights) {
    const term = isObj(w) ? w : {};
    const weight = typeof term['weight'] === 'number' ? term['weight'] : 0;
    // Kruise's message says 1-100 but its check accepts 0.
    if (weight < 0 || weight > 100) return 'weight must be valid number in the range 1-100';
    const selector = goSelector(term['matchSelector']);
    if (isEmptySelector(selector)) return 'selector can not be empty';
    const problems = validateLabelSelector(selector);
    if (problems.length > 0) return `invalid selector ${problems[0] ?? ''}`;
  }
  for (const o of orders) {
    const term = isObj(o) ? o : {};
    if (typeof term['orderedKey'] !== 'string' || term['orderedKey'] === '') return 'order key can not be empty';
  }
  return undefined;
}

/** UpdateScatterStrategy.FieldsValidation; undefined when valid. */
export function scatterStrategyError(strategy: unknown): string | undefined {
  const seen = new Set<string>();
  for (const t of list(strategy)) {
    const term = isObj(t) ? t : {};
    const k = typeof term['key'] === 'string' ? term['key'] : '';
    const v = typeof term['value'] === 'string' ? term['value'] : '';
    if (k === '') return 'key should not be empty';
    const id = `${k}:${v}`;
    if (seen.has(id)) return `duplicated key=${k} value=${v}`;
    seen.add(id);
  }
  return undefined;
}
