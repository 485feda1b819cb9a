// The validating admission of CloneSets (pkg/webhook/cloneset/validating/validation.go in openkruise/kruise):
// every rule of Kruise's CloneSet validation for both API versions, with Kruise's field paths and wording.
// docs/validation-rules.md lists each rule, where it is enforced and its test.
//
// Order, as in Kruise: the object must decode into the Go types (decode.ts; on failure only those errors are
// returned); on UPDATE the immutability rules run first; then metadata and spec. Differences from Kruise, each
// deliberate and documented:
// * v1beta1 "maxUnavailable and maxSurge should not both be less than 1": Kruise's v1beta1 validator shadows the
//   maxSurge variable, so it ignores maxSurge and rejects `maxUnavailable: 0, maxSurge: 1` (a valid surge-only
//   rollout that its v1alpha1 path accepts). We apply the rule as intended on both versions.
// * pod-template fields that Kruise's defaulting fills are not required (see pod-template.ts), and the InPlaceOnly
//   "images only" diff compares defaulted templates, so objects stored before the webhook existed stay updatable.
// Pure: the pods named in podsToDelete are prefetched by the caller into ctx.pods.
import { defaultPodTemplate } from '../api/defaults.ts';
import { goMarshal, goTypedMarshal, GoJsonError } from '../api/go-json.ts';
import type { FeatureGates } from '../api/well-known.ts';
import { createJsonPatch } from '../api/json-diff.ts';
import { controllerRefOf } from '../kube/owner-refs.ts';
import { isEmptySelector, matchesLabelSelector, validateLabelKey, validateLabelValue } from '../kube/selectors.ts';
import type { LabelSelector, Pod, PodTemplateSpec } from '../kube/types.ts';
import { decodeErrors } from './decode.ts';
import { validateExtensionAnnotations } from './extensions.ts';
import type { CloneSetVersion } from './mutating.ts';
import { child, forbidden, index, invalid, notSupported, required, type FieldError } from './field-errors.ts';
import { scaledValueFromIntOrPercent } from './scaled-int-or-percent.ts';
import { validatePodTemplate } from './pod-template.ts';
import { priorityStrategyError, scatterStrategyError } from './strategies.ts';

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

type Obj = Readonly<Record<string, unknown>>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const objAt = (o: Obj | undefined, k: string): Obj | undefined => {
  const v = o?.[k];
  return isObj(v) ? v : undefined;
};
const strAt = (o: Obj | undefined, k: string): string => {
  const v = o?.[k];
  return typeof v === 'string' ? v : '';
};
const stringList = (v: unknown): string[] => (Array.isArray(v) ? v.filter((e): e is string => typeof e === 'string') : []);

const MAX_INT32 = 2147483647;
const NON_NEGATIVE = 'must be greater than or equal to 0';
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

export const IMMUTABLE_SPEC_MESSAGE =
  "updates to cloneset spec for fields other than 'replicas', 'template', 'lifecycle', 'scaleStrategy', 'updateStrategy', " +
  "'minReadySeconds', 'progressDeadlineSeconds', 'volumeClaimTemplates' and 'revisionHistoryLimit' are forbidden";

function nonNegative(v: unknown, path: string, errs: FieldError[]): void {
  if (typeof v === 'number' && v < 0) errs.push(invalid(path, v, NON_NEGATIVE));
}

/** ValidateObjectMeta (the parts the API server leaves to us): name syntax, label and annotation keys. */
function validateMetadata(meta: Obj | undefined, errs: FieldError[]): void {
  const name = strAt(meta, 'name');
  if (name !== '') {
    if (name.length > 253) errs.push(invalid('metadata.name', name, 'must be no more than 253 characters'));
    if (!DNS1123_SUBDOMAIN.test(name)) errs.push(invalid('metadata.name', name, DNS1123_SUBDOMAIN_MSG));
  }
  for (const [k, v] of Object.entries(objAt(meta, 'labels') ?? {})) {
    for (const msg of validateLabelKey(k)) errs.push(invalid('metadata.labels', k, msg));
    if (typeof v === 'string') for (const msg of validateLabelValue(v)) errs.push(invalid('metadata.labels', v, msg));
  }
  for (const k of Object.keys(objAt(meta, 'annotations') ?? {})) {
    for (const msg of validateLabelKey(k.toLowerCase())) errs.push(invalid('metadata.annotations', k, msg));
  }
}

