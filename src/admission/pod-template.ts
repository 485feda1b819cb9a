// The part of Kubernetes' ValidatePodTemplateSpec (pkg/apis/core/validation/validation.go in kubernetes) that
// Kruise's CloneSet validation runs on `spec.template`, with each volume claim template added as a PVC volume
// named after it (pkg/webhook/cloneset/validating/validation.go): template labels and annotations, volumes,
// containers and init containers (names, images, ports, env, resources, volume mounts, probes), pull and
// termination-message policies, dnsPolicy, nodeSelector, service account and host names, tolerations,
// topology spread constraints. Wording and field paths are Kubernetes'.
//
// Deliberate difference: fields that Kruise's pod-template defaulting always fills (dnsPolicy, restartPolicy,
// imagePullPolicy, terminationMessagePolicy, port protocol) are not *required* here, so that CloneSets stored
// before our webhook existed (without those defaults) can still be scaled and updated. Values that are set
// must still be valid. Pure; expects input that passed decode.ts (JSON types are those of the Go structs).
import { parseQuantity, QuantityParseError, type Quantity } from '../api/go-quantity.ts';
import { validateLabelKey, validateLabelValue } from '../kube/selectors.ts';
import { child, duplicate, forbidden, index, invalid, key, notSupported, required, tooLong, type FieldError } from './field-errors.ts';

type Obj = Readonly<Record<string, unknown>>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const objAt = (o: Obj | undefined, k: string): Obj | undefined => {
  const v = o?.[k];
  return isObj(v) ? v : undefined;
};
const listAt = (o: Obj | undefined, k: string): readonly unknown[] => {
  const v = o?.[k];
  return Array.isArray(v) ? v : [];
};
const strAt = (o: Obj | undefined, k: string): string => {
  const v = o?.[k];
  return typeof v === 'string' ? v : '';
};
const numAt = (o: Obj | undefined, k: string): number | undefined => {
  const v = o?.[k];
  return typeof v === 'number' ? v : undefined;
};

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const ENV_VAR_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const ENV_VAR_NAME_MSG =
  "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')";
const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/** IsDNS1123Label: problems with a name, empty when valid. */
export function dns1123LabelErrors(name: string): string[] {
  const errs: string[] = [];
  if (name.length > 63) errs.push('must be no more than 63 characters');
  if (!DNS1123_LABEL.test(name)) errs.push(DNS1123_LABEL_MSG);
  return errs;
}

