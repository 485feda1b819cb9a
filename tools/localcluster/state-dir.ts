// The state dir of a local cluster (<repo>/.cluster/<name>): state.json (pids, ports, binaries), the admin
// kubeconfig, the marker that finds its processes by command line, and the lock that serialises up/down.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { repoRoot, type BinaryName } from './binaries.ts';
import { isAlive } from './processes.ts';

export interface ComponentState {
  readonly name: BinaryName;
  readonly pid: number;
  /** the executable started (TEST_ASSET_* may name it differently) */
  readonly binary: string;
  readonly logFile: string;
}

export interface ClusterState {
  readonly version: 1;
  readonly stateDir: string;
  readonly server: string;
  readonly kubeconfigPath: string;
  readonly nodes: number;
  readonly createdAt: string;
  readonly ports: Readonly<Record<string, number>>;
  readonly components: readonly ComponentState[];
}

export function defaultStateDir(name = 'default'): string {
  return join(repoRoot(), '.cluster', name);
}

export function kubeconfigPathOf(stateDir: string): string {
  return join(resolve(stateDir), 'kubeconfig');
}

function statePath(stateDir: string): string {
  return join(stateDir, 'state.json');
}

/** The marker every component command line contains (like `pgrep -f <state dir>/`). */
export function processMarker(stateDir: string): string {
  return `${resolve(stateDir)}/`;
}

export function readState(stateDir: string): ClusterState | undefined {
  const p = statePath(resolve(stateDir));
  if (!existsSync(p)) return undefined;
  try {
    const parsed: unknown = JSON.parse(readFileSync(p, 'utf8'));
    if (typeof parsed === 'object' && parsed !== null && 'version' in parsed && parsed.version === 1) {
      const st = parsed as ClusterState;
      // tolerate files written by older versions: a component without `binary` ran under its own name
      const components = (Array.isArray(st.components) ? st.components : []).map((c: Partial<ComponentState>) => ({
        name: c.name ?? 'etcd',
        pid: typeof c.pid === 'number' ? c.pid : -1,
        binary: typeof c.binary === 'string' ? c.binary : (c.name ?? ''),
        logFile: c.logFile ?? '',
      }));
      return { ...st, components: components.filter((c) => c.pid > 0) };
    }
  } catch {
    // unreadable: treated as absent
  }
  return undefined;
}

export async function writeState(state: ClusterState): Promise<void> {
  const p = statePath(state.stateDir);
  await writeFile(`${p}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  await rename(`${p}.tmp`, p);
}

/** Runs `fn` holding the state-dir lock (mkdir is atomic): one up/down at a time per state dir. */
export async function withLock<T>(stateDir: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  await mkdir(stateDir, { recursive: true });
  const lockDir = join(stateDir, '.lock');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await mkdir(lockDir);
      await writeFile(join(lockDir, 'pid'), String(process.pid));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let holder = NaN;
      try {
        holder = Number(await readFile(join(lockDir, 'pid'), 'utf8'));
      } catch {
        // being created or removed right now
      }
      if (Number.isInteger(holder) && holder > 0 && !isAlive(holder)) {
        await rm(lockDir, { recursive: true, force: true }); // stale
        continue;
      }
      if (Date.now() > deadline) throw new Error(`${stateDir} is locked by process ${String(holder)} (${lockDir})`);
      await sleep(200);
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
}
