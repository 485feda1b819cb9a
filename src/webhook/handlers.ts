// What the webhook serves: Kruise's CloneSet defaulting and validation (src/admission/) and the v1alpha1⇄v1beta1
// conversion (src/api/conversion.ts), with the controller's feature gates.
import { defaultCloneSet, shouldInjectTemplateDefaults } from '../admission/mutating.ts';
import { formatInvalid } from '../admission/field-errors.ts';
import { deletionProtectionDenial, validateCloneSet } from '../admission/validate.ts';
import { convertCloneSet } from '../api/conversion.ts';
import type { FeatureGates } from '../api/well-known.ts';
import type { AdmissionHandlers } from './contracts.ts';

export function cloneSetAdmissionHandlers(gates: FeatureGates): AdmissionHandlers {
  return {
    defaultCloneSet: (obj, version, opts) => defaultCloneSet(obj, version, { ...opts, defaultHostNetworkHostPorts: gates.DefaultHostNetworkHostPortsInPodTemplates }),
    shouldInjectTemplateDefaults,
    validateCloneSet,
    deletionDenial: deletionProtectionDenial,
    formatInvalid,
    convertCloneSet,
  };
}
