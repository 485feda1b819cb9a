// The seams between the webhook server and the pure admission functions it serves: defaulting and validation
// (src/admission/, Kruise's pkg/webhook/cloneset/{mutating,validating}) and conversion (src/api/conversion.ts).
// The server takes them as injected functions so that its envelope handling is tested with small handlers and
// the composition root (handlers.ts) decides what is wired in.
import type { FeatureGates } from '../api/well-known.ts';
import type { CloneSetVersion } from '../admission/mutating.ts';
import type { FieldError } from '../admission/field-errors.ts';
import type { AdmissionInput, ValidationContext } from '../admission/validate.ts';

export type { AdmissionInput, CloneSetVersion, FieldError, ValidationContext };
export const CLONESET_VERSIONS: readonly CloneSetVersion[] = ['v1alpha1', 'v1beta1'];

export interface AdmissionHandlers {
  defaultCloneSet(obj: Record<string, unknown>, version: CloneSetVersion, opts: { injectTemplateDefaults: boolean }): Record<string, unknown>;
  /** Kruise: on CREATE, and on an UPDATE that changes the template, unless TemplateNoDefaults. Absent: that rule over JSON. */
  shouldInjectTemplateDefaults?(
    req: { operation: 'CREATE' | 'UPDATE' | 'DELETE'; object?: Record<string, unknown>; oldObject?: Record<string, unknown> },
    gates: FeatureGates,
  ): boolean;
  validateCloneSet(req: AdmissionInput, ctx: ValidationContext): FieldError[];
  /** Deletion protection: the 403 message for a DELETE, or undefined to allow it. Absent: deletions are allowed. */
  deletionDenial?(oldObject: Record<string, unknown> | undefined, gates: FeatureGates): string | undefined;
  /** `CloneSet.apps.kruise.io "x" is invalid: [spec.a: Invalid value: 1: detail, …]` */
  formatInvalid(kind: string, name: string, errs: readonly FieldError[]): string;
  /** Throws on an unknown version. */
  convertCloneSet(obj: Record<string, unknown>, desiredAPIVersion: string): Record<string, unknown>;
}
