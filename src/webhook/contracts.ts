// The seams between the webhook server and the pure admission functions it serves: defaulting and validation
// (src/admission/, Kruise's pkg/webhook/cloneset/{mutating,validating}) and conversion (src/api/conversion.ts).
// The server takes them as injected functions so that its envelope handling is tested with small handlers and
// the composition root (src/webhook/run.ts) decides which implementation is wired in.
import type { FeatureGates } from '../api/well-known.ts';
import type { Pod } from '../kube/types.ts';

export type CloneSetVersion = 'v1alpha1' | 'v1beta1';
export const CLONESET_VERSIONS: readonly CloneSetVersion[] = ['v1alpha1', 'v1beta1'];

/** One entry of Kubernetes' field.ErrorList (k8s.io/apimachinery/pkg/util/validation/field). */
export interface FieldError {
  type: 'Required' | 'Invalid' | 'Forbidden' | 'Duplicate' | 'NotSupported' | 'TooLong' | 'TooMany';
  field: string;
  value?: unknown;
  detail: string;
}

export interface AdmissionInput {
  version: CloneSetVersion;
  operation: 'CREATE' | 'UPDATE' | 'DELETE';
  object?: Record<string, unknown>;
  oldObject?: Record<string, unknown>;
}

export interface ValidationContext {
  /** The pods named in podsToDelete of the new object, prefetched by the server; missing = does not exist. */
  pods: ReadonlyMap<string, Pod>;
  gates: FeatureGates;
}

export interface AdmissionHandlers {
  defaultCloneSet(obj: Record<string, unknown>, version: CloneSetVersion, opts: { injectTemplateDefaults: boolean }): Record<string, unknown>;
  validateCloneSet(req: AdmissionInput, ctx: ValidationContext): FieldError[];
  /** `CloneSet.apps.kruise.io "x" is invalid: [spec.a: Invalid value: 1: detail, …]` */
  formatInvalid(kind: string, name: string, errs: readonly FieldError[]): string;
  /** Throws on an unknown version. */
  convertCloneSet(obj: Record<string, unknown>, desiredAPIVersion: string): Record<string, unknown>;
}
