// Bad input no retry can fix: a CloneSet whose selector is empty or does not select its own template.
import type { CloneSet } from '../../api/cloneset.ts';
import { isEmptySelector, matchesLabelSelector } from '../../kube/selectors.ts';

/** The problem in Kruise's validation wording, or undefined when the selector is usable. */
export function selectorProblem(cloneSet: CloneSet): string | undefined {
  const selector = cloneSet.spec.selector;
  if (isEmptySelector(selector)) return 'spec.selector: Invalid value: empty selector is invalid for cloneset';
  const labels = cloneSet.spec.template.metadata?.labels ?? {};
  if (!matchesLabelSelector(selector, labels)) {
    return 'spec.template.metadata.labels: Invalid value: `selector` does not match template `labels`';
  }
  return undefined;
}
