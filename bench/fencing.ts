// Fencing under a slow network path and a paused leader (docs/operations.md#fencing-on-lease-loss): two replicas of
// the real controller (`--leader-elect`, `--kube-api-qps=0`) reach the API server through a proxy that holds every
// request but Lease calls and watches for `--delay` before forwarding it (and drops it if the client went away
// meanwhile): the writes' path is slow while renewals go through, so the leader keeps believing it leads. While the leader is
// scaling a CloneSet up — its creates queued behind the 32 sockets, each held by the proxy — it is paused (SIGSTOP)
// for `--pause`, longer than its lease; the other replica takes over; the old leader is resumed. The API server's
// audit log then tells when each of the old leader's writes arrived, against its last renewal:
//
//     every write of the old leader arrived ≤ its last renewal received + lease duration (15 s), and before the
//     successor's first Lease write
//
// Without the fence deadline the queued creates go out as soon as the resumed process gets sockets, after the lease
// moved. Prints the figures; exits 1 on a late write.
//
// The pause comes once `--pause-at` pods exist (63 by default: slow-start batches 1+2+…+32 are done, and the batch of 64
// creates is under way — 32 of them on the wire, held by the proxy, 32 queued for a socket).
//
//   node bench/fencing.ts [--pods 200] [--pause-at 63] [--delay 2s] [--pause 25s] [--state-dir DIR] [--keep-cluster] [-- <controller flags>]
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { CLONESETS, LEASES, PODS } from '../src/kube/resources.ts';
import type { KubeClient } from '../src/kube/client.ts';
import { auditLogPathOf, readState } from '../tools/localcluster/cluster.ts';
import { controllerWrites } from './chaos-audit.ts';
import { startFaultProxy } from './chaos-proxy.ts';
import { LEASE_NAME, Replicas } from './chaos-replicas.ts';
import { benchCloneSet } from './cloneset-view.ts';
import { CLUSTER_OPTIONS, clusterArgs, createNamespace, log, namespaceName, runBenchmark, secs, until, withCluster, type ClusterArgs } from './harness.ts';

/** The controller's default --leader-election-lease-duration. */
const LEASE_DURATION_MS = 15_000;
const UA_PREFIX = 'cloneset-controller/';

interface Args extends ClusterArgs {
  readonly delayMs: number;
  readonly pauseMs: number;
  readonly pauseAt: number;
}

const USAGE = `usage: node bench/fencing.ts [--pods N (200)] [--pause-at N (63)] [--delay SECONDS (2)] [--pause SECONDS (25)]
                              [--state-dir DIR] [--keep-cluster] [-- controller flags…]
`;

