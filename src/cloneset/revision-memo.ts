// The revision derivations of plan/revisions.ts, each computed once per cached object. A pass hashes the
// CloneSet's template and reads the bytes of every listed revision; between two changes of the template those
// are the same objects on every pass (the cache freezes them, and its CloneSet transform hands an unchanged
// template over from one version of the CloneSet to the next, cache-transforms.ts `shareTemplates`), so each is
// derived once and looked up by identity afterwards. Weak keys: a value goes with the last cached object that
// holds it, so the memo never grows with the history of the cluster.
import type { CloneSet } from '../api/cloneset.ts';
import { deepFreeze } from '../runtime/store.ts';
import type { ControllerRevision } from '../kube/types.ts';
import { derivations, type RevisionDerivations, type RevisionOptions, type TemplateRevisionData } from './plan/revisions.ts';

export class RevisionMemo implements RevisionDerivations {
  readonly #direct: RevisionDerivations;
  readonly #templateData = new WeakMap<object, TemplateRevisionData>();
  readonly #claimTemplatesHash = new WeakMap<object, string>();
  readonly #dataBytes = new WeakMap<ControllerRevision, string>();

  constructor(opts: RevisionOptions = {}) {
    this.#direct = derivations(opts);
  }

  templateData(cloneSet: CloneSet): TemplateRevisionData {
    const key: unknown = cloneSet.spec.template;
    if (!isFrozenObject(key)) return this.#direct.templateData(cloneSet);
    return getOrCompute(this.#templateData, key, () => remembered(this.#direct.templateData(cloneSet)));
  }

  volumeClaimTemplatesHash(cloneSet: CloneSet): string {
    const key: unknown = cloneSet.spec.volumeClaimTemplates;
    if (!isFrozenObject(key)) return this.#direct.volumeClaimTemplatesHash(cloneSet);
    return getOrCompute(this.#claimTemplatesHash, key, () => this.#direct.volumeClaimTemplatesHash(cloneSet));
  }

  dataBytes(rev: ControllerRevision): string {
    if (!Object.isFrozen(rev)) return this.#direct.dataBytes(rev);
    return getOrCompute(this.#dataBytes, rev, () => this.#direct.dataBytes(rev));
  }
}

/** The data frozen like the cache (its object is handed to every pass's candidate revision), its hashes remembered. */
function remembered(data: TemplateRevisionData): TemplateRevisionData {
  const hashes = new Map<number | undefined, string>();
  return {
    object: deepFreeze(data.object),
    bytes: data.bytes,
    hash: (collisionCount) => getOrCompute(hashes, collisionCount, () => data.hash(collisionCount)),
  };
}

/** The value remembered for `key`, computed and remembered on the first ask. */
function getOrCompute<K, V>(memo: { get(k: K): V | undefined; set(k: K, v: V): unknown }, key: K, compute: () => V): V {
  let value = memo.get(key);
  if (value === undefined) {
    value = compute();
    memo.set(key, value);
  }
  return value;
}

/**
 * Only a frozen object is a safe key: it cannot change under the memo (the cache deep-freezes what it stores, so
 * a cached object qualifies; a CloneSet built by a test or a caller may not).
 */
function isFrozenObject(v: unknown): v is object {
  return typeof v === 'object' && v !== null && Object.isFrozen(v);
}
