// Two replicas with --leader-elect on the real control plane: the leader keeps its lease through a large
// scale-up at a low client QPS (the Lease has its own client and limiter), a SIGTERM'd leader drains and releases
// its lease so the standby leads within seconds, a SIGKILL'd one is replaced once its lease expires, both replicas
// answer /readyz 200 (readiness does not depend on leadership), and the CloneSet converges after each handover.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { CloneSet } from '../../src/api/cloneset.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { CLONESETS, LEASES, NAMESPACES } from '../../src/kube/resources.ts';
import type { Lease } from '../../src/runtime/leader-election.ts';
import { activePods, allPods, getCloneSet, newCloneSet } from '../helpers/cloneset.ts';
import { eventually, newNamespace, startController, testClient, type ControllerProcess } from '../helpers/kube.ts';
import { freePort } from '../../tools/localcluster/free-port.ts';

const LEASE = 'cloneset-controller-le-test';

interface Replica {
  readonly proc: ControllerProcess;
  readonly probePort: number;
  readonly identity: string;
}

function readyz(port: number): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/readyz', timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
  });
}

/** The identity a replica logged at start-up (the Lease holder identity and its user agent suffix). */
function identityOf(logFile: string): string | undefined {
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes('starting cloneset-controller')) continue;
    const entry = JSON.parse(line) as { identity?: string };
    return entry.identity;
  }
  return undefined;
}

async function startReplica(ns: string): Promise<Replica> {
  const probePort = await freePort();
  const proc = startController(ns, [
    '--leader-elect',
    `--leader-election-namespace=${ns}`,
    `--leader-election-id=${LEASE}`,
    '--kube-api-qps=5',
    '--kube-api-burst=5',
    `--health-probe-bind-address=127.0.0.1:${probePort}`,
  ]);
  const identity = await eventually('the replica logged its identity', async () => identityOf(proc.logFile), { timeoutMs: 30_000 });
  return { proc, probePort, identity };
}

async function holder(client: KubeClient, ns: string): Promise<Lease['spec']> {
  return (await client.get<Lease>(LEASES, ns, LEASE)).spec;
}

async function converged(client: KubeClient, ns: string, name: string, n: number): Promise<void> {
  await eventually(
    `${name} at ${n} replicas`,
    async () => {
      const pods = await activePods(client, ns, name);
      const status = (await getCloneSet(client, ns, name)).status;
      return pods.length === n && status?.replicas === n ? true : undefined;
    },
    { timeoutMs: 180_000, intervalMs: 1000 },
  );
  assert.equal((await allPods(client, ns, name)).length, n, 'never more pods than replicas (no second writer)');
}

