// Stopping a local cluster: its recorded processes (clients first, then the API server, then etcd), strays found
// by command line (a lost state file, a crashed `up`…), then its data. Logs are kept.
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { BINARY_NAMES, findBinary, type BinaryName } from './binaries.ts';
import { findProcesses, isOurProcess, stopProcess } from './processes.ts';
import { seconds, type Progress } from './progress.ts';
import { defaultStateDir, processMarker, readState, withLock, type ClusterState, type ComponentState } from './state-dir.ts';

const STOP_TIMEOUT_MS = 10_000;

/** Executable base names a component of this cluster may run under. */
export function executableNames(state: ClusterState | undefined): string[] {
  const names = new Set<string>(BINARY_NAMES);
  for (const c of state?.components ?? []) names.add(basename(c.binary));
  for (const n of BINARY_NAMES) {
    const p = findBinary(n);
    if (p !== undefined) names.add(basename(p));
  }
  return [...names];
}

/** Stops the cluster of `dir`; the caller holds the state-dir lock. */
export async function stopUnlocked(dir: string, progress: Progress): Promise<void> {
  const state = readState(dir);
  const marker = processMarker(dir);
  const byName = (n: BinaryName): ComponentState | undefined => state?.components.find((c) => c.name === n);
  const stopGroup = async (names: readonly BinaryName[]): Promise<void> => {
    await Promise.all(
      names.map(async (n) => {
        const c = byName(n);
        if (c === undefined || !isOurProcess(c.pid, basename(c.binary), marker)) return;
        const t0 = Date.now();
        const how = await stopProcess(c.pid, STOP_TIMEOUT_MS);
        progress.write(`stopped ${n} (pid ${String(c.pid)}, ${how}, ${seconds(Date.now() - t0)})\n`);
      }),
    );
  };
  // clients first, then the API server, then its storage
  await stopGroup(['kwok', 'kube-scheduler', 'kube-controller-manager']);
  await stopGroup(['kube-apiserver']);
  await stopGroup(['etcd']);
  // strays: a lost state file, a crashed `up`…
  const strays = findProcesses(executableNames(state), marker);
  await Promise.all(
    strays.map(async (pid) => {
      const how = await stopProcess(pid, STOP_TIMEOUT_MS);
      progress.write(`stopped stray process ${String(pid)} (${how})\n`);
    }),
  );
  await Promise.all(['data', 'pki', 'config', 'kwok-home', 'kubeconfig', 'state.json'].map((p) => rm(join(dir, p), { recursive: true, force: true })));
}

/** Stops every process of the state dir and removes its data (logs are kept). Idempotent. */
export async function stopLocalCluster(stateDir: string = defaultStateDir(), progress: Progress = process.stderr): Promise<void> {
  const dir = resolve(stateDir);
  if (!existsSync(dir)) return;
  await withLock(dir, 60_000, () => stopUnlocked(dir, progress));
}
