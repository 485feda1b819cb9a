// Brings up the components of a local cluster in a clean state dir, in dependency order: certificates, etcd,
// kubeconfigs, kube-apiserver, then kube-controller-manager, kube-scheduler and kwok together, then the fake
// nodes and the default ServiceAccount. Every component is recorded in state.json as soon as it is started.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { auditFlags } from './audit.ts';
import type { BinaryName, BinaryPaths } from './binaries.ts';
import {
  allocatePorts,
  apiserverArgs,
  type ClusterProfile,
  controllerManagerArgs,
  etcdArgs,
  etcdClientUrl,
  kwokArgs,
  schedulerArgs,
  schedulerConfiguration,
} from './components.ts';
import { request, type HttpResponse } from './http.ts';
import { writeKubeconfig } from './kubeconfig.ts';
import { createFakeNodes, nodeNames } from './nodes.ts';
import { generatePki, type CertPair, type Pki } from './pki.ts';
import { startDetached, type Started } from './processes.ts';
import { step, stepLine, type Progress } from './progress.ts';
import { isJsonOk, waitFor, waitForHealthz } from './readiness.ts';
import { kubeconfigPathOf, writeState, type ComponentState } from './state-dir.ts';

export interface BringUpOptions {
  readonly nodes: number;
  readonly timeoutMs: number;
  readonly progress: Progress;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** enable the API server audit log (audit.ts) */
  readonly auditLog?: boolean;
  /** components.ts ClusterProfile; default `default` */
  readonly profile?: ClusterProfile;
}

