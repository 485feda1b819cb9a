// Which defaulting, validation and conversion the webhook serves (the composition of the pure admission functions).
// Interim, until src/admission/ (Kruise's full validation) and src/api/conversion.ts (v1beta1) are merged: Kruise's
// defaults from src/api/defaults.ts, the selector rules the controller already enforces (plan/selector-check.ts),
// and v1alpha1 as the only version.
import type { CloneSet } from '../api/cloneset.ts';
import { setCloneSetDefaults } from '../api/defaults.ts';
import { selectorProblem } from '../cloneset/plan/selector-check.ts';
import { causeMessage } from './admission-review.ts';
import type { AdmissionHandlers, FieldError } from './contracts.ts';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Kubernetes' aggregate rendering (apierrors.NewInvalid + field.ErrorList.ToAggregate): brackets only for several. */
export function formatInvalid(kind: string, name: string, errs: readonly FieldError[]): string {
  const parts = errs.map((e) => `${e.field}: ${causeMessage(e)}`);
  return `${kind} ${JSON.stringify(name)} is invalid: ${parts.length === 1 ? (parts[0] ?? '') : `[${parts.join(', ')}]`}`;
}

export const cloneSetHandlers: AdmissionHandlers = {
  defaultCloneSet(obj, _version, opts) {
    const spec = obj.spec;
    // a malformed object is left alone: the schema and validation reject it with a field path
    if (!isObject(spec) || !isObject(spec.template)) return obj;
    return setCloneSetDefaults(structuredClone(obj) as unknown as CloneSet, { injectTemplateDefaults: opts.injectTemplateDefaults }) as unknown as Record<string, unknown>;
  },
  validateCloneSet(req) {
    if (req.operation === 'DELETE' || req.object === undefined) return [];
    const spec = req.object.spec;
    if (!isObject(spec) || !isObject(spec.template)) return [{ type: 'Required', field: 'spec.template', detail: 'a CloneSet needs a pod template' }];
    const problem = selectorProblem(req.object as unknown as CloneSet);
    if (problem === undefined) return [];
    const field = problem.startsWith('spec.selector') ? 'spec.selector' : 'spec.template.metadata.labels';
    const detail = problem.replace(/^[^:]+: Invalid value: /, '');
    return [{ type: 'Invalid', field, value: field === 'spec.selector' ? spec.selector : (isObject(spec.template.metadata) ? spec.template.metadata.labels : undefined), detail }];
  },
  formatInvalid,
  convertCloneSet(obj, desiredAPIVersion) {
    if (desiredAPIVersion !== 'apps.kruise.io/v1alpha1') throw new Error(`unknown apiVersion ${desiredAPIVersion}: this build serves apps.kruise.io/v1alpha1 only`);
    return { ...obj, apiVersion: desiredAPIVersion };
  },
};
