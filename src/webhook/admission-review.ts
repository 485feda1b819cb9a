// AdmissionReview v1 envelopes (k8s.io/api/admission/v1): parsing the request, and the mutating and validating
// decisions as responses. Pure: the server does the IO (reading the body, prefetching the podsToDelete pods).
// Kruise's handlers: pkg/webhook/cloneset/mutating/cloneset_create_update_handler.go and
// pkg/webhook/cloneset/validating/cloneset_create_update_handler.go in openkruise/kruise.
import type { FeatureGates } from '../api/well-known.ts';
import type { Pod } from '../kube/types.ts';
import { formatFieldError } from '../admission/field-errors.ts';
import { CLONESET_VERSIONS, type AdmissionHandlers, type CloneSetVersion, type FieldError } from './contracts.ts';
import { jsonEqual } from '../api/json-equal.ts';
import { createJsonPatch } from './json-patch.ts';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

/** A request the server cannot make sense of: answered with HTTP 400 and this message. */
export class BadRequestError extends Error {
  override readonly name = 'BadRequestError';
}

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionRequest {
  readonly uid: string;
  readonly kind: { readonly group: string; readonly version: string; readonly kind: string };
  readonly operation: Operation;
  readonly name?: string;
  readonly namespace?: string;
  readonly object?: Record<string, unknown>;
  readonly oldObject?: Record<string, unknown>;
}

/** meta/v1 Status as carried in `response.status` (the API server turns it into the client's error). */
export interface ResponseStatus {
  status: 'Failure';
  code: number;
  reason: string;
  message: string;
  details?: { name: string; group: string; kind: string; causes: { reason: string; message: string; field: string }[] };
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: ResponseStatus;
  patchType?: 'JSONPatch';
  /** base64 of the JSON Patch */
  patch?: string;
  warnings?: string[];
}