/** Starts every component and resolves with the API server URL once the cluster is usable. */
export async function bringUp(dir: string, bins: BinaryPaths, opts: BringUpOptions): Promise<string> {
  const { nodes, timeoutMs, progress, env } = opts;
  const profile = opts.profile ?? 'default';
  const logs = join(dir, 'logs');
  const data = join(dir, 'data');
  const cfg = join(dir, 'config');
  const kwokHome = join(dir, 'kwok-home');
  await Promise.all([logs, data, cfg, kwokHome].map((d) => mkdir(d, { recursive: true })));

  const pki: Pki = await step(progress, 'generating certificates', () =>
    generatePki(join(dir, 'pki'), [
      { name: 'admin', user: 'kubernetes-admin', groups: ['system:masters'] },
      { name: 'kube-controller-manager', user: 'system:kube-controller-manager', groups: [] },
      // system:masters, like kwok: right after a kube-apiserver restart its RBAC authorizer refuses everyone for a few
      // seconds until its caches sync, and the scheduler's informers then back off for up to 30 s (client-go
      // reflector backoff), so new pods stayed unscheduled long after the restart (seen in `npm run chaos`). The
      // privileged group is authorized without RBAC. A local test cluster only: a real one keeps RBAC.
      { name: 'kube-scheduler', user: 'system:kube-scheduler', groups: ['system:masters'] },
      { name: 'kwok', user: 'kwok-controller', groups: ['system:masters'] },
    ]),
  );
  const client = (n: string): CertPair => {
    const c = pki.clients[n];
    if (c === undefined) throw new Error(`missing client certificate ${n}`);
    return c;
  };

  const ports = await allocatePorts();
  const server = `https://127.0.0.1:${String(ports.apiserver)}`;
  const components: ComponentState[] = [];
  const baseState = {
    version: 1 as const,
    stateDir: dir,
    server,
    kubeconfigPath: kubeconfigPathOf(dir),
    nodes,
    createdAt: new Date().toISOString(),
    ports: { ...ports },
  };
  const childEnv: Record<string, string | undefined> = { ...env };
  delete childEnv['KUBECONFIG'];
  const launch = async (name: BinaryName, args: readonly string[], extraEnv: Record<string, string> = {}): Promise<Started> => {
    const logFile = join(logs, `${name}.log`);
    const started = startDetached(bins[name], args, logFile, { ...childEnv, ...extraEnv }, name);
    components.push({ name, pid: started.pid, binary: bins[name], logFile });
    await writeState({ ...baseState, components: [...components] });
    return started;
  };

  await step(progress, 'starting etcd', async () => {
    const etcd = await launch('etcd', etcdArgs(ports, data));
    await waitFor(
      'etcd /health',
      timeoutMs,
      async () => {
        const r = await request(`${etcdClientUrl(ports)}/health`, { timeoutMs: 2000 });
        return r.status === 200 && r.body.includes('"true"');
      },
      etcd.exited,
    );
  });

  // kubeconfigs (the server URL is known before the API server starts)
  const admin = await writeKubeconfig(kubeconfigPathOf(dir), server, pki.ca.cert, client('admin'), 'admin');
  const kcmKc = await writeKubeconfig(join(cfg, 'kube-controller-manager.kubeconfig'), server, pki.ca.cert, client('kube-controller-manager'), 'kube-controller-manager');
  const schedKc = await writeKubeconfig(join(cfg, 'kube-scheduler.kubeconfig'), server, pki.ca.cert, client('kube-scheduler'), 'kube-scheduler');
  const kwokKc = await writeKubeconfig(join(cfg, 'kwok.kubeconfig'), server, pki.ca.cert, client('kwok'), 'kwok');
  const api = (path: string, o: { method?: string; body?: unknown } = {}): Promise<HttpResponse> => request(`${server}${path}`, { ...o, tls: admin.tls, timeoutMs: 10_000 });

  await step(progress, 'starting kube-apiserver', async () => {
    const audit = opts.auditLog === true ? await auditFlags(dir, cfg) : [];
    const apiserver = await launch('kube-apiserver', [...apiserverArgs(dir, ports, pki, profile), ...audit]);
    await waitFor('kube-apiserver /readyz', timeoutMs, async () => (await api('/readyz')).status === 200, apiserver.exited);
    await waitFor(
      'namespaces default and kube-system',
      timeoutMs,
      async () => isJsonOk(await api('/api/v1/namespaces/default')) && isJsonOk(await api('/api/v1/namespaces/kube-system')),
      apiserver.exited,
    );
  });

  // kube-controller-manager, kube-scheduler, kwok: started together, waited for separately
  const schedulerConfig = join(cfg, 'kube-scheduler.yaml');
  await writeFile(schedulerConfig, toYaml(schedulerConfiguration(schedKc.path, profile)));
  const kcm = await launch('kube-controller-manager', controllerManagerArgs(dir, ports, pki, kcmKc.path, profile));
  const scheduler = await launch('kube-scheduler', schedulerArgs(dir, ports, schedulerConfig));
  const kwok = await launch('kwok', kwokArgs(ports, kwokKc.path), { HOME: kwokHome }); // kwok also loads ~/.kwok/kwok.yaml when present: isolate it
  // the first failure stops the other waits quietly (their processes are about to be stopped anyway)
  const parallel = new AbortController();
  const aborted = new Promise<never>((_resolve, reject) => {
    parallel.signal.addEventListener('abort', () => reject(new Error('aborted')));
  });
  aborted.catch(() => {});
  const healthz = (url: string, died: Promise<never>): Promise<void> =>
    waitForHealthz(url, timeoutMs, Promise.race([died, aborted])).catch((e: unknown) => {
      parallel.abort();
      throw e;
    });
  await Promise.all([
    stepLine(progress, 'starting kube-controller-manager', () => healthz(`https://127.0.0.1:${String(ports.kubeControllerManager)}/healthz`, kcm.exited), parallel.signal),
    stepLine(progress, 'starting kube-scheduler', () => healthz(`https://127.0.0.1:${String(ports.kubeScheduler)}/healthz`, scheduler.exited), parallel.signal),
    stepLine(progress, 'starting kwok', () => healthz(`http://127.0.0.1:${String(ports.kwok)}/healthz`, kwok.exited), parallel.signal),
  ]);

  const allDied = Promise.race([kcm.exited, scheduler.exited, kwok.exited]);
  allDied.catch(() => {});
  await step(progress, `creating ${String(nodes)} fake nodes`, () => createFakeNodes(api, nodeNames(nodes), timeoutMs, allDied));
  await step(progress, 'waiting for the default ServiceAccount', () =>
    waitFor('serviceaccount default/default', timeoutMs, async () => isJsonOk(await api('/api/v1/namespaces/default/serviceaccounts/default')), allDied),
  );

  return server;
}
