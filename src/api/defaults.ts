// Kruise's defaulting of a CloneSet (docs/features.md#admission; Kruise apis/apps/defaults/v1alpha1.go): what its mutating webhook writes into the object. We have
// no mutating webhook, so these functions are applied to copies where the defaulted form matters — above
// all the revision hash (docs/features.md#revisions; Kruise pkg/controller/cloneset/revision/cloneset_revision.go: the hashed template is the defaulted one).
//
// Pod-template defaults = Kubernetes SetDefaults_PodSpec + Kruise's container rules:
// * pod: dnsPolicy ClusterFirst, restartPolicy Always, securityContext {}, terminationGracePeriodSeconds 30,
//   schedulerName default-scheduler;
// * containers: imagePullPolicy Always when empty (Kruise, for in-place update), terminationMessagePath
//   /dev/termination-log, terminationMessagePolicy File;
// * init containers: imagePullPolicy by the Kubernetes rule (tag `latest` or no tag/digest → Always,
//   otherwise IfNotPresent), termination message defaults;
// * containers, init and ephemeral containers: port protocol TCP, env fieldRef apiVersion v1, resource
//   quantities rounded up to milli units, probes (timeout 1, period 10, success 1, failure 3; httpGet path
//   "/", scheme HTTP), lifecycle postStart/preStop httpGet path/scheme;
// * volumes: no source → emptyDir {}; hostPath type ""; secret/configMap/downwardAPI/projected defaultMode
//   420; downward API fieldRef apiVersion v1; service-account token projection expirationSeconds 3600;
// * overhead quantities rounded up to milli;
// * only with gate DefaultHostNetworkHostPortsInPodTemplates: hostNetwork → hostPort = containerPort.
// Not applied (as in Kruise): enableServiceLinks and requests-from-limits (those are Pod-only defaults),
// image volume pullPolicy (gate ImageVolume is off in Kruise's build).
import type { CloneSet, CloneSetSpec, CloneSetUpdateStrategy } from './cloneset.ts';
import { DEFAULT_MAX_UNAVAILABLE, DEFAULT_REVISION_HISTORY_LIMIT } from './well-known.ts';
import { goStructFieldNames } from './go-json.ts';
import { defaultedQuantity, QuantityParseError } from './go-quantity.ts';
import type { PersistentVolumeClaim, PodTemplateSpec } from '../kube/types.ts';

type Obj = Record<string, unknown>;