/** unversionedvalidation.ValidateLabelSelector: operators, value sets, keys and values. */
function validateSelector(sel: Obj, path: string, errs: FieldError[]): void {
  const exprs = Array.isArray(sel['matchExpressions']) ? sel['matchExpressions'] : [];
  exprs.forEach((e: unknown, i) => {
    const ep = index(child(path, 'matchExpressions'), i);
    const expr = isObj(e) ? e : {};
    const op = strAt(expr, 'operator');
    const values = stringList(expr['values']);
    if (op === 'In' || op === 'NotIn') {
      if (values.length === 0) errs.push(required(child(ep, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (op === 'Exists' || op === 'DoesNotExist') {
      if (values.length > 0) errs.push(forbidden(child(ep, 'values'), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else {
      errs.push(invalid(child(ep, 'operator'), op, 'not a valid selector operator'));
    }
    const k = strAt(expr, 'key');
    for (const msg of validateLabelKey(k)) errs.push(invalid(child(ep, 'key'), k, msg));
    values.forEach((v, j) => {
      for (const msg of validateLabelValue(v)) errs.push(invalid(index(child(ep, 'values'), j), v, msg));
    });
  });
  const labelsPath = child(path, 'matchLabels');
  for (const [k, v] of Object.entries(objAt(sel, 'matchLabels') ?? {})) {
    for (const msg of validateLabelKey(k)) errs.push(invalid(labelsPath, k, msg));
    if (typeof v === 'string') for (const msg of validateLabelValue(v)) errs.push(invalid(labelsPath, v, msg));
  }
}

/** Replicas, selector and the pod template (the part both versions share). */
function validateSpecCommon(spec: Obj, errs: FieldError[]): void {
  nonNegative(spec['replicas'], 'spec.replicas', errs);
  const rawSelector = spec['selector'];
  const sel = isObj(rawSelector) ? rawSelector : undefined;
  if (sel === undefined) {
    errs.push(required('spec.selector', 'set spec.selector.matchLabels to the labels of spec.template.metadata.labels'));
  } else {
    validateSelector(sel, 'spec.selector', errs);
    if (isEmptySelector(sel as LabelSelector)) errs.push(invalid('spec.selector', sel, 'empty selector is invalid for cloneset'));
  }
  const template = objAt(spec, 'template');
  const templateLabels = objAt(objAt(template, 'metadata'), 'labels') ?? {};
  // LabelSelectorAsSelector: nil selects nothing (so it never matches), {} selects everything (not checked).
  const selectorConverts = sel === undefined || errs.every((e) => !e.field.startsWith('spec.selector.'));
  if (!selectorConverts) {
    errs.push(invalid('spec.selector', sel, ''));
    return; // Kruise skips the template validation when the selector does not convert
  }
  if (sel === undefined || !isEmptySelector(sel as LabelSelector)) {
    if (!matchesLabelSelector((sel ?? null) as LabelSelector | null, templateLabels as Readonly<Record<string, string>>)) {
      errs.push(invalid('spec.template.metadata.labels', templateLabels, '`selector` does not match template `labels`'));
    }
  }
  const claimNames = (Array.isArray(spec['volumeClaimTemplates']) ? spec['volumeClaimTemplates'] : []).map((p: unknown) =>
    strAt(objAt(isObj(p) ? p : undefined, 'metadata'), 'name'),
  );
  errs.push(...validatePodTemplate(template, claimNames, 'spec.template'));

  const podSpec = objAt(template, 'spec');
  const restartPolicy = strAt(podSpec, 'restartPolicy');
  if (restartPolicy !== '' && restartPolicy !== 'Always') {
    errs.push(notSupported('spec.template.spec.restartPolicy', restartPolicy, ['Always']));
  }
  if (podSpec?.['activeDeadlineSeconds'] !== undefined && podSpec['activeDeadlineSeconds'] !== null) {
    errs.push(forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in cloneset is not Supported'));
  }
}

/** Go's %v of a []string: `[a b]`. */
const goList = (names: readonly string[]): string => `[${names.join(' ')}]`;

function duplicates(names: readonly string[]): string[] {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const n of names) (seen.has(n) ? dup : seen).add(n);
  return [...dup];
}

function validateScaleStrategy(version: CloneSetVersion, spec: Obj, oldSpec: Obj | undefined, meta: Obj | undefined, ctx: ValidationContext, errs: FieldError[]): void {
  const path = 'spec.scaleStrategy.podsToDelete';
  const names = stringList(objAt(spec, 'scaleStrategy')?.['podsToDelete']);
  const dup = duplicates(names);
  if (dup.length > 0) {
    errs.push(invalid(path, names, `duplicated items ${goList(dup)}`));
    return;
  }
  if (version !== 'v1alpha1') return; // v1beta1 checks only duplicates (the controller drops unknown names)
  const old = new Set(stringList(objAt(oldSpec, 'scaleStrategy')?.['podsToDelete']));
  const uid = strAt(meta, 'uid');
  for (const name of [...new Set(names)].filter((n) => !old.has(n)).sort()) {
    const pod = ctx.pods.get(name);
    if (pod === undefined) {
      errs.push(invalid(path, name, `find pod ${name} failed: pods ${JSON.stringify(name)} not found`));
    } else if (pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null) {
      errs.push(invalid(path, name, `find pod ${name} already terminating`));
    } else {
      const owner = controllerRefOf(pod);
      if (owner === undefined || owner.uid !== uid) errs.push(invalid(path, name, `find pod ${name} owner is not this CloneSet`));
    }
  }
}

/** The rolling-update fields both versions share (partition … maxSurge), at `path`. */
function validateRolling(r: Obj, replicas: number, policy: string, path: string, surgePolicyMessage: string, errs: FieldError[]): void {
  const partition = scaledValueFromIntOrPercent(r['partition'], replicas, true);
  if (!partition.ok) {
    errs.push(invalid(child(path, 'partition'), goIntOrStringText(r['partition']), `failed GetScaledValueFromIntOrPercent for partition: ${partition.error}`));
  } else {
    nonNegative(partition.value, child(path, 'partition'), errs);
  }
  const priority = priorityStrategyError(r['priorityStrategy']);
  if (priority !== undefined) errs.push(required(child(path, 'priorityStrategy'), priority));
  const scatter = scatterStrategyError(r['scatterStrategy']);
  if (scatter !== undefined) errs.push(required(child(path, 'scatterStrategy'), scatter));

  let maxUnavailable = 0;
  if (r['maxUnavailable'] !== undefined && r['maxUnavailable'] !== null) {
    const v = scaledValueFromIntOrPercent(r['maxUnavailable'], replicas, true);
    if (v.ok) maxUnavailable = v.value;
    else errs.push(invalid(child(path, 'maxUnavailable'), goIntOrStringText(r['maxUnavailable']), `failed GetScaledValueFromIntOrPercent for maxUnavailable: ${v.error}`));
  }
  let maxSurge = 0;
  if (r['maxSurge'] !== undefined && r['maxSurge'] !== null) {
    const v = scaledValueFromIntOrPercent(r['maxSurge'], replicas, true);
    if (v.ok) maxSurge = v.value;
    else errs.push(invalid(child(path, 'maxSurge'), goIntOrStringText(r['maxSurge']), `failed GetScaledValueFromIntOrPercent for maxSurge: ${v.error}`));
    if (policy === 'InPlaceOnly' && maxSurge > 0) errs.push(invalid(child(path, 'maxSurge'), goIntOrStringText(r['maxSurge']), surgePolicyMessage));
  }
  if (replicas > 0 && maxUnavailable < 1 && maxSurge < 1) {
    errs.push(invalid(child(path, 'maxUnavailable'), r['maxUnavailable'] ?? null, 'maxUnavailable and maxSurge should not both be less than 1'));
  }
}

/** IntOrString.String() as Kruise passes it for the bad value: integers as text, a nil pointer as "<nil>". */
const goIntOrStringText = (v: unknown): string => (v === undefined || v === null ? '<nil>' : String(v));

const replicasOf = (spec: Obj): number => (typeof spec['replicas'] === 'number' ? spec['replicas'] : 1);

function validateUpdateStrategyV1alpha1(spec: Obj, errs: FieldError[]): void {
  const us = objAt(spec, 'updateStrategy') ?? {};
  const type = strAt(us, 'type');
  if (!['ReCreate', 'InPlaceIfPossible', 'InPlaceOnly'].includes(type)) {
    errs.push(invalid('spec.updateStrategy.type', type, "must be 'ReCreate', InPlaceIfPossible or 'InPlaceOnly'"));
  }
  validateRolling(us, replicasOf(spec), type, 'spec.updateStrategy', 'can not use maxSurge with strategy type InPlaceOnly', errs);
}

function validatePreDownload(s: Obj | undefined, path: string, errs: FieldError[]): void {
  if (s === undefined) return;
  const p = s['imagePreDownloadParallelism'];
  const pp = child(path, 'imagePreDownloadParallelism');
  if (typeof p === 'string') {
    if (p.endsWith('%')) errs.push(invalid(pp, p, 'imagePreDownloadParallelism does not support percentage value'));
    else if (!/^[+-]?[0-9]+$/.test(p)) {
      errs.push(invalid(pp, p, `imagePreDownloadParallelism must be a valid integer: strconv.Atoi: parsing ${JSON.stringify(p)}: invalid syntax`));
    } else if (Number(p) < 0) errs.push(invalid(pp, p, 'imagePreDownloadParallelism must be non-negative'));
  } else if (typeof p === 'number' && p < 0) {
    errs.push(invalid(pp, p, 'imagePreDownloadParallelism must be non-negative'));
  }
  nonNegative(s['imagePreDownloadTimeoutSeconds'], child(path, 'imagePreDownloadTimeoutSeconds'), errs);
  nonNegative(s['imagePreDownloadMinUpdatedReadyPods'], child(path, 'imagePreDownloadMinUpdatedReadyPods'), errs);
}

function validateUpdateStrategyV1beta1(spec: Obj, errs: FieldError[]): void {
  const us = objAt(spec, 'updateStrategy') ?? {};
  const type = strAt(us, 'type');
  if (!['RollingUpdate', 'OnDelete', ''].includes(type)) {
    errs.push(invalid('spec.updateStrategy.type', type, "must be 'RollingUpdate' or 'OnDelete'"));
  }
  const r = objAt(us, 'rollingUpdate');
  if (r === undefined) return;
  const path = 'spec.updateStrategy.rollingUpdate';
  const policy = strAt(r, 'podUpdatePolicy');
  if (!['ReCreate', 'InPlaceIfPossible', 'InPlaceOnly', ''].includes(policy)) {
    errs.push(invalid(child(path, 'podUpdatePolicy'), policy, "must be 'ReCreate', 'InPlaceIfPossible' or 'InPlaceOnly'"));
  }
  validateRolling(r, replicasOf(spec), policy, path, 'can not use maxSurge with podUpdatePolicy InPlaceOnly', errs);
  validatePreDownload(objAt(r, 'inPlaceUpdateStrategy'), child(path, 'inPlaceUpdateStrategy'), errs);
}

function validateProgressDeadline(spec: Obj, errs: FieldError[]): void {
  const pds = spec['progressDeadlineSeconds'];
  if (typeof pds !== 'number') return;
  if (pds < 0) {
    errs.push(invalid('spec.progressDeadlineSeconds', pds, NON_NEGATIVE));
    return;
  }
  const minReady = typeof spec['minReadySeconds'] === 'number' ? spec['minReadySeconds'] : 0;
  if (pds !== MAX_INT32 && pds <= minReady) {
    errs.push(invalid('spec.progressDeadlineSeconds', pds, 'must be greater than minReadySeconds'));
  }
}

/** apiequality.Semantic.DeepEqual: nil and empty maps and lists are equal. */
function semantic(v: unknown): unknown {
  if (Array.isArray(v)) return v.length === 0 ? undefined : v.map(semantic);
  if (isObj(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, e] of Object.entries(v)) {
      const s = semantic(e);
      if (s !== undefined && s !== null) out[k] = s;
    }
    return Object.keys(out).length === 0 ? undefined : out;
  }
  return v;
}

/**
 * The template defaulted and Go round-tripped, so that an old object stored before the webhook existed (without
 * defaults) does not show the defaults as changes next to an image update. Idempotent for defaulted templates.
 */
function normalizedTemplate(template: unknown): Obj | undefined {
  if (!isObj(template)) return undefined;
  try {
    const parsed: unknown = JSON.parse(goTypedMarshal(defaultPodTemplate(template as unknown as PodTemplateSpec), 'PodTemplateSpec'));
    return isObj(parsed) ? parsed : undefined;
  } catch (e) {
    if (e instanceof GoJsonError) return template;
    throw e;
  }
}

const IMAGE_PATH = /^\/containers\/[0-9]+\/image$/;

/** The update rules: immutable fields; on v1alpha1 also InPlaceOnly's "images only" (clonesetcore.ValidateCloneSetUpdate). */
function validateUpdate(version: CloneSetVersion, spec: Obj, oldSpec: Obj, errs: FieldError[]): void {
  if (goMarshal(semantic(spec['selector'])) !== goMarshal(semantic(oldSpec['selector']))) {
    errs.push(forbidden('spec', IMMUTABLE_SPEC_MESSAGE));
  }
  if (version !== 'v1alpha1') return;
  if (strAt(objAt(spec, 'updateStrategy'), 'type') !== 'InPlaceOnly') return;
  const before = objAt(normalizedTemplate(oldSpec['template']), 'spec') ?? {};
  const after = objAt(normalizedTemplate(spec['template']), 'spec') ?? {};
  const bad = createJsonPatch(before, after).find((op) => op.op !== 'replace' || !IMAGE_PATH.test(op.path));
  if (bad !== undefined) {
    errs.push(forbidden('spec', `only allowed to update images in spec for InPlaceOnly, but found ${bad.op} ${bad.path}`));
  }
}

/**
 * Kruise's validation of a CloneSet admission request (after defaulting). Returns every error; an empty list
 * admits the request. DELETE is always admitted here (deletion protection: see deletionProtectionDenial).
 */
export function validateCloneSet(req: AdmissionInput, ctx: ValidationContext): FieldError[] {
  if (req.operation === 'DELETE') return [];
  const obj = req.object;
  if (obj === undefined) return [required('object', 'the admission request carries no object; send the CloneSet in request.object')];
  const decode = decodeErrors(obj, req.version);
  if (decode.length > 0) return decode;
  const spec = objAt(obj, 'spec') ?? {};
  const meta = objAt(obj, 'metadata');
  const errs: FieldError[] = [];
  const old = req.operation === 'UPDATE' ? req.oldObject : undefined;
  const oldSpec = old !== undefined && decodeErrors(old, req.version).length === 0 ? (objAt(old, 'spec') ?? {}) : undefined;
  if (oldSpec !== undefined) validateUpdate(req.version, spec, oldSpec, errs);
  validateMetadata(meta, errs);
  validateExtensionAnnotations(objAt(meta, 'annotations'), errs);
  validateSpecCommon(spec, errs);
  validateScaleStrategy(req.version, spec, oldSpec, meta, ctx, errs);
  if (req.version === 'v1alpha1') {
    validateUpdateStrategyV1alpha1(spec, errs);
    validateProgressDeadline(spec, errs);
  } else {
    validateUpdateStrategyV1beta1(spec, errs);
  }
  return errs;
}

/**
 * Kruise's deletion protection (pkg/webhook/util/deletionprotection): with gate ResourcesDeletionProtection,
 * the denial message (HTTP 403) for deleting this CloneSet, or undefined when the deletion is allowed.
 */
export function deletionProtectionDenial(oldObject: Record<string, unknown> | undefined, gates: FeatureGates): string | undefined {
  if (oldObject === undefined || !gates.ResourcesDeletionProtection) return undefined;
  const meta = objAt(oldObject, 'metadata');
  if (meta?.['deletionTimestamp'] !== undefined && meta['deletionTimestamp'] !== null) return undefined;
  const value = strAt(objAt(meta, 'labels'), 'policy.kruise.io/delete-protection');
  if (value === 'Always') return 'forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Always';
  const replicas = objAt(oldObject, 'spec')?.['replicas'];
  if (value === 'Cascading' && typeof replicas === 'number' && replicas > 0) {
    return `forbidden by ResourcesProtectionDeletion for policy.kruise.io/delete-protection=Cascading and replicas ${replicas}>0`;
  }
  return undefined;
}
