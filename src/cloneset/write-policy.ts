// The one write policy of the executor (docs/adr/0006-single-write-policy.md): every API write of the CloneSet
// controller goes through the ports returned by `policedPorts`, which
// - refuse the write once the pass is fenced (this replica stops or lost its lease: `signal` aborted);
// - log one info line per write: the CloneSet, the object, the verb, the plan's reason and the outcome;
// - turn every 409 Conflict/AlreadyExists and 422 Invalid into a short requeue of the CloneSet (`onConflict`):
//   such an answer means our cache is behind the server, and whatever the action makes of it, the pass is not
//   "done" — the next one must look again soon, even when no watch event arrives to wake it.
// - settle a pod PATCH whose answer was lost (`settleLostPodWrite`): it may have landed, so the pod is read and its
//   live resourceVersion expected before the error goes up.
// Expectations are otherwise the writers' part (execute-scale.ts, execute-pod.ts, execute-cloneset.ts): names
// before creates and deletes, resourceVersions after every PATCH/PUT.
import type { Logger } from 'pino';
import { ApiError, RequestAbortedError, errorText, isConflict, isInvalid, isAlreadyExists, isOutcomeUnknown } from '../kube/api-error.ts';
import type { Ports } from './ports.ts';

/** How soon a CloneSet whose write met a 409/422 is looked at again. */
export const CONFLICT_REQUEUE_MS = 500;

export interface WriteContext {
  /** The CloneSet's key (namespace/name). */
  readonly cloneSet: string;
  readonly logger: Logger;
  /** Why the plan makes this write (logged with it). */
  readonly reason: string;
  readonly signal?: AbortSignal | undefined;
  /** A write met 409/422: the CloneSet is requeued shortly. */
  readonly onConflict: () => void;
  /** The cache must show pod `uid` at `rv` or newer before the next pass plans (the RV expectations). */
  readonly expectPodVersion?: ((uid: string, rv: string) => void) | undefined;
}

/** `ports` with the write policy applied to every write (reads pass through). */
export function policedPorts(ports: Ports, ctx: WriteContext): Ports {
  const w = <T>(verb: string, object: string, send: () => Promise<T>): Promise<T> => write(ctx, verb, object, send);
  const { pods, pvcs, revisions, cloneSets, imagePullJobs } = ports;
  const settled = <T>(ns: string, name: string, sent: Promise<T>): Promise<T> => settleLostPodWrite(ports, ctx, ns, name, sent);
  return {
    pods: {
      createPod: (ns, pod) => w('create', `pods/${pod.metadata.name ?? ''}`, () => pods.createPod(ns, pod)),
      deletePod: (ns, name, uid) => w('delete', `pods/${name}`, () => pods.deletePod(ns, name, uid)),
      getPod: (ns, name) => pods.getPod(ns, name),
      patchPod: (ns, name, patch, type) =>
        settled(
          ns,
          name,
          w('patch', `pods/${name}`, () => pods.patchPod(ns, name, patch, type)),
        ),
      patchPodStatus: (ns, name, patch, type) =>
        settled(
          ns,
          name,
          w('patch', `pods/${name}/status`, () => pods.patchPodStatus(ns, name, patch, type)),
        ),
      patchPodResize: (ns, name, patch) =>
        settled(
          ns,
          name,
          w('patch', `pods/${name}/resize`, () => pods.patchPodResize(ns, name, patch)),
        ),
    },
    pvcs: {
      createPvc: (ns, pvc) => w('create', `persistentvolumeclaims/${pvc.metadata.name ?? ''}`, () => pvcs.createPvc(ns, pvc)),
      deletePvc: (ns, name, uid) => w('delete', `persistentvolumeclaims/${name}`, () => pvcs.deletePvc(ns, name, uid)),
      patchPvc: (ns, name, patch, type) => w('patch', `persistentvolumeclaims/${name}`, () => pvcs.patchPvc(ns, name, patch, type)),
    },
    revisions: {
      createRevision: (ns, name, encoded) => w('create', `controllerrevisions/${name}`, () => revisions.createRevision(ns, name, encoded)),
      updateRevision: (ns, name, encoded) => w('update', `controllerrevisions/${name}`, () => revisions.updateRevision(ns, name, encoded)),
      getRevision: (ns, name) => revisions.getRevision(ns, name),
      patchRevision: (ns, name, patch) => w('patch', `controllerrevisions/${name}`, () => revisions.patchRevision(ns, name, patch)),
      deleteRevision: (ns, name, uid) => w('delete', `controllerrevisions/${name}`, () => revisions.deleteRevision(ns, name, uid)),
    },
    cloneSets: {
      updateStatus: (cs, status) => w('update', `clonesets/${cs.metadata.name ?? ''}/status`, () => cloneSets.updateStatus(cs, status)),
      patchCloneSet: (ns, name, patch, type) => w('patch', `clonesets/${name}`, () => cloneSets.patchCloneSet(ns, name, patch, type)),
    },
    imagePullJobs:
      imagePullJobs === undefined
        ? undefined
        : {
            createImagePullJob: (ns, job) => w('create', `imagepulljobs/${job.metadata.name ?? ''}`, () => imagePullJobs.createImagePullJob(ns, job)),
            listImagePullJobs: (ns) => imagePullJobs.listImagePullJobs(ns),
            deleteImagePullJob: (ns, name) => w('delete', `imagepulljobs/${name}`, () => imagePullJobs.deleteImagePullJob(ns, name)),
          },
  };
}