export interface TemplateDefaultOptions {
  /** Gate DefaultHostNetworkHostPortsInPodTemplates (default false). */
  readonly defaultHostNetworkHostPorts?: boolean;
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A Go string field that reads as "" (absent, null or empty). */
const emptyString = (v: unknown): boolean => v === undefined || v === null || v === '';
/** A Go pointer, slice or map field that reads as nil. */
const nil = (v: unknown): boolean => v === undefined || v === null;
/** A Go integer field that reads as 0. */
const zeroInt = (v: unknown): boolean => v === undefined || v === null || v === 0;

/** The object at `o[key]` when it is a (non-nil) struct. */
function child(o: Obj, key: string): Obj | undefined {
  const v = o[key];
  return isObj(v) ? v : undefined;
}

/** Calls fn for each element of the array at `o[key]`; null elements become {} (Go decodes them as zero structs). */
function eachElement(o: Obj, key: string, fn: (e: Obj) => void): void {
  const a = o[key];
  if (!Array.isArray(a)) return;
  for (let i = 0; i < a.length; i++) {
    let e: unknown = a[i];
    if (e === null) {
      e = {};
      a[i] = e;
    }
    if (isObj(e)) fn(e);
  }
}

function setIf(o: Obj, key: string, cond: (v: unknown) => boolean, value: unknown): void {
  if (cond(o[key])) o[key] = value;
}

function defaultResourceList(o: Obj | undefined, key: string): void {
  const list = o === undefined ? undefined : child(o, key);
  if (list === undefined) return;
  for (const [name, q] of Object.entries(list)) {
    if (typeof q !== 'string' && typeof q !== 'number') continue;
    try {
      list[name] = defaultedQuantity(String(q));
    } catch (e) {
      if (!(e instanceof QuantityParseError)) throw e; // left as is: the typed round-trip reports it
    }
  }
}

function defaultFieldRef(holder: Obj | undefined): void {
  const ref = holder === undefined ? undefined : child(holder, 'fieldRef');
  if (ref !== undefined) setIf(ref, 'apiVersion', emptyString, 'v1');
}

function defaultHTTPGet(holder: Obj | undefined): void {
  const get = holder === undefined ? undefined : child(holder, 'httpGet');
  if (get === undefined) return;
  setIf(get, 'path', emptyString, '/');
  setIf(get, 'scheme', emptyString, 'HTTP');
}

function defaultProbe(probe: Obj | undefined): void {
  if (probe === undefined) return;
  setIf(probe, 'timeoutSeconds', zeroInt, 1);
  setIf(probe, 'periodSeconds', zeroInt, 10);
  setIf(probe, 'successThreshold', zeroInt, 1);
  setIf(probe, 'failureThreshold', zeroInt, 3);
  defaultHTTPGet(probe);
}

/** The parts shared by containers, init containers and ephemeral containers. */
function defaultContainerCommon(c: Obj): void {
  eachElement(c, 'ports', (p) => setIf(p, 'protocol', emptyString, 'TCP'));
  eachElement(c, 'env', (e) => defaultFieldRef(child(e, 'valueFrom')));
  const resources = child(c, 'resources');
  defaultResourceList(resources, 'limits');
  defaultResourceList(resources, 'requests');
  defaultProbe(child(c, 'livenessProbe'));
  defaultProbe(child(c, 'readinessProbe'));
  defaultProbe(child(c, 'startupProbe'));
  const lifecycle = child(c, 'lifecycle');
  if (lifecycle !== undefined) {
    defaultHTTPGet(child(lifecycle, 'postStart'));
    defaultHTTPGet(child(lifecycle, 'preStop'));
  }
}

/** Kubernetes SetDefaults_Container (termination message; pull policy only if still empty). */
function defaultContainerKube(c: Obj): void {
  if (emptyString(c['imagePullPolicy'])) {
    c['imagePullPolicy'] = imageTag(typeof c['image'] === 'string' ? c['image'] : '') === 'latest' ? 'Always' : 'IfNotPresent';
  }
  setIf(c, 'terminationMessagePath', emptyString, '/dev/termination-log');
  setIf(c, 'terminationMessagePolicy', emptyString, 'File');
}

// Docker reference grammar (distribution/reference), enough to find the tag the way ParseImageName does.
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[(?:[a-fA-F0-9:]+)\\])(?::[0-9]+)?`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*';
const REFERENCE = new RegExp(
  `^((?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*)(?::([\\w][\\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$`,
);

/**
 * The tag Kubernetes' ParseImageName reports: the explicit tag, "latest" when there is neither tag nor
 * digest, "" when only a digest is given or the reference does not parse.
 */
export function imageTag(image: string): string {
  const m = REFERENCE.exec(image);
  if (m === null || (m[1] ?? '').length > 255 || /^[a-f0-9]{64}$/.test(image)) return '';
  if (m[2] !== undefined) return m[2];
  return m[3] !== undefined ? '' : 'latest';
}

function defaultVolumes(spec: Obj): void {
  const sourceKeys = goStructFieldNames('Volume').filter((k) => k !== 'name');
  eachElement(spec, 'volumes', (v) => {
    if (sourceKeys.every((k) => nil(v[k]))) v['emptyDir'] = {};
    const hostPath = child(v, 'hostPath');
    if (hostPath !== undefined) setIf(hostPath, 'type', nil, '');
    for (const kind of ['secret', 'configMap', 'downwardAPI', 'projected']) {
      const src = child(v, kind);
      if (src !== undefined) setIf(src, 'defaultMode', nil, 420);
    }
    const downward = child(v, 'downwardAPI');
    if (downward !== undefined) eachElement(downward, 'items', (item) => defaultFieldRef(item));
    const projected = child(v, 'projected');
    if (projected !== undefined) {
      eachElement(projected, 'sources', (s) => {
        const d = child(s, 'downwardAPI');
        if (d !== undefined) eachElement(d, 'items', (item) => defaultFieldRef(item));
        const token = child(s, 'serviceAccountToken');
        if (token !== undefined) setIf(token, 'expirationSeconds', nil, 3600);
      });
    }
  });
}

function defaultHostNetworkPorts(spec: Obj, key: string): void {
  eachElement(spec, key, (c) => {
    eachElement(c, 'ports', (p) => {
      if (zeroInt(p['hostPort'])) p['hostPort'] = p['containerPort'] ?? 0;
    });
  });
}

/** Applies Kruise's pod-spec defaults (SetDefaultPodSpec) to a mutable PodSpec-shaped object. */
function defaultPodSpecInPlace(spec: Obj, opts: TemplateDefaultOptions): void {
  setIf(spec, 'dnsPolicy', emptyString, 'ClusterFirst');
  setIf(spec, 'restartPolicy', emptyString, 'Always');
  setIf(spec, 'securityContext', nil, {});
  setIf(spec, 'terminationGracePeriodSeconds', nil, 30);
  setIf(spec, 'schedulerName', emptyString, 'default-scheduler');
  if (opts.defaultHostNetworkHostPorts === true && spec['hostNetwork'] === true) {
    defaultHostNetworkPorts(spec, 'containers');
    defaultHostNetworkPorts(spec, 'initContainers');
  }
  defaultVolumes(spec);
  eachElement(spec, 'initContainers', (c) => {
    defaultContainerKube(c);
    defaultContainerCommon(c);
  });
  eachElement(spec, 'containers', (c) => {
    setIf(c, 'imagePullPolicy', emptyString, 'Always');
    defaultContainerKube(c);
    defaultContainerCommon(c);
  });
  eachElement(spec, 'ephemeralContainers', defaultContainerCommon);
  defaultResourceList(spec, 'overhead');
}

/** A deep, mutable copy of a JSON value. */
function cloneJson<T>(v: T): T {
  return structuredClone(v);
}

/**
 * The pod template with Kruise's pod-template defaults applied (docs/features.md#admission; Kruise apis/apps/defaults/v1alpha1.go). Pure: returns a new object and
 * never mutates its input (which may be a frozen cache object).
 */
export function defaultPodTemplate(template: PodTemplateSpec, opts: TemplateDefaultOptions = {}): PodTemplateSpec {
  // A null template decodes (in Go) as the zero PodTemplateSpec, which then gets the defaults.
  const copy: PodTemplateSpec = template === null ? { spec: { containers: [] } } : cloneJson(template);
  if (template === null) delete (copy as { spec?: unknown }).spec;
  const holder: Obj = { template: copy };
  const t = child(holder, 'template');
  if (t === undefined) return copy;
  if (nil(t['spec'])) t['spec'] = {};
  const spec = child(t, 'spec');
  if (spec !== undefined) defaultPodSpecInPlace(spec, opts);
  return copy;
}

/** Kruise's defaults of a volume claim template: status.phase Pending, resource quantities rounded up to milli. */
export function defaultVolumeClaimTemplate(pvc: PersistentVolumeClaim): PersistentVolumeClaim {
  const copy = cloneJson(pvc);
  const holder: Obj = { pvc: copy };
  const p = child(holder, 'pvc');
  if (p === undefined) return copy;
  if (nil(p['status'])) p['status'] = {};
  const status = child(p, 'status');
  if (status !== undefined) {
    setIf(status, 'phase', emptyString, 'Pending');
    defaultResourceList(status, 'capacity');
  }
  const resources = child(child(p, 'spec') ?? {}, 'resources');
  defaultResourceList(resources, 'limits');
  defaultResourceList(resources, 'requests');
  return copy;
}

export interface CloneSetDefaultOptions extends TemplateDefaultOptions {
  /** Whether template and volume-claim-template defaults are injected (Kruise: on create, and on update
   *  when the template changed, unless gate TemplateNoDefaults). Default true. */
  readonly injectTemplateDefaults?: boolean;
}

/** Kruise's v1alpha1 CloneSet defaults (SetDefaultsCloneSet). Pure. */
export function setCloneSetDefaults(cs: CloneSet, opts: CloneSetDefaultOptions = {}): CloneSet {
  const spec = cs.spec;
  const inject = opts.injectTemplateDefaults ?? true;
  const us = spec.updateStrategy ?? {};
  const type = us.type === undefined || (us.type as string) === '' ? 'ReCreate' : us.type;
  const inPlace = type === 'InPlaceIfPossible' || type === 'InPlaceOnly';
  const updateStrategy: CloneSetUpdateStrategy = {
    ...us,
    type,
    ...(inPlace && us.inPlaceUpdateStrategy === undefined ? { inPlaceUpdateStrategy: {} } : {}),
    partition: us.partition ?? 0,
    maxUnavailable: us.maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE,
    maxSurge: us.maxSurge ?? 0,
  };
  const newSpec: CloneSetSpec = {
    ...spec,
    replicas: spec.replicas ?? 1,
    revisionHistoryLimit: spec.revisionHistoryLimit ?? DEFAULT_REVISION_HISTORY_LIMIT,
    template: inject ? defaultPodTemplate(spec.template, opts) : spec.template,
    ...(inject && spec.volumeClaimTemplates !== undefined ? { volumeClaimTemplates: spec.volumeClaimTemplates.map((p) => defaultVolumeClaimTemplate(p)) } : {}),
    updateStrategy,
  };
  return { ...cs, spec: newSpec };
}
