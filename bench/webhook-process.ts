// The admission/conversion webhook for a local control plane that a benchmark or the chaos command starts itself:
// `cloneset-controller webhook` in URL mode, as hack/test.sh runs it. The CRD stores v1beta1 and converts through
// this webhook, so no CloneSet can be read or written before it answers. It runs as its own process, apart from the
// controllers that benchmarks restart and the chaos command kills.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeClient } from '../src/kube/client.ts';
import { isAlreadyExists } from '../src/kube/api-error.ts';
import { CLONESETS, NAMESPACES } from '../src/kube/resources.ts';
import { freePort } from '../tools/localcluster/free-port.ts';
import { builtControllerMain, CONTROLLER_NODE_FLAGS } from '../tools/localcluster/controller-build.ts';
import { spawnLogged } from './child-process.ts';

export interface WebhookProcess {
  stop(): Promise<void>;
}

/** A CloneSet whose server-side dry run comes back defaulted once the API server routes admission through us. */
const PROBE = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  metadata: { generateName: 'webhook-probe-' },
  spec: {
    selector: { matchLabels: { app: 'probe' } },
    template: { metadata: { labels: { app: 'probe' } }, spec: { containers: [{ name: 'c', image: 'nginx:alpine' }] } },
  },
};

/** The namespace of the webhook's certificate Secret (config/manager/namespace.yaml). */
const WEBHOOK_NAMESPACE = 'cloneset-system';

export async function startWebhookProcess(client: KubeClient, kubeconfig: string, logDir: string): Promise<WebhookProcess> {
  try {
    await client.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: WEBHOOK_NAMESPACE } });
  } catch (e) {
    if (!isAlreadyExists(e)) throw e;
  }
  mkdirSync(logDir, { recursive: true });
  const logFile = path.join(logDir, 'webhook.log');
  const port = await freePort();
  const { proc, stop } = spawnLogged(
    [...CONTROLLER_NODE_FLAGS, builtControllerMain(), 'webhook', '--kubeconfig', kubeconfig, '--webhook-host', '127.0.0.1', '--webhook-port', String(port)],
    logFile,
    { append: true },
  );
  process.stderr.write(`starting the admission/conversion webhook on 127.0.0.1:${String(port)} (log: ${logFile})…\n`);
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`the webhook process exited (${String(proc.exitCode)}); see ${logFile}`);
    if (await defaultsADryRun(client)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the webhook did not answer admission within 60 s; see ${logFile}`);
    }
    await sleep(500);
  }
  return { stop };
}

async function defaultsADryRun(client: KubeClient): Promise<boolean> {
  try {
    const obj = await client.create<{ spec?: { template?: { spec?: { containers?: { imagePullPolicy?: string }[] } } } }>(CLONESETS, 'default', PROBE, { dryRun: true });
    return obj.spec?.template?.spec?.containers?.[0]?.imagePullPolicy === 'Always';
  } catch {
    return false; // not served yet: the CRD's conversion or the webhook configurations are not in place
  }
}
