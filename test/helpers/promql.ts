// PromQL read just enough to list the series an expression reads (test/integration/prometheus.test.ts): the
// vector selectors, each a metric name with its matchers.

/** Aggregations may put `by (…)` before their argument: never a metric name. */
const AGGREGATIONS = new Set(['sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile', 'limitk', 'limit_ratio']);
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset']);
const LABEL_LISTS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);

/** The vector selectors of a PromQL expression (metric name and matchers), without their range. */
export function vectorSelectors(expr: string): string[] {
  const out: string[] = [];
  let i = 0;
  const skipSpace = (): void => {
    while (i < expr.length && /\s/.test(expr[i] ?? '')) i++;
  };
  const skipBalanced = (open: string, close: string): string => {
    const start = i;
    let depth = 0;
    while (i < expr.length) {
      const c = expr[i] ?? '';
      if (c === '"') {
        i++;
        while (i < expr.length && expr[i] !== '"') i += expr[i] === '\\' ? 2 : 1;
      } else if (c === open) depth++;
      else if (c === close && --depth === 0) {
        i++;
        return expr.slice(start, i);
      }
      i++;
    }
    return expr.slice(start);
  };
  while (i < expr.length) {
    const c = expr[i] ?? '';
    if (c === '"') {
      skipBalanced('"', '"');
      i++;
      continue;
    }
    if (c === '[') {
      skipBalanced('[', ']');
      continue;
    }
    if (!/[a-zA-Z_:]/.test(c)) {
      i++;
      continue;
    }
    const start = i;
    while (i < expr.length && /[a-zA-Z0-9_:]/.test(expr[i] ?? '')) i++;
    const word = expr.slice(start, i);
    skipSpace();
    if (KEYWORDS.has(word) || AGGREGATIONS.has(word)) {
      if (LABEL_LISTS.has(word) && expr[i] === '(') skipBalanced('(', ')');
      continue;
    }
    if (expr[i] === '(') continue; // a function or an aggregation
    out.push(expr[i] === '{' ? word + skipBalanced('{', '}') : word);
  }
  return out;
}
