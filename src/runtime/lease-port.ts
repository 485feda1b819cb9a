// The LeasePort of leader election, on the Kubernetes client (coordination.k8s.io/v1 Leases). Give it a client of
// its own (own rate limiter and connections): queued behind pod creates, renewals would miss the renew deadline.
// Each call is bound to its signal, so a timed-out call has its socket destroyed instead of lingering.
// The watch (a standby's view of renewals as they happen) is one Lease: `fieldSelector=metadata.name=<name>`,
// which RBAC authorises with the `watch` verb on leases (config/rbac/leader-election-role.yaml).
import type { Lease, LeasePort, LeaseWriteResult } from './leader-election.ts';
import { apiErrorFromStatus, isAlreadyExists, isConflict, isNotFound } from '../kube/api-error.ts';
import type { KubeClient } from '../kube/client.ts';
import { LEASES } from '../kube/resources.ts';

/** The server ends each Lease watch after this (client-go's reflectors pick 5–10 min); the elector resumes it. */
const WATCH_TIMEOUT_SECONDS = 300;

async function write(op: () => Promise<Lease>): Promise<LeaseWriteResult> {
  try {
    return { kind: 'ok', lease: await op() };
  } catch (e) {
    return isConflict(e) || isAlreadyExists(e) ? { kind: 'conflict' } : { kind: 'error', error: e };
  }
}

export function apiLeasePort(client: KubeClient): LeasePort {
  const bound = (signal: AbortSignal | undefined): KubeClient => (signal === undefined ? client : client.fenced(signal));
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
    watch: (namespace, name, resourceVersion, onEvent, signal) =>
      client.watch(
        LEASES,
        namespace,
        { resourceVersion, timeoutSeconds: WATCH_TIMEOUT_SECONDS, allowWatchBookmarks: true, fieldSelector: `metadata.name=${name}` },
        (e) => {
          const rv = e.type === 'ERROR' ? undefined : e.object.metadata?.resourceVersion;
          switch (e.type) {
            case 'ADDED':
            case 'MODIFIED':
              onEvent({ kind: 'changed', lease: e.object as Lease });
              return;
            case 'DELETED':
              onEvent(rv === undefined ? { kind: 'deleted' } : { kind: 'deleted', resourceVersion: rv });
              return;
            case 'BOOKMARK':
              if (rv !== undefined) onEvent({ kind: 'bookmark', resourceVersion: rv });
              return;
            case 'ERROR':
              // e.g. 410 Expired: the elector GETs the Lease again and watches from there.
              throw apiErrorFromStatus(e.object, 500, { request: `WATCH leases ${namespace}/${name}` });
          }
        },
        signal,
      ),
  };
}
