// The relist phase of bench:fleet: the local kube-apiserver is restarted, so that the controller's watches expire
// (410: the new API server's watch cache starts at etcd's current revision, past theirs) and its informers list
// again, the pods in pages of 500 (LIST_PAGE_SIZE, src/kube/client.ts). What a relist costs the controller: its
// time, the writes it caused (none: nothing changed), and its memory around it — RSS, peak RSS, and glibc's heap
// (the `[heap]` mapping of /proc/<pid>/smaps: native allocations, outside V8's heap), which a list read into native
// buffers grew for good (docs/performance.md, "Native memory").
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { restartComponent } from '../tools/localcluster/cluster.ts';
import { diffCounts, peakRssMiB, requestCounters, rssMiB, type ControllerProcess } from './controller-process.ts';
import { until } from './harness.ts';

export interface RelistFigures {
  /** false: the pods' watch resumed without a 410 (nothing had been written since its resourceVersion) */
  readonly relisted: boolean;
  /** restart → the controller's pod list done (no new GET for 3 s) */
  readonly ms: number;
  readonly requests: Map<string, number>;
  readonly rss: readonly [before: string, after: string];
  readonly peakRss: readonly [before: string, after: string];
  readonly nativeHeap: readonly [before: string, after: string];
}

/** The resident kB of the `[heap]` mapping (glibc malloc's main arena) in the text of /proc/<pid>/smaps; 0 without one. */
export function heapRssKiB(smaps: string): number {
  const at = smaps.indexOf(' [heap]\n');
  if (at < 0) return 0;
  const m = /^Rss:\s+(\d+) kB$/m.exec(smaps.slice(at));
  return m === null ? 0 : Number(m[1]);
}

export function nativeHeapMiB(pid: number): string {
  const smaps = `/proc/${pid}/smaps`;
  if (!existsSync(smaps)) return 'n/a (no /proc)';
  return `${(heapRssKiB(readFileSync(smaps, 'utf8')) / 1024).toFixed(0)} MiB`;
}

/** The size of the controller's log now: where the lines of the relist begin. */
function logSize(logFile: string): number {
  return existsSync(logFile) ? statSync(logFile).size : 0;
}

/**
 * Whether the controller's log, from byte `from` on, says its pod informer relists (the watcher's 410 line). Only
 * the new part is read: at 100 000 pods the log holds two lines per pod, too much to read ten times a second.
 */
export function podRelistLogged(logFile: string, from: number): boolean {
  const fd = openSync(logFile, 'r');
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.alloc(Math.max(0, size - from));
    readSync(fd, buf, 0, buf.length, from);
    return buf
      .toString('utf8')
      .split('\n')
      .some((line) => line.includes('"informer":"v1/pods"') && line.includes('relisting'));
  } finally {
    closeSync(fd);
  }
}

export async function measureRelist(stateDir: string, controller: ControllerProcess, timeoutMs: number): Promise<RelistFigures> {
  const { pid, metricsUrl, logFile } = controller;
  const before = { rss: rssMiB(pid), peak: peakRssMiB(pid), native: nativeHeapMiB(pid), logBytes: logSize(logFile) };
  const requests0 = await requestCounters(metricsUrl);
  const t0 = Date.now();
  // The restarted API server is ready once its watch cache has listed every object from etcd: with 100 000 pods that
  // took over the 60 s a restart waits by default (the seventh 100 000-pod run, docs/performance.md).
  await restartComponent(stateDir, 'kube-apiserver', { signal: 'SIGKILL', timeoutMs: Math.max(60_000, timeoutMs) });
  // The watch notices the dropped connection at once and re-watches; a 410 follows within a second or two. Without
  // one in 60 s the watch resumed (the pods' resourceVersion was still the newest), and there is nothing to measure.
  const relisted = await until('the pod informer to relist', () => (podRelistLogged(logFile, before.logBytes) ? true : undefined), 60_000, 100).catch(() => false);
  let ms = Date.now() - t0;
  if (relisted) {
    // The list is done when the controller's GETs (list pages; watches count once) stop for 3 s.
    let gets = -1;
    let stableSince = Date.now();
    ms = await until(
      'the relist to finish',
      async () => {
        const now = (await requestCounters(metricsUrl)).get('GET') ?? 0;
        if (now !== gets) {
          gets = now;
          stableSince = Date.now();
          return undefined;
        }
        return Date.now() - stableSince >= 3_000 ? stableSince - t0 : undefined;
      },
      timeoutMs,
      250,
    );
  }
  await new Promise((r) => setTimeout(r, 5_000)); // anything the relist would write shows up by now
  const requests = diffCounts(await requestCounters(metricsUrl), requests0);
  return {
    relisted,
    ms,
    requests,
    rss: [before.rss, rssMiB(pid)],
    peakRss: [before.peak, peakRssMiB(pid)],
    nativeHeap: [before.native, nativeHeapMiB(pid)],
  };
}