function seconds(flag: string, v: string | undefined, dflt: number): number {
  const n = Number((v ?? String(dflt)).replace(/s$/, ''));
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${flag}: not a number of seconds: ${v ?? ''}\n${USAGE}`);
  return n * 1000;
}

function parse(argv: readonly string[]): Args {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { ...CLUSTER_OPTIONS, delay: { type: 'string' }, pause: { type: 'string' }, 'pause-at': { type: 'string' } },
  });
  const common = clusterArgs(values, positionals, USAGE, 'bench-fencing');
  if (common.kubeconfig !== undefined) throw new Error(`--kubeconfig: this benchmark needs its own local control plane (the audit log)\n${USAGE}`);
  const pods = values.pods === undefined ? 200 : common.pods;
  const pauseAt = Number(values['pause-at'] ?? String(Math.min(63, pods)));
  if (!Number.isInteger(pauseAt) || pauseAt < 1 || pauseAt > pods) throw new Error(`--pause-at: a count between 1 and --pods: ${values['pause-at'] ?? ''}\n${USAGE}`);
  return { ...common, pods, pauseAt, delayMs: seconds('delay', values.delay, 2), pauseMs: seconds('pause', values.pause, 25) };
}

interface LeaseWrite {
  readonly identity: string;
  readonly receivedAt: number;
}

/** Successful writes of the Lease `name` in `ns`, by controller identity, from the audit log. */
function leaseWrites(auditLog: string, ns: string, name: string): LeaseWrite[] {
  const out: LeaseWrite[] = [];
  for (const line of readFileSync(auditLog, 'utf8').split('\n')) {
    if (line === '') continue;
    let e: {
      stage?: string;
      userAgent?: string;
      requestReceivedTimestamp?: string;
      objectRef?: { resource?: string; namespace?: string; name?: string };
      responseStatus?: { code?: number };
    };
    try {
      e = JSON.parse(line) as typeof e;
    } catch {
      continue;
    }
    const r = e.objectRef;
    if (e.stage !== 'ResponseComplete' || r?.resource !== 'leases' || r.namespace !== ns || r.name !== name) continue;
    if (!(e.userAgent ?? '').startsWith(UA_PREFIX) || (e.responseStatus?.code ?? 500) >= 300) continue;
    out.push({ identity: (e.userAgent ?? '').slice(UA_PREFIX.length), receivedAt: Date.parse(e.requestReceivedTimestamp ?? '') });
  }
  return out;
}

function proxiedKubeconfig(adminKubeconfig: string, proxyUrl: string, out: string): string {
  const doc = parseYaml(readFileSync(adminKubeconfig, 'utf8')) as { clusters: { cluster: { server: string } }[] };
  for (const c of doc.clusters) c.cluster.server = proxyUrl;
  writeFileSync(out, toYaml(doc), { mode: 0o600 });
  return out;
}

async function holder(client: KubeClient, ns: string): Promise<string | undefined> {
  try {
    const lease = await client.get<{ spec?: { holderIdentity?: string } }>(LEASES, ns, LEASE_NAME);
    const h = lease.spec?.holderIdentity;
    return h === undefined || h === '' ? undefined : h;
  } catch {
    return undefined;
  }
}

async function run(client: KubeClient, kubeconfig: string, args: Args): Promise<number> {
  const stateDir = args.stateDir;
  const pki = path.join(stateDir, 'pki');
  const f = (n: string): Buffer => readFileSync(path.join(pki, n));
  const proxy = await startFaultProxy(
    readState(stateDir)?.server ?? '',
    { serverCert: f('apiserver.crt'), serverKey: f('apiserver.key'), ca: f('ca.crt'), clientCert: f('admin.crt'), clientKey: f('admin.key') },
    () => 0.5,
  );
  const ns = namespaceName('fencing');
  await createNamespace(client, ns);
  const controllerKubeconfig = proxiedKubeconfig(kubeconfig, proxy.url, path.join(stateDir, `fencing-proxy-${ns}.kubeconfig`));
  const replicas = new Replicas(controllerKubeconfig, ns, 2, ['--kube-api-qps=0', ...args.controllerArgs]);
  try {
    log(`namespace ${ns}; controller logs in ${replicas.logDir}`);
    const leader = await until('a leader', () => holder(client, ns), 120_000, 200);
    log(`leader ${leader}; every request is now held ${secs(args.delayMs)} by the proxy`);
    proxy.delayRequests(args.delayMs);
    await client.create(CLONESETS, ns, benchCloneSet(ns, args.pods));
    await until(`${String(args.pauseAt)} pods created`, async () => ((await client.list(PODS, ns)).items.length >= args.pauseAt ? true : undefined), 300_000, 50);
    const pid = replicas.pid('leader', leader);
    if (pid === undefined) throw new Error(`no process for the leader ${leader}`);
    const pausedAt = Date.now();
    replicas.signal(pid, 'SIGSTOP');
    log(`paused the leader (pid ${String(pid)}) with ${String((await client.list(PODS, ns)).items.length)} of ${String(args.pods)} pods created, for ${secs(args.pauseMs)}`);
    const successor = await until(
      'a takeover',
      async () => {
        const h = await holder(client, ns);
        return h !== undefined && h !== leader ? h : undefined;
      },
      args.pauseMs + 60_000,
      200,
    );
    const takeoverMs = Date.now() - pausedAt;
    await until('the end of the pause', () => (Date.now() - pausedAt >= args.pauseMs ? true : undefined), args.pauseMs + 1000, 100);
    replicas.signal(pid, 'SIGCONT');
    log(`${successor} took over ${secs(takeoverMs)} after the pause; resumed the old leader after ${secs(Date.now() - pausedAt)}`);
    // The resumed process finds its lease gone and exits; whatever it had queued would arrive within the delay.
    await new Promise((r) => setTimeout(r, args.delayMs + 5000));
  } finally {
    await replicas.stop();
    await proxy.close();
  }
  const auditLog = auditLogPathOf(stateDir);
  const writes = controllerWrites(auditLog, ns);
  const leases = leaseWrites(auditLog, ns, LEASE_NAME);
  const identities = [...new Set(leases.map((l) => l.identity))];
  let late = 0;
  let report = '';
  for (const id of identities) {
    const mine = leases.filter((l) => l.identity === id);
    const others = leases.filter((l) => l.identity !== id);
    const lastRenew = Math.max(...mine.map((l) => l.receivedAt));
    const successorFirst = Math.min(...others.filter((l) => l.receivedAt > lastRenew).map((l) => l.receivedAt));
    if (!Number.isFinite(successorFirst)) continue; // the replica that led to the end
    const expiry = lastRenew + LEASE_DURATION_MS;
    const ws = writes.filter((w) => w.identity === id);
    const bad = ws.filter((w) => w.receivedAt > expiry || w.receivedAt >= successorFirst);
    const latest = Math.max(...ws.map((w) => w.receivedAt));
    late += bad.length;
    report +=
      `old leader ${id}: ${String(ws.length)} pod writes, the last arrived ${secs(latest - lastRenew)} after its last renewal ` +
      `(lease expiry at +${secs(LEASE_DURATION_MS)}, successor's first Lease write at +${secs(successorFirst - lastRenew)}); ` +
      `writes after the lease expired: ${String(bad.length)}${
        bad.length > 0
          ? ` (${bad
              .slice(0, 5)
              .map((w) => `${w.verb} ${w.what} at +${secs(w.receivedAt - lastRenew)}`)
              .join(', ')})`
          : ''
      }\n`;
  }
  process.stdout.write(
    `${report}proxy: ${String(proxy.stats.requests)} requests, held ${secs(args.delayMs)} each; ${String(proxy.stats.dropped)} dropped because the client cut them first\n` +
      `late writes: ${String(late)}\n`,
  );
  return late;
}

runBenchmark(async () => {
  const args = parse(process.argv.slice(2));
  let late = 0;
  await withCluster(
    args,
    async (client, kubeconfig) => {
      late = await run(client, kubeconfig, args);
    },
    { auditLog: true },
  );
  if (late > 0) process.exitCode = 1;
});
