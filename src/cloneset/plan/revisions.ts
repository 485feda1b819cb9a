// ControllerRevisions of a CloneSet (docs/features.md#revisions; Kruise pkg/controller/cloneset/revision/cloneset_revision.go), pure: what is stored and hashed, names, equality, ordering,
// and the choice of current and update revision (docs/features.md#revisions; Kruise pkg/controller/cloneset/cloneset_controller.go). The executor performs the API calls (create with collision retries, the PUT
// that bumps an old revision) from the decision returned by `chooseRevisions`.
import { KIND, OWNER_API_VERSION, type CloneSet } from '../../api/cloneset.ts';
import { defaultPodTemplate, defaultVolumeClaimTemplate, type TemplateDefaultOptions } from '../../api/defaults.ts';
import { compareUtf8, fnv1_32, fnv1a_32, goMarshal, goQuote, goTypedMarshal, goTypedMarshalStable, spewByteSlice } from '../../api/go-json.ts';
import { ANNOTATION_VCT_HASH, LABEL_CONTROLLER_REVISION_HASH } from '../../api/well-known.ts';
import type { ControllerRevision, PersistentVolumeClaim, PodTemplateSpec } from '../../kube/types.ts';
import { INSTANCE_ID_ALPHABET } from './instance-ids.ts';

export interface RevisionOptions extends TemplateDefaultOptions {
  /**
   * Hash the template (and volume claim templates) as Kruise's mutating webhook would have stored them,
   * i.e. with the defaults of docs/features.md#admission (Kruise apis/apps/defaults/v1alpha1.go) applied (default true). The stored object may lack them because we
   * have no mutating webhook; applying them to an already-defaulted template changes nothing. False
   * reproduces a Kruise running with gate TemplateNoDefaults.
   */
  readonly applyDefaults?: boolean;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Kubernetes' limit for the name prefix of a ControllerRevision. */
const MAX_PREFIX = 223;

/**
 * The `data` of a revision as a JSON value: `{"spec":{"template":{...,"$patch":"replace"}}}` where the
 * template went through a Go typed round-trip of PodTemplateSpec (docs/features.md#revisions; Kruise pkg/controller/cloneset/revision/cloneset_revision.go).
 */
export function revisionDataObject(cloneSet: CloneSet, opts: RevisionOptions = {}): Obj {
  const source = opts.applyDefaults === false ? cloneSet.spec.template : defaultPodTemplate(cloneSet.spec.template, opts);
  const typed: unknown = JSON.parse(goTypedMarshalStable(source, 'PodTemplateSpec'));
  const template: Obj = isObj(typed) ? typed : {};
  template['$patch'] = 'replace';
  return { spec: { template } };
}

/** The exact bytes Kruise stores in `data` and hashes (docs/features.md#revisions; Kruise pkg/controller/cloneset/revision/cloneset_revision.go), as a string (ASCII-safe except non-ASCII text). */
export function revisionData(cloneSet: CloneSet, opts: RevisionOptions = {}): string {
  return goMarshal(revisionDataObject(cloneSet, opts));
}

/** The canonical bytes of a listed revision's `data` (what Kruise compares with bytes.Equal). */
export function revisionDataBytes(rev: ControllerRevision): string {
  return goMarshal(rev.data);
}

/**
 * docs/features.md#revisions (Kruise pkg/controller/cloneset/revision/cloneset_revision.go): FNV-1 32 over the data bytes followed by the decimal collision count (nothing when undefined),
 * the decimal of the result with each digit mapped through the alphabet "bcdfghjklmnpqrstvwxz2456789".
 */
export function hashRevision(data: string | Uint8Array, collisionCount: number | undefined): string {
  const h = collisionCount === undefined ? fnv1_32(data) : fnv1_32(data, String(collisionCount));
  let out = '';
  for (const c of String(h)) out += INSTANCE_ID_ALPHABET[c.charCodeAt(0) % INSTANCE_ID_ALPHABET.length] ?? '';
  return out;
}

/** `<name[:223]>-<hash>` (ControllerRevisionName). */
export function revisionName(cloneSetName: string, hash: string): string {
  return `${cloneSetName.slice(0, MAX_PREFIX)}-${hash}`;
}

/**
 * docs/features.md#revisions (Kruise pkg/controller/cloneset/revision/cloneset_revision.go): the value of `kruise.io/cloneset-volumeclaimtemplate-hash` — "" without templates, else the
 * decimal FNV-1a 32 of go-spew's `%#v` of the JSON of `[{metadata:{name}, spec}]` (typed PVCs, stably
 * sorted by name).
 */
export function volumeClaimTemplatesHash(templates: readonly PersistentVolumeClaim[] | undefined, opts: RevisionOptions = {}): string {
  if (templates === undefined || templates === null || templates.length === 0) return '';
  const items = templates
    .map((t) => (opts.applyDefaults === false ? t : defaultVolumeClaimTemplate(t)))
    .map((t) => stablePvc(t))
    .map((t) => ({ name: t.metadata?.name, pvc: { metadata: { name: t.metadata?.name }, spec: t.spec } }));
  const sorted = items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => compareUtf8(nameOf(a.item.name), nameOf(b.item.name)) || a.index - b.index)
    .map((x) => x.item.pvc);
  const json = `[${sorted.map((p) => goTypedMarshal(p, 'PersistentVolumeClaim')).join(',')}]`;
  return String(fnv1a_32(spewByteSlice(json)));
}

