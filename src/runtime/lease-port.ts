// The LeasePort of leader election, on the Kubernetes client (coordination.k8s.io/v1 Leases). Give it a client of
// its own (own rate limiter and connections): queued behind pod creates, renewals would miss the renew deadline.
// Each call is bound to its signal, so a timed-out call has its socket destroyed instead of lingering.
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
  const bound = (signal: AbortSignal | undefined): KubeClient => (signal === undefined ? client : client.withSignal(signal));
  return {
    async get(namespace, name, signal) {
      try {
        return { kind: 'found', lease: await bound(signal).get<Lease>(LEASES, namespace, name) };
      } catch (e) {
        return isNotFound(e) ? { kind: 'notFound' } : { kind: 'error', error: e };
      }
    },
    create: (namespace, lease, signal) => write(() => bound(signal).create<Lease>(LEASES, namespace, lease)),
    update: (namespace, name, lease, signal) => write(() => bound(signal).update<Lease>(LEASES, namespace, name, lease)),
  };
}