describe('leader election with two replicas', () => {
  let client: KubeClient;
  let ns: string;
  let a: Replica;
  let b: Replica;
  const extra: Replica[] = [];

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'leader');
    a = await startReplica(ns);
    await eventually('replica a leads', async () => ((await holder(client, ns)).holderIdentity === a.identity ? true : undefined), { timeoutMs: 30_000 });
    b = await startReplica(ns);
  });
  after(async () => {
    for (const r of [a, b, ...extra]) await r.proc.stop();
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  it('both replicas are ready (/readyz 200), the leader and the standby', async () => {
    for (const r of [a, b]) await eventually(`/readyz of ${r.identity}`, async () => ((await readyz(r.probePort)) === 200 ? true : undefined), { timeoutMs: 30_000 });
  });

  it('the leader renews its lease on time during a 200-pod scale-up at 5 QPS', async () => {
    await client.create<CloneSet>(CLONESETS, ns, newCloneSet(ns, 'big', 200));
    const first = await holder(client, ns);
    let last = first.renewTime;
    let lastChange = Date.now();
    let worstGapMs = 0;
    let done = false;
    const scaled = converged(client, ns, 'big', 200).finally(() => {
      done = true;
    });
    while (!done) {
      const spec = await holder(client, ns);
      assert.equal(spec.holderIdentity, a.identity, 'the leader never changes');
      assert.equal(spec.leaseTransitions, first.leaseTransitions);
      if (spec.renewTime !== last) {
        worstGapMs = Math.max(worstGapMs, Date.now() - lastChange);
        last = spec.renewTime;
        lastChange = Date.now();
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    await scaled;
    assert.ok(worstGapMs < 5000, `the longest time without a renewal was ${worstGapMs} ms (retry period 2 s, renew deadline 10 s)`);
    assert.equal(a.proc.proc.exitCode, null, 'the leader is still running');
  });

  it('SIGTERM of the leader: it drains and releases the lease, the standby leads within seconds and converges', async () => {
    await client.patch(CLONESETS, ns, 'big', { spec: { replicas: 230 } }, 'merge');
    await eventually('the scale-up started', async () => ((await activePods(client, ns, 'big')).length > 205 ? true : undefined));
    const t0 = Date.now();
    await a.proc.stop();
    assert.equal(a.proc.proc.exitCode, 0, 'a clean exit');
    await eventually('b leads', async () => ((await holder(client, ns)).holderIdentity === b.identity ? true : undefined), { timeoutMs: 30_000, intervalMs: 100 });
    const takeoverMs = Date.now() - t0;
    assert.ok(takeoverMs < 8000, `takeover took ${takeoverMs} ms`);
    const log = readFileSync(a.proc.logFile, 'utf8');
    assert.match(log, /released leadership/);
    await converged(client, ns, 'big', 230);
  });

  it('SIGKILL of the leader: the standby takes over once the lease expires, and converges', async () => {
    const c = await startReplica(ns);
    extra.push(c);
    await eventually(`/readyz of the new standby`, async () => ((await readyz(c.probePort)) === 200 ? true : undefined), { timeoutMs: 30_000 });
    await client.patch(CLONESETS, ns, 'big', { spec: { replicas: 250 } }, 'merge');
    await eventually('the scale-up started', async () => ((await activePods(client, ns, 'big')).length > 235 ? true : undefined));
    const t0 = Date.now();
    await b.proc.kill9();
    await eventually('c leads', async () => ((await holder(client, ns)).holderIdentity === c.identity ? true : undefined), { timeoutMs: 40_000, intervalMs: 100 });
    const takeoverMs = Date.now() - t0;
    // The standby watches the Lease: it takes over when b's last record (renewed every 2 s) expires 15 s after
    // it was written, not at its next jittered poll (which could add up to 2 × 4.4 s).
    assert.ok(takeoverMs > 10_000 && takeoverMs < 16_500, `takeover took ${takeoverMs} ms`);
    await converged(client, ns, 'big', 250);
  });

  it('a leader paused past its lease (SIGSTOP) is replaced, writes nothing once resumed, and exits with status 1', async () => {
    const [c] = extra;
    assert.ok(c !== undefined);
    const d = await startReplica(ns);
    extra.push(d);
    await eventually('/readyz of the new standby', async () => ((await readyz(d.probePort)) === 200 ? true : undefined), { timeoutMs: 30_000 });
    await client.patch(CLONESETS, ns, 'big', { spec: { replicas: 280 } }, 'merge');
    await eventually('the scale-up started', async () => ((await activePods(client, ns, 'big')).length > 255 ? true : undefined));
    const pausedAt = Date.now();
    c.proc.proc.kill('SIGSTOP'); // a long GC pause, a frozen VM
    await eventually('d leads', async () => ((await holder(client, ns)).holderIdentity === d.identity ? true : undefined), { timeoutMs: 40_000, intervalMs: 100 });
    const resumedAt = Date.now();
    c.proc.proc.kill('SIGCONT');
    await eventually('the paused replica exits', async () => (c.proc.proc.exitCode !== null ? true : undefined), { timeoutMs: 15_000, intervalMs: 100 });
    assert.equal(c.proc.proc.exitCode, 1);
    const exitMs = Date.now() - resumedAt;
    assert.ok(exitMs < 5000, `exited ${exitMs} ms after resuming (it sees another holder at its first renewal)`);
    const log = readFileSync(c.proc.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { time: string; msg?: string; reason?: string });
    assert.ok(log.some((e) => e.msg === 'lost the leader lease; exiting'));
    // A create sent just before the pause may have its answer read only after the resume (its SuccessfulCreate is
    // logged then): what matters is when the write reached the API server. Every pod the resumed replica reports
    // created must have been created well before its lease could have expired (≥ 13 s after the pause: the last
    // renewal started at most one retry period, 2 s, before it); creationTimestamp has whole seconds.
    const reported = log.filter((e) => Date.parse(e.time) >= resumedAt && (e.reason === 'SuccessfulCreate' || e.reason === 'SuccessfulDelete'));
    const pods = new Map((await allPods(client, ns, 'big')).map((p) => [p.metadata.name ?? '', Date.parse(p.metadata.creationTimestamp ?? '')]));
    const late = reported.filter(
      (e) => e.reason === 'SuccessfulDelete' || (pods.get((e as { message?: string }).message?.replace('succeed to create pod ', '') ?? '') ?? Infinity) >= pausedAt + 10_000,
    );
    assert.deepEqual(late, [], 'no pod written after the pause');
    await converged(client, ns, 'big', 280);
  });
});
