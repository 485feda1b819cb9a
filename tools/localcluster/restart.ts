// Faults for chaos runs (bench/chaos.ts): restart one component of a running local cluster with exactly its
// previous command line and environment (read from /proc, so the API server comes back on the same port with
// the same certificates and etcd on the same data dir), or freeze it for a while (SIGSTOP/SIGCONT).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BinaryName } from './binaries.ts';
import { portIsFree } from './free-port.ts';
import { request } from './http.ts';
import { cmdline, isAlive, isOurProcess, startDetached } from './processes.ts';
import { waitFor } from './readiness.ts';
import { processMarker, readState, withLock, writeState, type ClusterState, type ComponentState } from './state-dir.ts';

function component(dir: string, name: BinaryName): { state: ClusterState; c: ComponentState } {
  const state = readState(dir);
  const c = state?.components.find((x) => x.name === name);
  if (state === undefined || c === undefined)
    throw new Error(`no ${name} recorded in ${dir}/state.json: is the cluster up (node tools/localcluster/cli.ts up --state-dir ${dir})?`);
  if (!isOurProcess(c.pid, c.binary.split('/').pop() ?? name, processMarker(dir))) throw new Error(`${name} (pid ${String(c.pid)}) of ${dir} is not running`);
  return { state, c };
}

function environ(pid: number): Record<string, string> {
  const env: Record<string, string> = {};
  for (const kv of readFileSync(`/proc/${String(pid)}/environ`, 'utf8').split('\0')) {
    const i = kv.indexOf('=');
    if (i > 0) env[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return env;
}

export interface RestartOptions {
  /** SIGKILL (a crash: no graceful shutdown, every connection drops) or SIGTERM; default SIGKILL */
  readonly signal?: 'SIGKILL' | 'SIGTERM';
  /** how long the component stays down before it is started again; default 0 */
  readonly downMs?: number;
  /** how long to wait for it to be healthy again; default 60 s */
  readonly timeoutMs?: number;
}

/** Kills `name` and starts it again with the same argv and environment; resolves once it is healthy again (etcd, kube-apiserver) or started (others). */
export async function restartComponent(stateDir: string, name: BinaryName, opts: RestartOptions = {}): Promise<void> {
  const dir = resolve(stateDir);
  await withLock(dir, 60_000, async () => {
    const { state, c } = component(dir, name);
    const argv = cmdline(c.pid);
    if (argv === undefined) throw new Error(`cannot read the command line of ${name} (pid ${String(c.pid)}): restarts need /proc`);
    const env = environ(c.pid);
    try {
      process.kill(-c.pid, opts.signal ?? 'SIGKILL');
    } catch {
      process.kill(c.pid, opts.signal ?? 'SIGKILL');
    }
    const deadline = Date.now() + 30_000;
    while (isAlive(c.pid)) {
      if (Date.now() > deadline) throw new Error(`${name} (pid ${String(c.pid)}) did not exit`);
      await sleep(20);
    }
    // A killed Go process counts as dead once its main thread is a zombie, but its other threads can still hold its
    // listening socket for a moment: a restart at once then failed with "bind: address already in use".
    const port = name === 'kube-apiserver' ? Number(new URL(state.server).port) : name === 'etcd' ? state.ports['etcd'] : undefined;
    if (port !== undefined && port > 0) {
      while (!(await portIsFree(port))) {
        if (Date.now() > deadline) throw new Error(`${name}'s port ${String(port)} is still in use after it exited`);
        await sleep(20);
      }
    }
    if ((opts.downMs ?? 0) > 0) await sleep(opts.downMs);
    const started = startDetached(c.binary, argv.slice(1), c.logFile, env, name, 'a');
    await writeState({ ...state, components: state.components.map((x) => (x.name === name ? { ...x, pid: started.pid } : x)) });
    const timeoutMs = opts.timeoutMs ?? 60_000;
    if (name === 'etcd') {
      const port = state.ports['etcd'] ?? 0;
      await waitFor('etcd /health', timeoutMs, async () => (await request(`http://127.0.0.1:${String(port)}/health`, { timeoutMs: 2000 })).status === 200, started.exited);
    } else if (name === 'kube-apiserver') {
      const pki = join(dir, 'pki');
      const tls = { ca: readFileSync(join(pki, 'ca.crt')), cert: readFileSync(join(pki, 'admin.crt')), key: readFileSync(join(pki, 'admin.key')) };
      await waitFor('kube-apiserver /readyz', timeoutMs, async () => (await request(`${state.server}/readyz`, { tls, timeoutMs: 2000 })).status === 200, started.exited);
    }
  });
}

/** Freezes `name` (SIGSTOP) for `ms`, then lets it continue (SIGCONT): a stuck process, not a dead one. */
export async function pauseComponent(stateDir: string, name: BinaryName, ms: number): Promise<void> {
  const dir = resolve(stateDir);
  const { c } = component(dir, name);
  process.kill(c.pid, 'SIGSTOP');
  try {
    await sleep(ms);
  } finally {
    process.kill(c.pid, 'SIGCONT');
  }
}
