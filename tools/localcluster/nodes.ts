// The fake Nodes kwok manages (annotated kwok.x-k8s.io/node=fake): no taints, a large allocatable (cpu 1000,
// memory 4Ti, pods 10000), spread over three zones; created through the API server, then waited for Ready.
import type { HttpResponse } from './http.ts';
import { isJsonOk, waitFor } from './readiness.ts';

export const NODE_ANNOTATION = 'kwok.x-k8s.io/node';
export const DEFAULT_NODES = 3;

/** An admin request to the API server. */
export type ApiRequest = (path: string, o?: { method?: string; body?: unknown }) => Promise<HttpResponse>;

interface NodeList {
  items?: { metadata?: { name?: string }; status?: { conditions?: { type?: string; status?: string }[] } }[];
}

export function nodeNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `kwok-node-${String(i)}`);
}

function fakeNode(name: string, index: number): unknown {
  const resources = { cpu: '1000', memory: '4Ti', pods: '10000', 'ephemeral-storage': '10Ti' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'node.alpha.kubernetes.io/ttl': '0', [NODE_ANNOTATION]: 'fake' },
      labels: {
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/os': 'linux',
        'kubernetes.io/hostname': name,
        'topology.kubernetes.io/zone': `zone-${String.fromCharCode(97 + (index % 3))}`,
        type: 'kwok',
      },
    },
    spec: {},
    status: {
      allocatable: resources,
      capacity: resources,
      nodeInfo: { architecture: 'amd64', operatingSystem: 'linux', kubeletVersion: 'fake', kubeProxyVersion: 'fake' },
      phase: 'Running',
    },
  };
}

/** Creates the nodes (existing ones are kept) and waits until every one is Ready (kwok keeps them so). */
export async function createFakeNodes(api: ApiRequest, names: readonly string[], timeoutMs: number, died: Promise<never>): Promise<void> {
  for (const [i, name] of names.entries()) {
    const r = await api('/api/v1/nodes', { method: 'POST', body: fakeNode(name, i) });
    if (!isJsonOk(r) && r.status !== 409) throw new Error(`creating node ${name}: HTTP ${String(r.status)} ${r.body}`);
  }
  await waitFor(
    'nodes Ready',
    timeoutMs,
    async () => {
      const r = await api('/api/v1/nodes');
      if (!isJsonOk(r)) return false;
      const list = JSON.parse(r.body) as NodeList;
      const ready = new Set(
        (list.items ?? []).filter((n) => (n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')).map((n) => n.metadata?.name ?? ''),
      );
      return names.every((n) => ready.has(n));
    },
    died,
  );
}
