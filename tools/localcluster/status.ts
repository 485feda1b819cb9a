// Is the cluster of a state dir running? Its recorded processes, checked against their command lines, and the
// API server's /readyz.
import { readFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { BINARY_NAMES, type BinaryName } from './binaries.ts';
import { request } from './http.ts';
import { isOurProcess } from './processes.ts';
import { defaultStateDir, processMarker, readState, type ClusterState } from './state-dir.ts';

export interface ComponentStatus {
  readonly name: BinaryName;
  readonly pid: number | undefined;
  readonly running: boolean;
}

export interface ClusterStatus {
  readonly stateDir: string;
  readonly state: ClusterState | undefined;
  readonly components: readonly ComponentStatus[];
  readonly apiserverReady: boolean;
  /** every component runs and the API server is ready */
  readonly running: boolean;
}

export async function clusterStatus(stateDir: string = defaultStateDir()): Promise<ClusterStatus> {
  const dir = resolve(stateDir);
  const state = readState(dir);
  const marker = processMarker(dir);
  const components: ComponentStatus[] = BINARY_NAMES.map((name) => {
    const c = state?.components.find((x) => x.name === name);
    return { name, pid: c?.pid, running: c !== undefined && isOurProcess(c.pid, basename(c.binary), marker) };
  });
  let apiserverReady = false;
  if (state !== undefined && components.some((c) => c.name === 'kube-apiserver' && c.running)) {
    try {
      const ca = await readFile(join(dir, 'pki', 'ca.crt'));
      const res = await request(`${state.server}/readyz`, { tls: { ca }, timeoutMs: 2000 });
      apiserverReady = res.status === 200;
    } catch {
      apiserverReady = false;
    }
  }
  return { stateDir: dir, state, components, apiserverReady, running: apiserverReady && components.every((c) => c.running) };
}