const nameOf = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The claim template as Kruise holds it after its typed round-trips. */
function stablePvc(t: PersistentVolumeClaim): { readonly metadata?: { readonly name?: unknown }; readonly spec?: unknown } {
  const v: unknown = JSON.parse(goTypedMarshalStable(t, 'PersistentVolumeClaim'));
  return isObj(v) ? { ...(isObj(v['metadata']) ? { metadata: v['metadata'] } : {}), spec: v['spec'] } : {};
}

/** A template's revision data (`revisionDataObject`) and its bytes (`revisionData`): what is stored and hashed. */
export interface TemplateRevisionData {
  readonly object: Obj;
  readonly bytes: string;
  /** `hashRevision(bytes, collisionCount)`. */
  hash(collisionCount: number | undefined): string;
}

/**
 * The costly pure derivations of a pass's revision choice: the revision data of the CloneSet's template (defaults,
 * a Go-typed marshal), the hash of its volume claim templates, and the data bytes of each listed revision. The
 * same template and revisions come back on pass after pass, so the controller passes derivations that remember
 * them per cached object (cloneset/revision-memo.ts); `derivations` computes them every time. Either way the
 * values are the same: only the work differs.
 */
export interface RevisionDerivations {
  templateData(cloneSet: CloneSet): TemplateRevisionData;
  volumeClaimTemplatesHash(cloneSet: CloneSet): string;
  dataBytes(rev: ControllerRevision): string;
}

/** The derivations with `opts`, computed on every call. */
export function derivations(opts: RevisionOptions = {}): RevisionDerivations {
  return {
    templateData: (cloneSet) => {
      const object = revisionDataObject(cloneSet, opts);
      const bytes = goMarshal(object);
      return { object, bytes, hash: (collisionCount) => hashRevision(bytes, collisionCount) };
    },
    volumeClaimTemplatesHash: (cloneSet) => volumeClaimTemplatesHash(cloneSet.spec.volumeClaimTemplates, opts),
    dataBytes: revisionDataBytes,
  };
}

/**
 * A new ControllerRevision for the CloneSet's current template (docs/features.md#revisions; Kruise pkg/controller/cloneset/revision/cloneset_revision.go): name `<name>-<hash>`, labels =
 * template labels + `controller.kubernetes.io/hash`, annotations = all CloneSet annotations + the VCT hash,
 * controller owner reference to the CloneSet (apiVersion apps.kruise.io/v1beta1, docs/features.md#ownership-and-adoption; Kruise pkg/controller/cloneset/core/cloneset_core.go), `data` as a JSON value.
 */
export function newRevision(cloneSet: CloneSet, revisionNumber: number, collisionCount: number | undefined, opts: RevisionOptions = {}): ControllerRevision {
  const derive = derivations(opts);
  return revisionOf(cloneSet, revisionNumber, collisionCount, derive.templateData(cloneSet), derive.volumeClaimTemplatesHash(cloneSet));
}

