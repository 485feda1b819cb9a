// Admission of our opt-in extension annotations (docs/features.md#beyond-kruise; src/api/extensions.ts): a bad
// value is refused with the annotation's path, e.g.
//   metadata.annotations[cloneset-controller.io/inactive-pods-limit]: Invalid value: "-1": must be a non-negative integer…
// An unknown key under our prefix is refused too (a typo would otherwise silently switch nothing on).
import {
  ANNOTATION_INACTIVE_PODS_LIMIT,
  ANNOTATION_PROGRESS_DEADLINE_ACTION,
  ANNOTATION_PROGRESS_DEADLINE_RECORD,
  ANNOTATION_PVC_RESIZE_POLICY,
  ANNOTATION_PVC_RETENTION_WHEN_DELETED,
  ANNOTATION_PVC_RETENTION_WHEN_SCALED,
  EXTENSION_PREFIX,
  parseInactivePodsLimit,
  parseProgressDeadlineAction,
  parsePvcResizePolicy,
  parsePvcRetention,
  type Parsed,
} from '../api/extensions.ts';
import { invalid, key, type FieldError } from './field-errors.ts';

const PARSERS: Readonly<Record<string, (raw: string) => Parsed<unknown>>> = {
  [ANNOTATION_INACTIVE_PODS_LIMIT]: parseInactivePodsLimit,
  [ANNOTATION_PROGRESS_DEADLINE_ACTION]: parseProgressDeadlineAction,
  [ANNOTATION_PVC_RETENTION_WHEN_SCALED]: parsePvcRetention,
  [ANNOTATION_PVC_RETENTION_WHEN_DELETED]: parsePvcRetention,
  [ANNOTATION_PVC_RESIZE_POLICY]: parsePvcResizePolicy,
  // Written by the controller itself; any text is accepted (an unreadable record counts as none).
  [ANNOTATION_PROGRESS_DEADLINE_RECORD]: (raw) => ({ ok: true, value: raw }),
};

const KNOWN = Object.keys(PARSERS).filter((k) => k !== ANNOTATION_PROGRESS_DEADLINE_RECORD);

export function validateExtensionAnnotations(annotations: Readonly<Record<string, unknown>> | undefined, errs: FieldError[]): void {
  for (const [k, v] of Object.entries(annotations ?? {})) {
    if (!k.startsWith(EXTENSION_PREFIX)) continue;
    const path = key('metadata.annotations', k);
    const parse = PARSERS[k];
    if (parse === undefined) {
      errs.push(invalid(path, k, `unknown cloneset-controller.io annotation; known: ${KNOWN.join(', ')} (docs/features.md)`));
      continue;
    }
    const raw = typeof v === 'string' ? v : String(v);
    const p = parse(raw);
    if (!p.ok) errs.push(invalid(path, raw, p.message));
  }
}
