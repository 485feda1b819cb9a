// Finds and loads the kubeconfig (explicit path → $KUBECONFIG → ~/.kube/config → in-cluster service account),
// failing with a message that says what was tried and how to fix it.

import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { kubeConfigClass } from './client-node-config.ts';

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
}

function loadFile(file: string, source: string): KubeConfig {
  if (!existsSync(file)) {
    throw new KubeConfigError(`no kubeconfig found at ${file} (${source}); pass --kubeconfig or set KUBECONFIG`);
  }
  const kc = new (kubeConfigClass())();
  try {
    kc.loadFromFile(file);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new KubeConfigError(`invalid kubeconfig at ${file}: ${why}; pass --kubeconfig or set KUBECONFIG`, { cause: e });
  }
  return kc;
}

function fromFile(file: string, source: string): KubeConfig {
  return validated(loadFile(file, source), file);
}

function validated(kc: KubeConfig, where: string): KubeConfig {
  const cluster = kc.getCurrentCluster();
  if (cluster === null || cluster.server === '') {
    const ctx = kc.getCurrentContext();
    const detail = ctx === undefined || ctx === '' ? 'no current-context' : `context "${ctx}" names no cluster with a server`;
    throw new KubeConfigError(`invalid kubeconfig at ${where}: ${detail}; pass --kubeconfig or set KUBECONFIG`);
  }
  return kc;
}

/**
 * Loads the kubeconfig to use. `path` (from --kubeconfig) wins; then $KUBECONFIG (its files merged, the
 * first current-context winning, as kubectl does); then ~/.kube/config; then the in-cluster service account.
 */
export function loadKubeConfig(path?: string, env: NodeJS.ProcessEnv = process.env): KubeConfig {
  if (path !== undefined && path !== '') return fromFile(path, '--kubeconfig');
  const fromEnv = (env['KUBECONFIG'] ?? '').split(delimiter).filter((f) => f !== '');
  const first = fromEnv[0];
  if (first !== undefined) {
    const kc = loadFile(first, 'from KUBECONFIG');
    for (const f of fromEnv.slice(1)) {
      const more = loadFile(f, 'from KUBECONFIG');
      try {
        kc.mergeConfig(more, true); // the first current-context wins
      } catch (e) {
        throw new KubeConfigError(`invalid kubeconfig at ${f}: cannot merge it: ${String(e)}`, { cause: e });
      }
    }
    return validated(kc, fromEnv.join(delimiter));
  }
  const home = join(homedir(), '.kube', 'config');
  if (existsSync(home)) return fromFile(home, 'default location');
  if (env['KUBERNETES_SERVICE_HOST'] !== undefined && existsSync(SERVICE_ACCOUNT_TOKEN)) {
    const kc = new (kubeConfigClass())();
    kc.loadFromCluster();
    return validated(kc, 'in-cluster service account');
  }
  throw new KubeConfigError(`no kubeconfig found at ${home}; pass --kubeconfig or set KUBECONFIG (or run in a pod with a service account)`);
}