/** IsValidPortName (IANA_SVC_NAME). */
function portNameErrors(name: string): string[] {
  const errs: string[] = [];
  if (name.length < 1 || name.length > 15) errs.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(name)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (name.includes('--')) errs.push('must not contain consecutive hyphens');
  if (!/[a-z]/.test(name)) errs.push('must contain at least one letter (a-z)');
  if (name.startsWith('-') || name.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}

const PORT_RANGE_MSG = 'must be between 1 and 65535, inclusive';
const validPortNum = (n: number): boolean => Number.isInteger(n) && n >= 1 && n <= 65535;

function nonNegative(o: Obj | undefined, k: string, path: string, errs: FieldError[]): void {
  const v = numAt(o, k);
  if (v !== undefined && v < 0) errs.push(invalid(child(path, k), v, 'must be greater than or equal to 0'));
}

/** ValidateLabels + ValidateAnnotations of the template's metadata. */
function validateMeta(meta: Obj | undefined, path: string, errs: FieldError[]): void {
  const labels = objAt(meta, 'labels');
  const labelsPath = child(path, 'labels');
  for (const [k, v] of Object.entries(labels ?? {})) {
    for (const msg of validateLabelKey(k)) errs.push(invalid(labelsPath, k, msg));
    if (typeof v === 'string') for (const msg of validateLabelValue(v)) errs.push(invalid(labelsPath, v, msg));
  }
  const annotations = objAt(meta, 'annotations');
  const annotationsPath = child(path, 'annotations');
  let size = 0;
  for (const [k, v] of Object.entries(annotations ?? {})) {
    for (const msg of validateLabelKey(k.toLowerCase())) errs.push(invalid(annotationsPath, k, msg));
    size += k.length + (typeof v === 'string' ? v.length : 0);
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(tooLong(annotationsPath, '', TOTAL_ANNOTATION_SIZE_LIMIT));
}

/** The volume source keys of core/v1 VolumeSource. */
const VOLUME_SOURCES = [
  'hostPath',
  'emptyDir',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'persistentVolumeClaim',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'downwardAPI',
  'fc',
  'azureFile',
  'configMap',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'projected',
  'portworxVolume',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
];

/** Volumes (the template's plus one per volume claim template); returns the set of volume names. */
function validateVolumes(volumes: readonly unknown[], path: string, errs: FieldError[]): Set<string> {
  const names = new Set<string>();
  volumes.forEach((v, i) => {
    const vp = index(path, i);
    const vol = isObj(v) ? v : {};
    const name = strAt(vol, 'name');
    if (name === '') errs.push(required(child(vp, 'name'), ''));
    else for (const msg of dns1123LabelErrors(name)) errs.push(invalid(child(vp, 'name'), name, msg));
    if (name !== '' && names.has(name)) errs.push(duplicate(child(vp, 'name'), name));
    names.add(name);
    const sources = VOLUME_SOURCES.filter((s) => vol[s] !== undefined && vol[s] !== null);
    if (sources.length === 0) errs.push(required(vp, 'must specify a volume type'));
    else if (sources.length > 1) errs.push(forbidden(vp, 'may not specify more than 1 volume type'));
    // The one required field of the common sources (validateConfigMapVolumeSource & co.).
    for (const [source, field] of [
      ['persistentVolumeClaim', 'claimName'],
      ['configMap', 'name'],
      ['secret', 'secretName'],
      ['hostPath', 'path'],
    ] as const) {
      const src = objAt(vol, source);
      if (src !== undefined && strAt(src, field) === '') errs.push(required(child(vp, source, field), ''));
    }
  });
  return names;
}

function validatePort(v: unknown, path: string, errs: FieldError[]): void {
  if (typeof v === 'number') {
    if (!validPortNum(v)) errs.push(invalid(path, v, PORT_RANGE_MSG));
  } else if (typeof v === 'string') {
    for (const msg of portNameErrors(v)) errs.push(invalid(path, v, msg));
  } else {
    errs.push(required(path, 'set a port number or a named container port'));
  }
}

const HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc'];

function validateProbe(probe: Obj | undefined, path: string, mustSucceedOnce: boolean, errs: FieldError[]): void {
  if (probe === undefined) return;
  const handlers = HANDLERS.filter((h) => probe[h] !== undefined && probe[h] !== null);
  if (handlers.length === 0) errs.push(required(path, 'must specify a handler type'));
  else if (handlers.length > 1) errs.push(forbidden(path, 'may not specify more than 1 handler type'));
  for (const k of ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold']) nonNegative(probe, k, path, errs);
  const success = numAt(probe, 'successThreshold');
  if (mustSucceedOnce && success !== undefined && success !== 1 && success >= 0) errs.push(invalid(child(path, 'successThreshold'), success, 'must be 1'));
  const httpGet = objAt(probe, 'httpGet');
  if (httpGet !== undefined) {
    validatePort(httpGet['port'], child(path, 'httpGet', 'port'), errs);
    const scheme = strAt(httpGet, 'scheme');
    if (scheme !== '' && scheme !== 'HTTP' && scheme !== 'HTTPS') errs.push(notSupported(child(path, 'httpGet', 'scheme'), scheme, ['HTTP', 'HTTPS']));
  }
  const tcp = objAt(probe, 'tcpSocket');
  if (tcp !== undefined) validatePort(tcp['port'], child(path, 'tcpSocket', 'port'), errs);
  const exec = objAt(probe, 'exec');
  if (exec !== undefined && listAt(exec, 'command').length === 0) errs.push(required(child(path, 'exec', 'command'), ''));
}

/** Exact comparison of two quantities (value = unscaled × 10^scale). */
function compareQuantity(a: Quantity, b: Quantity): number {
  const s = Math.min(a.scale, b.scale);
  const av = a.unscaled * 10n ** BigInt(a.scale - s);
  const bv = b.unscaled * 10n ** BigInt(b.scale - s);
  return av < bv ? -1 : av > bv ? 1 : 0;
}

function quantities(list: Obj | undefined, path: string, errs: FieldError[]): Map<string, { q: Quantity; text: string }> {
  const out = new Map<string, { q: Quantity; text: string }>();
  for (const [name, raw] of Object.entries(list ?? {})) {
    const text = String(raw);
    try {
      const q = parseQuantity(text);
      if (q.unscaled < 0n) errs.push(invalid(key(path, name), text, 'must be greater than or equal to 0'));
      out.set(name, { q, text });
    } catch (e) {
      if (!(e instanceof QuantityParseError)) throw e;
      errs.push(invalid(key(path, name), text, "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"));
    }
  }
  return out;
}

function validateResources(res: Obj | undefined, path: string, errs: FieldError[]): void {
  if (res === undefined) return;
  const limits = quantities(objAt(res, 'limits'), child(path, 'limits'), errs);
  const requests = quantities(objAt(res, 'requests'), child(path, 'requests'), errs);
  for (const [name, req] of requests) {
    const limit = limits.get(name);
    if (limit !== undefined && compareQuantity(req.q, limit.q) > 0) {
      errs.push(invalid(key(child(path, 'requests'), name), req.text, `must be less than or equal to ${name} limit of ${limit.text}`));
    }
  }
}

function validateEnv(env: readonly unknown[], path: string, errs: FieldError[]): void {
  env.forEach((e, i) => {
    const ep = index(path, i);
    const ev = isObj(e) ? e : {};
    const name = strAt(ev, 'name');
    if (name === '') errs.push(required(child(ep, 'name'), ''));
    else if (!ENV_VAR_NAME.test(name)) errs.push(invalid(child(ep, 'name'), name, ENV_VAR_NAME_MSG));
    const from = objAt(ev, 'valueFrom');
    if (from !== undefined) {
      const refs = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef'].filter((r) => from[r] !== undefined && from[r] !== null);
      if (refs.length === 0) errs.push(invalid(child(ep, 'valueFrom'), '', 'must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`'));
      else if (refs.length > 1) errs.push(invalid(child(ep, 'valueFrom'), '', 'may not have more than one field specified at a time'));
      if (strAt(ev, 'value') !== '') errs.push(invalid(child(ep, 'valueFrom'), '', 'may not be specified when `value` is not empty'));
      const fieldRef = objAt(from, 'fieldRef');
      if (fieldRef !== undefined && strAt(fieldRef, 'fieldPath') === '') errs.push(required(child(ep, 'valueFrom', 'fieldRef', 'fieldPath'), ''));
      for (const ref of ['configMapKeyRef', 'secretKeyRef']) {
        const r = objAt(from, ref);
        if (r === undefined) continue;
        if (strAt(r, 'key') === '') errs.push(required(child(ep, 'valueFrom', ref, 'key'), ''));
        if (strAt(r, 'name') === '') errs.push(required(child(ep, 'valueFrom', ref, 'name'), ''));
      }
    }
  });
}

interface ContainerContext {
  readonly volumes: ReadonlySet<string>;
  readonly names: Set<string>;
  readonly hostNetwork: boolean;
  readonly init: boolean;
}

function validateContainer(c: Obj, path: string, ctx: ContainerContext, errs: FieldError[]): void {
  const name = strAt(c, 'name');
  if (name === '') errs.push(required(child(path, 'name'), ''));
  else for (const msg of dns1123LabelErrors(name)) errs.push(invalid(child(path, 'name'), name, msg));
  if (name !== '' && ctx.names.has(name)) errs.push(duplicate(child(path, 'name'), name));
  ctx.names.add(name);

  const image = strAt(c, 'image');
  if (image === '') errs.push(required(child(path, 'image'), ''));
  else if (image.trim() !== image) errs.push(invalid(child(path, 'image'), image, 'must not have leading or trailing whitespace'));

  const pull = strAt(c, 'imagePullPolicy');
  if (pull !== '' && !['Always', 'IfNotPresent', 'Never'].includes(pull)) {
    errs.push(notSupported(child(path, 'imagePullPolicy'), pull, ['Always', 'IfNotPresent', 'Never']));
  }
  const tmp = strAt(c, 'terminationMessagePolicy');
  if (tmp !== '' && tmp !== 'File' && tmp !== 'FallbackToLogsOnError') {
    errs.push(notSupported(child(path, 'terminationMessagePolicy'), tmp, ['File', 'FallbackToLogsOnError']));
  }

  const portNames = new Set<string>();
  listAt(c, 'ports').forEach((p, i) => {
    const pp = index(child(path, 'ports'), i);
    const port = isObj(p) ? p : {};
    const pname = strAt(port, 'name');
    if (pname !== '') {
      for (const msg of portNameErrors(pname)) errs.push(invalid(child(pp, 'name'), pname, msg));
      if (portNames.has(pname)) errs.push(duplicate(child(pp, 'name'), pname));
      portNames.add(pname);
    }
    const cp = numAt(port, 'containerPort') ?? 0;
    if (cp === 0) errs.push(required(child(pp, 'containerPort'), ''));
    else if (!validPortNum(cp)) errs.push(invalid(child(pp, 'containerPort'), cp, PORT_RANGE_MSG));
    const hp = numAt(port, 'hostPort') ?? 0;
    if (hp !== 0 && !validPortNum(hp)) errs.push(invalid(child(pp, 'hostPort'), hp, PORT_RANGE_MSG));
    if (ctx.hostNetwork && hp !== 0 && hp !== cp) {
      errs.push(invalid(child(pp, 'hostPort'), hp, '`hostPort` must match `containerPort` when `hostNetwork` is true'));
    }
    const proto = strAt(port, 'protocol');
    if (proto !== '' && !['TCP', 'UDP', 'SCTP'].includes(proto)) errs.push(notSupported(child(pp, 'protocol'), proto, ['SCTP', 'TCP', 'UDP']));
  });

  validateEnv(listAt(c, 'env'), child(path, 'env'), errs);
  validateResources(objAt(c, 'resources'), child(path, 'resources'), errs);

  const mountPaths = new Set<string>();
  listAt(c, 'volumeMounts').forEach((m, i) => {
    const mp = index(child(path, 'volumeMounts'), i);
    const mount = isObj(m) ? m : {};
    const vname = strAt(mount, 'name');
    if (vname === '') errs.push(required(child(mp, 'name'), ''));
    else if (!ctx.volumes.has(vname)) {
      errs.push(invalid(child(mp, 'name'), vname, 'not found: add a volume of that name to spec.template.spec.volumes or a volumeClaimTemplate'));
    }
    const mpath = strAt(mount, 'mountPath');
    if (mpath === '') errs.push(required(child(mp, 'mountPath'), ''));
    else if (mountPaths.has(mpath)) errs.push(invalid(child(mp, 'mountPath'), mpath, 'must be unique'));
    mountPaths.add(mpath);
  });

  // Init containers may only have probes and lifecycle hooks when they are sidecars (restartPolicy Always).
  if (ctx.init && c['restartPolicy'] !== 'Always') {
    for (const k of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe']) {
      if (c[k] !== undefined && c[k] !== null) errs.push(forbidden(child(path, k), 'may not be set for init containers without restartPolicy=Always'));
    }
    return;
  }
  validateProbe(objAt(c, 'livenessProbe'), child(path, 'livenessProbe'), true, errs);
  validateProbe(objAt(c, 'readinessProbe'), child(path, 'readinessProbe'), false, errs);
  validateProbe(objAt(c, 'startupProbe'), child(path, 'startupProbe'), true, errs);
}

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/** Pod-level fields: nodeSelector, service account, hostname/subdomain, tolerations, topology spread constraints. */
function validatePodLevel(spec: Obj, sp: string, errs: FieldError[]): void {
  const nodeSelectorPath = child(sp, 'nodeSelector');
  for (const [k, v] of Object.entries(objAt(spec, 'nodeSelector') ?? {})) {
    for (const msg of validateLabelKey(k)) errs.push(invalid(nodeSelectorPath, k, msg));
    if (typeof v === 'string') for (const msg of validateLabelValue(v)) errs.push(invalid(nodeSelectorPath, v, msg));
  }
  const sa = strAt(spec, 'serviceAccountName');
  if (sa !== '' && (sa.length > 253 || !DNS1123_SUBDOMAIN.test(sa))) errs.push(invalid(child(sp, 'serviceAccountName'), sa, DNS1123_SUBDOMAIN_MSG));
  for (const k of ['hostname', 'subdomain']) {
    const v = strAt(spec, k);
    if (v !== '') for (const msg of dns1123LabelErrors(v)) errs.push(invalid(child(sp, k), v, msg));
  }
  listAt(spec, 'tolerations').forEach((t, i) => {
    const tp = index(child(sp, 'tolerations'), i);
    const tol = isObj(t) ? t : {};
    const k = strAt(tol, 'key');
    const op = strAt(tol, 'operator');
    if (k !== '') for (const msg of validateLabelKey(k)) errs.push(invalid(child(tp, 'key'), k, msg));
    if (k === '' && op !== 'Exists') {
      errs.push(invalid(child(tp, 'operator'), op, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'));
    }
    if (op === 'Exists' && strAt(tol, 'value') !== '') errs.push(invalid(child(tp, 'operator'), strAt(tol, 'value'), "value must be empty when `operator` is 'Exists'"));
    else if (op !== '' && op !== 'Equal' && op !== 'Exists') errs.push(notSupported(child(tp, 'operator'), op, ['Equal', 'Exists']));
    const effect = strAt(tol, 'effect');
    if (effect !== '' && !['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(effect)) {
      errs.push(notSupported(child(tp, 'effect'), effect, ['NoExecute', 'NoSchedule', 'PreferNoSchedule']));
    }
    if (tol['tolerationSeconds'] !== undefined && tol['tolerationSeconds'] !== null && effect !== 'NoExecute') {
      errs.push(invalid(child(tp, 'effect'), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
  });
  listAt(spec, 'topologySpreadConstraints').forEach((t, i) => {
    const tp = index(child(sp, 'topologySpreadConstraints'), i);
    const c = isObj(t) ? t : {};
    const skew = numAt(c, 'maxSkew') ?? 0;
    if (skew <= 0) errs.push(invalid(child(tp, 'maxSkew'), skew, 'must be greater than zero'));
    if (strAt(c, 'topologyKey') === '') errs.push(required(child(tp, 'topologyKey'), 'can not be empty'));
    const when = strAt(c, 'whenUnsatisfiable');
    if (when === '') errs.push(required(child(tp, 'whenUnsatisfiable'), ''));
    else if (when !== 'DoNotSchedule' && when !== 'ScheduleAnyway') errs.push(notSupported(child(tp, 'whenUnsatisfiable'), when, ['DoNotSchedule', 'ScheduleAnyway']));
  });
}

/**
 * Errors of `template` (at `path`, normally `spec.template`) with the claim templates' names as extra PVC volumes.
 */
export function validatePodTemplate(template: unknown, claimTemplateNames: readonly string[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  const t = isObj(template) ? template : {};
  validateMeta(objAt(t, 'metadata'), child(path, 'metadata'), errs);
  const spec = objAt(t, 'spec') ?? {};
  const sp = child(path, 'spec');
  const mocked = claimTemplateNames.map((name) => ({ name, persistentVolumeClaim: { claimName: name } }));
  const volumes = validateVolumes([...listAt(spec, 'volumes'), ...mocked], child(sp, 'volumes'), errs);

  const dns = strAt(spec, 'dnsPolicy');
  const dnsPolicies = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
  if (dns !== '' && !dnsPolicies.includes(dns)) errs.push(notSupported(child(sp, 'dnsPolicy'), dns, dnsPolicies));
  nonNegative(spec, 'terminationGracePeriodSeconds', sp, errs);
  validatePodLevel(spec, sp, errs);

  const names = new Set<string>();
  const hostNetwork = spec['hostNetwork'] === true;
  listAt(spec, 'initContainers').forEach((c, i) => {
    validateContainer(isObj(c) ? c : {}, index(child(sp, 'initContainers'), i), { volumes, names, hostNetwork, init: true }, errs);
  });
  const containers = listAt(spec, 'containers');
  if (containers.length === 0) errs.push(required(child(sp, 'containers'), 'a CloneSet pod needs at least one container'));
  containers.forEach((c, i) => {
    validateContainer(isObj(c) ? c : {}, index(child(sp, 'containers'), i), { volumes, names, hostNetwork, init: false }, errs);
  });
  return errs;
}
