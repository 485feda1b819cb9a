// Field errors in the shape of Kubernetes' k8s.io/apimachinery/pkg/util/validation/field (ErrorList), and the
// message the API server shows for a rejected object (apierrors.NewInvalid): kubectl users see exactly the
// text they would see with Kruise's webhook, e.g.
//   CloneSet.apps.kruise.io "x" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0
// Pure: no IO.

export interface FieldError {
  type: 'Required' | 'Invalid' | 'Forbidden' | 'Duplicate' | 'NotSupported' | 'TooLong' | 'TooMany';
  /** Dotted field path as Kubernetes prints it: `spec.template.spec.containers[0].name`, map keys as `[key]`. */
  field: string;
  value?: unknown;
  detail: string;
}

/** field.ErrorType.String(). */
const TYPE_TEXT: Readonly<Record<FieldError['type'], string>> = {
  Required: 'Required value',
  Invalid: 'Invalid value',
  Forbidden: 'Forbidden',
  Duplicate: 'Duplicate value',
  NotSupported: 'Unsupported value',
  TooLong: 'Too long',
  TooMany: 'Too many',
};

/** How field.Error prints a bad value: simple types as Go's %v / %q, anything else as JSON. */
function renderValue(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return String(value);
  }
}

/** One error as field.Error.Error() prints it: `<field>: <type>[: <value>][: <detail>]`. */
export function formatFieldError(e: FieldError): string {
  // Required, Forbidden and TooLong never print the value (field.Error.ErrorBody).
  const omitValue = e.type === 'Required' || e.type === 'Forbidden' || e.type === 'TooLong';
  let body = TYPE_TEXT[e.type];
  if (!omitValue) body += `: ${renderValue(e.value)}`;
  if (e.detail.length > 0) body += `: ${e.detail}`;
  return `${e.field}: ${body}`;
}

/**
 * The message of a 422 Invalid status (apierrors.NewInvalid): `<Kind.group> "<name>" is invalid: <aggregate>`,
 * where the aggregate of one error is that error and of several is `[e1, e2]` (duplicates removed, as
 * utilerrors.NewAggregate does via ErrorList.ToAggregate).
 */
export function formatInvalid(kind: string, name: string, errs: readonly FieldError[]): string {
  const seen = new Set<string>();
  const msgs: string[] = [];
  for (const e of errs) {
    const m = formatFieldError(e);
    if (seen.has(m)) continue;
    seen.add(m);
    msgs.push(m);
  }
  const head = `${kind} ${JSON.stringify(name)} is invalid`;
  if (msgs.length === 0) return head;
  return `${head}: ${msgs.length === 1 ? (msgs[0] ?? '') : `[${msgs.join(', ')}]`}`;
}

// ---------------------------------------------------------------------------------------------------
// Constructors (field.Required, field.Invalid, …) and path helpers.

export const required = (field: string, detail: string): FieldError => ({ type: 'Required', field, detail });
export const invalid = (field: string, value: unknown, detail: string): FieldError => ({ type: 'Invalid', field, value, detail });
export const forbidden = (field: string, detail: string): FieldError => ({ type: 'Forbidden', field, detail });
export const duplicate = (field: string, value: unknown): FieldError => ({ type: 'Duplicate', field, value, detail: '' });
export const tooLong = (field: string, value: unknown, max: number): FieldError => ({ type: 'TooLong', field, value, detail: `may not be more than ${max} bytes` });

/** field.NotSupported: the detail lists the supported values, quoted. */
export function notSupported(field: string, value: unknown, supported: readonly string[]): FieldError {
  return { type: 'NotSupported', field, value, detail: `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}` };
}

/** `base.key` (field.Path.Child). */
export const child = (base: string, ...keys: readonly string[]): string => [base, ...keys].filter((k) => k !== '').join('.');
/** `base[i]` (field.Path.Index). */
export const index = (base: string, i: number): string => `${base}[${i}]`;
/** `base[key]` (field.Path.Key). */
export const key = (base: string, k: string): string => `${base}[${k}]`;
