// Every client's writes as the API server counts them (apiserver_request_total), by resource and verb: who writes
// how much per pod during a scale-up. The controller's own counts come from its metrics (controller-process.ts);
// these add the scheduler's bindings and Events, kwok's status patches (a kubelet's), the garbage collector's
// deletes. A stage that kwok plays twice per pod shows here as pods/status PATCH climbing past 2 per pod
// (docs/performance.md, the fifth 100 000-pod attempt).
import { loadKubeConfig } from '../src/kube/kubeconfig.ts';
import { Transport } from '../src/kube/transport.ts';

const WRITE_VERBS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'APPLY']);
/** The suffix of a key counting the requests refused with 409 Conflict (apiServerWrites, writesPerPod). */
const REFUSED = ' 409';

/**
 * apiserver_request_total of the writes in a /metrics body, summed over scopes, keyed "resource[/subresource] VERB"
 * (prefixed with the API group outside the core group: "apps.kruise.io/clonesets"). Requests refused with 409
 * Conflict are keyed apart ("pods/status PATCH 409"): they cost the API server a read and a merge but no write and
 * no watch event, and kwok's stale stage plays end that way (config/kwok/pod-stages.yaml). Every other code is
 * summed into the key.
 */
export function apiServerWrites(body: string): Map<string, number> {
  const writes = new Map<string, number>();
  for (const m of body.matchAll(/^apiserver_request_total\{([^}]*)\} (\d+(?:\.\d+)?(?:e\+?\d+)?)$/gm)) {
    const labels = new Map<string, string>();
    for (const l of (m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)) labels.set(l[1] ?? '', l[2] ?? '');
    const verb = labels.get('verb') ?? '';
    const resource = labels.get('resource') ?? '';
    if (!WRITE_VERBS.has(verb) || resource === '') continue;
    const group = labels.get('group') ?? '';
    const sub = labels.get('subresource') ?? '';
    const code = labels.get('code') === '409' ? REFUSED : '';
    const key = `${group === '' ? '' : `${group}/`}${resource}${sub === '' ? '' : `/${sub}`} ${verb}${code}`;
    writes.set(key, (writes.get(key) ?? 0) + Number(m[2]));
  }
  return writes;
}

/** The API server's write counters now (GET /metrics with the kubeconfig's credentials: the local cluster's admin). */
export async function scrapeApiServerWrites(kubeconfig: string): Promise<Map<string, number>> {
  const transport = await Transport.create(loadKubeConfig(kubeconfig), 'cloneset-bench');
  try {
    const res = await transport.request('GET', '/metrics', {});
    if (res.status !== 200) throw new Error(`GET /metrics of the API server: HTTP ${res.status}`);
    return apiServerWrites(res.body);
  } finally {
    transport.close();
  }
}

/**
 * Writes per pod, the largest first: "pods/status PATCH 2.02, pods POST 1.00, …", then the requests refused with
 * 409 apart (not in the total): "…, refused (409) 1.20 (pods/status PATCH 1.20)". Background writes (node leases,
 * the components' own objects) fall below 0.01 per pod in any run worth reading and are left out.
 */
export function writesPerPod(grown: ReadonlyMap<string, number>, pods: number): string {
  const rows = [...grown.entries()]
    .map(([key, n]) => [key, n / pods] as const)
    .filter(([, perPod]) => perPod >= 0.01)
    .sort((a, b) => b[1] - a[1]);
  const list = (of: readonly (readonly [string, number])[]): string => of.map(([key, perPod]) => `${key} ${perPod.toFixed(2)}`).join(', ');
  const sum = (of: readonly (readonly [string, number])[]): number => of.reduce((total, [, perPod]) => total + perPod, 0);
  const written = rows.filter(([key]) => !key.endsWith(REFUSED));
  const refused = rows.filter(([key]) => key.endsWith(REFUSED)).map(([key, perPod]) => [key.slice(0, -REFUSED.length), perPod] as const);
  const text = `${sum(written).toFixed(2)} (${list(written)})`;
  return refused.length === 0 ? text : `${text}, refused (409) ${sum(refused).toFixed(2)} (${list(refused)})`;
}
