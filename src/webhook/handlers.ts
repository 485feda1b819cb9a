// Which defaulting, validation and conversion the webhook serves (the composition of the pure admission functions):
// Kruise's defaults and validation for both versions (src/admission/) and the v1alpha1 ⇄ v1beta1 conversion
// (src/api/conversion.ts).
import { convertCloneSet } from '../api/conversion.ts';
import { defaultCloneSet } from '../admission/defaults.ts';
import { formatInvalid } from '../admission/field-errors.ts';
import { validateCloneSet } from '../admission/validate.ts';
import type { AdmissionHandlers } from './contracts.ts';

export { formatInvalid };

export const cloneSetHandlers: AdmissionHandlers = {
  defaultCloneSet: (obj, version, opts) => defaultCloneSet(obj, version, opts),
  validateCloneSet: (req, ctx) => validateCloneSet(req, ctx),
  formatInvalid,
  convertCloneSet,
};