async function write<T>(ctx: WriteContext, verb: string, object: string, send: () => Promise<T>): Promise<T> {
  // The fencing check: a pass that lost its lease (or is stopping) sends nothing more. The client's own fence
  // (kube/client.ts, leadership.ts) still cuts what is already queued or in flight.
  if (ctx.signal?.aborted === true) throw new RequestAbortedError(`${verb} ${object}`);
  const line = { cloneset: ctx.cloneSet, object, action: verb, reason: ctx.reason };
  try {
    const result = await send();
    ctx.logger.info(line, 'API write');
    return result;
  } catch (e) {
    if (isConflict(e) || isAlreadyExists(e) || isInvalid(e)) ctx.onConflict();
    ctx.logger.info({ ...line, code: e instanceof ApiError ? e.code : undefined, err: errorText(e) }, 'API write failed');
    throw e;
  }
}

/**
 * A pod PATCH whose answer was lost (the connection dropped after sending, or 504) may have landed. The next
 * pass must not plan on a cache that cannot show it: with a lifecycle or in-place patch that landed unseen, it
 * counted the pod as available and took one more from maxUnavailable (simulation seed 9021: three pods in
 * PreparingUpdate for maxUnavailable 2). Kruise does not settle these; a create (resent under its fixed name) and a
 * delete (resent with its uid precondition) are settled in execute-scale.ts. A pod patch is not always safe to
 * resend (some carry a resourceVersion precondition that our own landed write would fail), so it is settled by
 * reading instead: the live pod's resourceVersion is expected, which includes the patch if it landed; if it did
 * not, the next pass sees the pod unchanged and plans the patch again. The error still goes up (the pass fails and
 * is retried). If the read fails too, the API server is unreachable and so is any write the next pass would make.
 */
async function settleLostPodWrite<T>(ports: Ports, ctx: WriteContext, ns: string, name: string, sent: Promise<T>): Promise<T> {
  try {
    return await sent;
  } catch (e) {
    const expect = ctx.expectPodVersion;
    if (isOutcomeUnknown(e) && expect !== undefined) {
      try {
        const live = await ports.pods.getPod(ns, name);
        const { uid, resourceVersion } = live.metadata;
        if (uid !== undefined && resourceVersion !== undefined) expect(uid, resourceVersion);
      } catch (readError) {
        ctx.logger.info({ cloneset: ctx.cloneSet, object: `pods/${name}`, err: errorText(readError) }, 'could not read the pod after a lost answer');
      }
    }
    throw e;
  }
}
