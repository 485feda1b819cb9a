// Which REST resource a request is about, the well-known ones the controller uses, and their URL paths.

export interface ResourceRef {
  /** API group; '' for the core group (served under /api). */
  readonly group: string;
  readonly version: string;
  /** Lower-case plural as in the URL, e.g. "pods". */
  readonly plural: string;
  readonly namespaced: boolean;
}

export const PODS: ResourceRef = { group: '', version: 'v1', plural: 'pods', namespaced: true };
export const PVCS: ResourceRef = { group: '', version: 'v1', plural: 'persistentvolumeclaims', namespaced: true };
export const STORAGE_CLASSES: ResourceRef = { group: 'storage.k8s.io', version: 'v1', plural: 'storageclasses', namespaced: false };
export const CONFIGMAPS: ResourceRef = { group: '', version: 'v1', plural: 'configmaps', namespaced: true };
export const EVENTS: ResourceRef = { group: '', version: 'v1', plural: 'events', namespaced: true };
export const NODES: ResourceRef = { group: '', version: 'v1', plural: 'nodes', namespaced: false };
export const NAMESPACES: ResourceRef = { group: '', version: 'v1', plural: 'namespaces', namespaced: false };
export const CONTROLLER_REVISIONS: ResourceRef = {
  group: 'apps',
  version: 'v1',
  plural: 'controllerrevisions',
  namespaced: true,
};
export const CLONESETS: ResourceRef = { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'clonesets', namespaced: true };
/** The storage version: the controller watches it (no conversion on the API server) and writes status through it. */
export const CLONESETS_V1BETA1: ResourceRef = { ...CLONESETS, version: 'v1beta1' };
export const LEASES: ResourceRef = { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true };
export const CRDS: ResourceRef = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  plural: 'customresourcedefinitions',
  namespaced: false,
};

/** "v1" or "apps/v1": the apiVersion of objects of this resource. */
export function apiVersionOf(r: ResourceRef): string {
  return r.group === '' ? r.version : `${r.group}/${r.version}`;
}

/**
 * URL path of a collection (no name), an object, or an object's subresource. A namespaced resource with
 * `ns` undefined means "all namespaces", which only makes sense for list and watch.
 */
export function resourcePath(r: ResourceRef, ns: string | undefined, name?: string, subresource?: string): string {
  let path = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  if (r.namespaced && ns !== undefined) path += `/namespaces/${encodeURIComponent(ns)}`;
  path += `/${r.plural}`;
  if (name !== undefined) {
    if (name === '') throw new Error(`empty object name for ${r.plural}`);
    if (r.namespaced && ns === undefined) throw new Error(`${r.plural}/${name}: a namespace is required`);
    path += `/${encodeURIComponent(name)}`;
    if (subresource !== undefined) path += `/${subresource}`;
  }
  return path;
}
