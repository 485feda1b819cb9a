// The LeasePort of leader election, on the Kubernetes client (coordination.k8s.io/v1 Leases).
import type { Lease, LeasePort, LeaseWriteResult } from './leader-election.ts';
import { isAlreadyExists, isConflict, isNotFound } from '../kube/api-error.ts';
import type { KubeClient } from '../kube/client.ts';
import { LEASES } from '../kube/resources.ts';

async function write(op: () => Promise<Lease>): Promise<LeaseWriteResult> {
  try {
    return { kind: 'ok', lease: await op() };
  } catch (e) {
    return isConflict(e) || isAlreadyExists(e) ? { kind: 'conflict' } : { kind: 'error', error: e };
  }
}

export function apiLeasePort(client: KubeClient): LeasePort {
  return {
    async get(namespace, name) {
      try {
        return { kind: 'found', lease: await client.get<Lease>(LEASES, namespace, name) };
      } catch (e) {
        return isNotFound(e) ? { kind: 'notFound' } : { kind: 'error', error: e };
      }
    },
    create: (namespace, lease) => write(() => client.create<Lease>(LEASES, namespace, lease)),
    update: (namespace, name, lease) => write(() => client.update<Lease>(LEASES, namespace, name, lease)),
  };
}
