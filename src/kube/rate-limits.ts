// Client-side rate limits with controller-runtime's meaning of `--kube-api-qps/--kube-api-burst`: not one token
// bucket for the whole process, but one per resource kind. controller-runtime's client builds a REST client (and so
// a client-go token bucket of QPS/burst) per GroupVersionKind (`pkg/client/client_rest_resources.go`,
// `newResource` → `apiutil.RESTClientForGVK`); a subresource write (`Status().Patch`, `SubResource("resize")`) goes
// through the REST client of its kind, so it shares that kind's bucket. The informer cache builds its own REST
// client per informer (`pkg/cache/internal/informers.go`), so a kind's list and watch calls draw from a second
// bucket of the same size and never queue behind that kind's writes. Events are sent by a separate client
// (the recorder's broadcaster), with a limiter of its own: main.ts gives the recorder its own KubeClient.
//
// Effect: pod creates, pod status writes and CloneSet status writes do not wait for each other's tokens — with
// one shared bucket, 1000 pod creates at 30 QPS also delay every CloneSet status write behind them.

import { TokenBucket, realBucketTime, type BucketTime } from './token-bucket.ts';
import type { ResourceRef } from './resources.ts';

/** Which of a kind's two limiters a request draws from: the client's (reads by name, writes) or the cache's. */
export type LimiterFamily = 'client' | 'cache';

/**
 * The limiter key of a request: `<group>/<version>/<plural>` (core group written as `core`), with the suffix
 * ` (cache)` for the list/watch of informers. Subresources deliberately share their kind's key (see above).
 */
export function limiterKey(r: Pick<ResourceRef, 'group' | 'version' | 'plural'>, family: LimiterFamily): string {
  const gvr = `${r.group === '' ? 'core' : r.group}/${r.version}/${r.plural}`;
  return family === 'cache' ? `${gvr} (cache)` : gvr;
}

/** Requests outside the resource tree (`/version`, discovery documents) share one limiter, as client-go's discovery client has. */
export const NON_RESOURCE_KEY = 'non-resource';

/** A token bucket of the same QPS/burst per key, created on first use. */
export class RateLimits {
  readonly #qps: number;
  readonly #burst: number;
  readonly #time: BucketTime;
  readonly #buckets = new Map<string, TokenBucket>();

  /** `qps <= 0` (or not finite) disables every limit, as in TokenBucket. */
  constructor(qps: number, burst: number, time: BucketTime = realBucketTime) {
    this.#qps = qps;
    this.#burst = burst;
    this.#time = time;
  }

  /** The bucket of `key`. */
  for(key: string): TokenBucket {
    let bucket = this.#buckets.get(key);
    if (bucket === undefined) {
      bucket = new TokenBucket(this.#qps, this.#burst, this.#time);
      this.#buckets.set(key, bucket);
    }
    return bucket;
  }

  /** The keys that have a bucket, in first-use order (for logs and tests). */
  keys(): readonly string[] {
    return [...this.#buckets.keys()];
  }
}