export interface AdmissionReviewReply {
  apiVersion: typeof ADMISSION_API_VERSION;
  kind: 'AdmissionReview';
  response: AdmissionResponse;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

const OPERATIONS: ReadonlySet<string> = new Set<Operation>(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

/** Parses an AdmissionReview v1 body; throws BadRequestError naming what is wrong. */
export function parseAdmissionReview(body: unknown): AdmissionRequest {
  if (!isObject(body)) throw new BadRequestError('the body is not a JSON object (expected an admission.k8s.io/v1 AdmissionReview)');
  if (body.apiVersion !== ADMISSION_API_VERSION || body.kind !== 'AdmissionReview') {
    throw new BadRequestError(
      `expected apiVersion ${ADMISSION_API_VERSION}, kind AdmissionReview; got ${String(body.apiVersion)} ${String(body.kind)} (set admissionReviewVersions: [v1] in the webhook configuration)`,
    );
  }
  const req = body.request;
  if (!isObject(req)) throw new BadRequestError('request: Required value');
  const uid = str(req.uid);
  if (uid === undefined || uid === '') throw new BadRequestError('request.uid: Required value');
  const kind = req.kind;
  if (!isObject(kind) || str(kind.version) === undefined || str(kind.kind) === undefined) {
    throw new BadRequestError('request.kind: Required value (group, version, kind)');
  }
  const operation = str(req.operation);
  if (operation === undefined || !OPERATIONS.has(operation)) throw new BadRequestError(`request.operation: Unsupported value: ${JSON.stringify(req.operation)}`);
  const object = req.object;
  const oldObject = req.oldObject;
  if (object !== undefined && object !== null && !isObject(object)) throw new BadRequestError('request.object: must be a JSON object');
  if (oldObject !== undefined && oldObject !== null && !isObject(oldObject)) throw new BadRequestError('request.oldObject: must be a JSON object');
  const name = str(req.name);
  const namespace = str(req.namespace);
  return {
    uid,
    kind: { group: str(kind.group) ?? '', version: str(kind.version) ?? '', kind: str(kind.kind) ?? '' },
    operation: operation as Operation,
    ...(name !== undefined ? { name } : {}),
    ...(namespace !== undefined ? { namespace } : {}),
    ...(isObject(object) ? { object } : {}),
    ...(isObject(oldObject) ? { oldObject } : {}),
  };
}

export function reviewReply(response: AdmissionResponse): AdmissionReviewReply {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}

function versionOf(req: AdmissionRequest): CloneSetVersion {
  const v = req.kind.version;
  if (req.kind.group !== 'apps.kruise.io' || req.kind.kind !== 'CloneSet' || !CLONESET_VERSIONS.includes(v as CloneSetVersion)) {
    throw new BadRequestError(`request.kind: this endpoint admits apps.kruise.io CloneSets (v1alpha1, v1beta1), got ${req.kind.group}/${v} ${req.kind.kind}`);
  }
  return v as CloneSetVersion;
}

/** Checks the request's kind against the version of the endpoint path; throws BadRequestError. */
export function checkPathVersion(req: AdmissionRequest, pathVersion: CloneSetVersion): CloneSetVersion {
  const v = versionOf(req);
  if (v !== pathVersion) {
    throw new BadRequestError(`request.kind.version: ${v} sent to the ${pathVersion} endpoint (use matchPolicy: Exact and one webhook per version)`);
  }
  return v;
}

function errored(uid: string, code: number, reason: string, message: string): AdmissionResponse {
  return { uid, allowed: false, status: { status: 'Failure', code, reason, message } };
}

/**
 * The mutating decision (Kruise's CloneSet mutating handler): Kruise's defaults; the pod-template defaults only on
 * create, or on an update that changes the template, unless the TemplateNoDefaults gate is on. No patch when nothing
 * changed.
 */
export function mutate(
  req: AdmissionRequest,
  pathVersion: CloneSetVersion,
  handlers: Pick<AdmissionHandlers, 'defaultCloneSet' | 'shouldInjectTemplateDefaults'>,
  gates: FeatureGates,
): AdmissionResponse {
  const version = checkPathVersion(req, pathVersion);
  if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return { uid: req.uid, allowed: true };
  const obj = req.object;
  if (obj === undefined) throw new BadRequestError('request.object: Required value for CREATE and UPDATE');
  const input = { operation: req.operation, object: obj, ...(req.oldObject !== undefined ? { oldObject: req.oldObject } : {}) };
  const injectTemplateDefaults =
    handlers.shouldInjectTemplateDefaults !== undefined
      ? handlers.shouldInjectTemplateDefaults(input, gates)
      : !gates.TemplateNoDefaults && (req.operation === 'CREATE' || !jsonEqual(templateOf(obj), templateOf(req.oldObject)));
  const defaulted = handlers.defaultCloneSet(obj, version, { injectTemplateDefaults });
  const patch = createJsonPatch(obj, defaulted);
  if (patch.length === 0) return { uid: req.uid, allowed: true };
  return { uid: req.uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') };
}

function templateOf(obj: Record<string, unknown> | undefined): unknown {
  const spec = obj?.spec;
  return isObject(spec) ? spec.template : undefined;
}

function podsToDeleteOf(obj: Record<string, unknown> | undefined): string[] {
  const spec = obj?.spec;
  const scale = isObject(spec) ? spec.scaleStrategy : undefined;
  const names = isObject(scale) ? scale.podsToDelete : undefined;
  return Array.isArray(names) ? names.filter((n): n is string => typeof n === 'string' && n !== '') : [];
}

/**
 * The pods the validating handler needs to see: the podsToDelete names of the new object that the old object did
 * not already list (entries already admitted are not checked again, as in Kruise), each once.
 */
export function podsToPrefetch(req: AdmissionRequest): string[] {
  if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return [];
  const old = new Set(podsToDeleteOf(req.oldObject));
  return [...new Set(podsToDeleteOf(req.object))].filter((n) => !old.has(n));
}

const CAUSE_TYPE: Readonly<Record<FieldError['type'], string>> = {
  Required: 'FieldValueRequired',
  Invalid: 'FieldValueInvalid',
  Forbidden: 'FieldValueForbidden',
  Duplicate: 'FieldValueDuplicate',
  NotSupported: 'FieldValueNotSupported',
  TooLong: 'FieldValueTooLong',
  TooMany: 'FieldValueTooMany',
};

/**
 * The validating decision. A rejection is a 422 `Invalid` Status like the API server's own validation errors
 * (apierrors.NewInvalid): the aggregate message plus one `details.causes` entry per field path, so that
 * `kubectl` and clients see which field to fix. A DELETE refused by deletion protection is 403 Forbidden, as Kruise.
 */
export function validate(
  req: AdmissionRequest,
  pathVersion: CloneSetVersion,
  handlers: Pick<AdmissionHandlers, 'validateCloneSet' | 'formatInvalid' | 'deletionDenial'>,
  ctx: { pods: ReadonlyMap<string, Pod>; gates: FeatureGates },
): AdmissionResponse {
  const version = checkPathVersion(req, pathVersion);
  if (req.operation === 'CONNECT') return { uid: req.uid, allowed: true };
  if (req.operation !== 'DELETE' && req.object === undefined) throw new BadRequestError('request.object: Required value for CREATE and UPDATE');
  if (req.operation === 'UPDATE' && req.oldObject === undefined) throw new BadRequestError('request.oldObject: Required value for UPDATE');
  if (req.operation === 'DELETE') {
    // Without the old object (API servers before 1.16) a DELETE cannot be checked; Kruise allows it.
    const denial = req.oldObject === undefined ? undefined : handlers.deletionDenial?.(req.oldObject, ctx.gates);
    return denial === undefined ? { uid: req.uid, allowed: true } : errored(req.uid, 403, 'Forbidden', denial);
  }
  const errs = handlers.validateCloneSet(
    { version, operation: req.operation, ...(req.object !== undefined ? { object: req.object } : {}), ...(req.oldObject !== undefined ? { oldObject: req.oldObject } : {}) },
    ctx,
  );
  if (errs.length === 0) return { uid: req.uid, allowed: true };
  const meta = (req.object ?? req.oldObject)?.metadata;
  const name = (isObject(meta) ? str(meta.name) : undefined) ?? req.name ?? '';
  const message = handlers.formatInvalid('CloneSet.apps.kruise.io', name, errs);
  return {
    uid: req.uid,
    allowed: false,
    status: {
      status: 'Failure',
      code: 422,
      reason: 'Invalid',
      message,
      details: {
        name,
        group: 'apps.kruise.io',
        kind: 'CloneSet',
        causes: errs.map((e) => ({ reason: CAUSE_TYPE[e.type], message: causeMessage(e), field: e.field })),
      },
    },
  };
}

/** The cause message: the error without its field path (field.Error.ErrorBody), e.g. `Invalid value: -1: must be ≥ 0`. */
export function causeMessage(e: FieldError): string {
  return formatFieldError(e).slice(e.field.length + 2);
}

/** An internal failure (a handler threw): 500, the request is refused (failurePolicy Fail semantics). */
export function internalError(uid: string, e: unknown): AdmissionResponse {
  return errored(uid, 500, 'InternalError', `internal error in the cloneset-controller webhook: ${e instanceof Error ? e.message : String(e)}`);
}

export function badRequest(uid: string, message: string): AdmissionResponse {
  return errored(uid, 400, 'BadRequest', message);
}