function revisionOf(cloneSet: CloneSet, revisionNumber: number, collisionCount: number | undefined, data: TemplateRevisionData, vctHash: string): ControllerRevision {
  const hash = data.hash(collisionCount);
  const md = cloneSet.metadata;
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(md.name ?? '', hash),
      ...(md.namespace !== undefined ? { namespace: md.namespace } : {}),
      labels: { ...cloneSet.spec.template.metadata?.labels, [LABEL_CONTROLLER_REVISION_HASH]: hash },
      annotations: { ...md.annotations, [ANNOTATION_VCT_HASH]: vctHash },
      ownerReferences: [{ apiVersion: OWNER_API_VERSION, kind: KIND, name: md.name ?? '', uid: md.uid ?? '', controller: true, blockOwnerDeletion: true }],
    },
    data: data.object,
    revision: revisionNumber,
  };
}

/**
 * The candidate renamed for another collision count (the executor's create loop after AlreadyExists with
 * different data). The `controller.kubernetes.io/hash` label keeps its first value, as in Kruise (docs/features.md#revisions; Kruise pkg/controller/cloneset/revision/cloneset_revision.go).
 */
export function renameForCollision(candidate: ControllerRevision, cloneSetName: string, collisionCount: number): ControllerRevision {
  const name = revisionName(cloneSetName, hashRevision(revisionDataBytes(candidate), collisionCount));
  return { ...candidate, metadata: { ...candidate.metadata, name } };
}

/**
 * The JSON body for creating/updating a revision with `data` embedded as the exact canonical bytes (the API
 * server stores `data` verbatim; JSON.stringify would neither sort integer-like keys nor escape `<>&` the
 * way Kruise does, and Kruise compares these bytes).
 */
export function encodeControllerRevision(rev: ControllerRevision): string {
  const { data, ...rest } = rev;
  const head = JSON.stringify(rest);
  if (data === undefined) return head;
  const body = head.length > 2 ? `${head.slice(0, -1)},` : '{';
  return `${body}${goQuote('data')}:${goMarshal(data)}}`;
}

/** The pod template stored in a revision (without `$patch`), or undefined when `data` has another shape. */
export function templateFromRevision(rev: ControllerRevision): PodTemplateSpec | undefined {
  const data = rev.data;
  if (!isObj(data)) return undefined;
  const spec = data['spec'];
  if (!isObj(spec)) return undefined;
  const template = spec['template'];
  if (!isObj(template)) return undefined;
  const { $patch: _patch, ...rest } = template;
  const podSpec = rest['spec'];
  if (!isObj(podSpec)) return undefined;
  const metadata = rest['metadata'];
  return { ...rest, ...(isObj(metadata) ? { metadata } : {}), spec: { containers: [], ...podSpec } };
}

// ---------------------------------------------------------------------------------------------------
// Ordering and equality (docs/features.md#revisions; Kruise pkg/util/history/controller_history.go)

function timeOf(rev: ControllerRevision): number {
  const t = rev.metadata.creationTimestamp;
  if (typeof t !== 'string') return Number.NEGATIVE_INFINITY; // zero time
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : Math.floor(ms / 1000);
}

/** Ascending by revision, then creationTimestamp (older first), then name. Stable; returns a new array. */
export function sortRevisions(revisions: readonly ControllerRevision[]): ControllerRevision[] {
  return [...revisions].sort((a, b) => {
    if (a.revision !== b.revision) return a.revision < b.revision ? -1 : 1;
    const ta = timeOf(a);
    const tb = timeOf(b);
    if (ta !== tb) return ta < tb ? -1 : 1;
    const na = a.metadata.name ?? '';
    const nb = b.metadata.name ?? '';
    return na < nb ? -1 : na > nb ? 1 : 0;
  });
}

/** strconv.ParseInt(s, 10, 32) as an unsigned 32-bit value, or undefined. */
function hashLabelNumber(rev: ControllerRevision): number | undefined {
  const s = rev.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH];
  if (s === undefined || !/^[+-]?\d+$/.test(s)) return undefined;
  const n = Number(s);
  if (n < -2147483648 || n > 2147483647) return undefined;
  return n >>> 0;
}

/** EqualRevision: differing numeric hash labels → false; otherwise the data bytes decide. */
export function equalRevision(a: ControllerRevision | undefined, b: ControllerRevision | undefined, dataBytes = revisionDataBytes): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a === b) return true;
  const ha = hashLabelNumber(a);
  const hb = hashLabelNumber(b);
  if (ha !== undefined && hb !== undefined && ha !== hb) return false;
  return dataBytes(a) === dataBytes(b);
}

