// Integration-test helpers: a client for the local control plane, unique namespaces, polling with a
// deadline (never sleep-and-hope), and a controller process that can be stopped or killed.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient } from '../../src/kube/client.ts';
import { loadKubeConfig } from '../../src/kube/kubeconfig.ts';
import { NAMESPACES, type ResourceRef } from '../../src/kube/resources.ts';
import { builtControllerMain } from '../../tools/localcluster/controller-build.ts';

const SERVICE_ACCOUNTS: ResourceRef = { group: '', version: 'v1', plural: 'serviceaccounts', namespaced: true };

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function kubeconfigPath(): string {
  const p = process.env.KUBECONFIG;
  if (p === undefined || p === '') {
    throw new Error('KUBECONFIG is not set: run integration tests through `npm test` (it starts the local control plane)');
  }
  return p;
}

export async function testClient(): Promise<KubeClient> {
  return KubeClient.fromKubeConfig(loadKubeConfig(kubeconfigPath()), { qps: 200, burst: 400 });
}

export function kubectl(args: readonly string[], input?: string): { code: number; stdout: string; stderr: string } {
  const r = spawnSync('kubectl', ['--kubeconfig', kubeconfigPath(), ...args], { input, encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export function kubectlOk(args: readonly string[], input?: string): string {
  const r = kubectl(args, input);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

export async function newNamespace(client: KubeClient, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await client.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  // ServiceAccount admission rejects pods until the namespace's default ServiceAccount exists.
  await eventually(`ServiceAccount default in ${name}`, () => client.get(SERVICE_ACCOUNTS, name, 'default'));
  return name;
}

export interface EventuallyOptions {
  readonly timeoutMs?: number;
  readonly intervalMs?: number;
}

/** Polls `probe` until it returns a value that is not undefined, or fails with the last observation. */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined>, opts: EventuallyOptions = {}): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
      last = 'not yet';
    } catch (e) {
      last = e instanceof Error ? e.message : e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last observation: ${String(last)}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 250));
  }
}

export interface ControllerProcess {
  readonly proc: ChildProcess;
  readonly logFile: string;
  stop(): Promise<void>;
  kill9(): Promise<void>;
}

export interface StartControllerOptions {
  /** the controller's kubeconfig (e.g. one with a ServiceAccount token); default: the admin KUBECONFIG */
  readonly kubeconfig?: string;
}

/** Runs the real controller binary, scoped to one namespace, as a separate process. */
export function startController(namespace: string, extraArgs: readonly string[] = [], opts: StartControllerOptions = {}): ControllerProcess {
  const logDir = path.join(ROOT, '.cluster', 'test-logs');
  mkdirSync(logDir, { recursive: true });
  const logFile = path.join(logDir, `controller-${namespace}-${Date.now()}.log`);
  const out = createWriteStream(logFile);
  const proc = spawn(
    process.execPath,
    [
      builtControllerMain(),
      '--kubeconfig',
      opts.kubeconfig ?? kubeconfigPath(),
      '-n',
      namespace,
      '--metrics-bind-address=0',
      '--health-probe-bind-address=0',
      '--webhook-port=0',
      '--log-level=debug',
      ...extraArgs,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  proc.stdout?.pipe(out);
  proc.stderr?.pipe(out);
  const exited = once(proc, 'exit');
  const end = async (signal: NodeJS.Signals): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
    await exited;
  };
  return { proc, logFile, stop: () => end('SIGTERM'), kill9: () => end('SIGKILL') };
}
