// The V8 heap as the benchmarks measure it: live objects only, after full collections (node's `gc()`, exposed at
// run time so the commands need no node flag).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Runs a full garbage collection. */
export const collectGarbage = ((): (() => void) => {
  setFlagsFromString('--expose-gc');
  const gc: unknown = runInNewContext('gc');
  if (typeof gc !== 'function') throw new Error('no gc() available');
  return () => void gc();
})();

/** Heap in use after two full collections (the second frees what finalizers of the first let go). */
export function heapUsedAfterGc(): number {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed;
}