/** The revisions equal to `needle`, in the given order. */
export function findEqualRevisions(revisions: readonly ControllerRevision[], needle: ControllerRevision, dataBytes = revisionDataBytes): ControllerRevision[] {
  const needleBytes = dataBytes(needle);
  const hn = hashLabelNumber(needle);
  return revisions.filter((r) => {
    const hr = hashLabelNumber(r);
    if (hr !== undefined && hn !== undefined && hr !== hn) return false;
    return dataBytes(r) === needleBytes;
  });
}

/** 1 + the highest revision number (1 when there is none). */
export function nextRevisionNumber(revisions: readonly ControllerRevision[]): number {
  let max = 0;
  for (const r of revisions) if (r.revision > max) max = r.revision;
  return revisions.length === 0 ? 1 : max + 1;
}

// ---------------------------------------------------------------------------------------------------
// Choosing current and update revision (docs/features.md#revisions; Kruise pkg/controller/cloneset/cloneset_controller.go)

export type RevisionChoice =
  /** The newest revision already holds the template: no API call. */
  | {
      readonly kind: 'use';
      readonly update: ControllerRevision;
      readonly current: ControllerRevision;
      readonly collisionCount: number;
    }
  /**
   * Rollback to an older equal revision: PUT `updated` (= `revision` with `revision: newNumber` and the VCT
   * hash annotation refreshed when missing or different); on conflict re-read and retry.
   * `current` undefined means "the update revision"; if `current` has the same name as `revision`, use the
   * object the PUT returned.
   */
  | {
      readonly kind: 'bumpExisting';
      readonly revision: ControllerRevision;
      readonly newNumber: number;
      readonly updated: ControllerRevision;
      readonly current: ControllerRevision | undefined;
      readonly collisionCount: number;
    }
  /**
   * No equal revision: POST `candidate`; on AlreadyExists read the existing one — same data bytes → use it
   * (revision number unchanged), else collisionCount+1 and retry with `renameForCollision`.
   * The final collision count goes to status.collisionCount. `current` undefined means "the update revision".
   */
  | {
      readonly kind: 'create';
      readonly candidate: ControllerRevision;
      readonly current: ControllerRevision | undefined;
      readonly collisionCount: number;
    };

export function chooseRevisions(
  cloneSet: CloneSet,
  revisions: readonly ControllerRevision[],
  opts: RevisionOptions = {},
  derive: RevisionDerivations = derivations(opts),
): RevisionChoice {
  const sorted = sortRevisions(revisions);
  const collisionCount = cloneSet.status?.collisionCount ?? 0;
  const next = nextRevisionNumber(sorted);
  const template = derive.templateData(cloneSet);
  const candidate = revisionOf(cloneSet, next, collisionCount, template, derive.volumeClaimTemplatesHash(cloneSet));
  const dataBytes = (r: ControllerRevision): string => (r === candidate ? template.bytes : derive.dataBytes(r));
  const equal = findEqualRevisions(sorted, candidate, dataBytes);
  const lastEqual = equal.at(-1);
  const currentName = cloneSet.status?.currentRevision;
  const listedCurrent = currentName === undefined || currentName === '' ? undefined : sorted.find((r) => r.metadata.name === currentName);

  const newest = sorted.at(-1);
  if (lastEqual !== undefined && newest !== undefined && equalRevision(newest, lastEqual, dataBytes)) {
    return { kind: 'use', update: newest, current: listedCurrent ?? newest, collisionCount };
  }
  if (lastEqual !== undefined) {
    const vct = candidate.metadata.annotations?.[ANNOTATION_VCT_HASH] ?? '';
    const annotations =
      lastEqual.metadata.annotations?.[ANNOTATION_VCT_HASH] === vct ? lastEqual.metadata.annotations : { ...lastEqual.metadata.annotations, [ANNOTATION_VCT_HASH]: vct };
    const updated: ControllerRevision = {
      ...lastEqual,
      metadata: { ...lastEqual.metadata, ...(annotations !== undefined ? { annotations } : {}) },
      revision: next,
    };
    return { kind: 'bumpExisting', revision: lastEqual, newNumber: next, updated, current: listedCurrent, collisionCount };
  }
  return { kind: 'create', candidate, current: listedCurrent, collisionCount };
}
