// kubectl-cloneset against the real control plane and the real controller: every command through `kubectl
// cloneset …` (kubectl's plugin discovery finds bin/kubectl-cloneset on PATH), its exit codes and messages, the
// live tree in a real terminal (tmux: keys sent, pane captured), and `plan` on a rollout blocked by maxUnavailable.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { CloneSet } from '../../src/api/cloneset.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import type { CloneSetV1beta1 } from '../../src/api/cloneset-v1beta1.ts';
import { CLONESETS, CLONESETS_V1BETA1, NAMESPACES } from '../../src/kube/resources.ts';
import type { Pod } from '../../src/kube/types.ts';
import { activePods, getCloneSet, newCloneSet, readyPods } from '../helpers/cloneset.ts';
import { eventually, kubeconfigPath, newNamespace, ROOT, startController, testClient, type ControllerProcess } from '../helpers/kube.ts';

/** Installed as docs/kubectl-plugin.md says: a symlink to bin/kubectl-cloneset in a directory on PATH. */
function installedPluginPath(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'plugin-bin-'));
  symlinkSync(path.join(ROOT, 'bin', 'kubectl-cloneset'), path.join(dir, 'kubectl-cloneset'));
  return `${dir}${path.delimiter}${process.env.PATH ?? ''}`;
}

const PATH_WITH_PLUGIN = installedPluginPath();

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `kubectl cloneset ARGS` as a user types it: kubectl finds the plugin on PATH. */
function kubectlCloneset(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn('kubectl', ['cloneset', ...args], { env: { ...process.env, PATH: PATH_WITH_PLUGIN, KUBECONFIG: kubeconfigPath(), ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

async function ok(args: readonly string[]): Promise<string> {
  const r = await kubectlCloneset(args);
  assert.equal(r.code, 0, `kubectl cloneset ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

async function rolledOut(client: KubeClient, ns: string, name: string, replicas: number): Promise<CloneSet> {
  return eventually(
    `${name} rolled out`,
    async () => {
      const cs = await getCloneSet(client, ns, name);
      const s = cs.status;
      return s !== undefined &&
        s.observedGeneration === cs.metadata.generation &&
        s.updatedReplicas === replicas &&
        s.availableReplicas === replicas &&
        s.currentRevision === s.updateRevision &&
        s.replicas === replicas
        ? cs
        : undefined;
    },
    { timeoutMs: 120_000 },
  );
}

const imageOf = (p: Pod): string => p.spec.containers[0]?.image ?? '';

/** A tmux server of our own (its own socket), so nothing else's sessions are touched. */
class Terminal {
  readonly #socket = `kubectl-cloneset-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  readonly #session = 'view';

  readonly columns: number;
  readonly rows: number;

  constructor(columns = 200, rows = 50) {
    this.columns = columns;
    this.rows = rows;
  }

  start(command: string): void {
    const env = `env PATH=${PATH_WITH_PLUGIN} KUBECONFIG=${kubeconfigPath()} TERM=xterm-256color`;
    this.#tmux(['new-session', '-d', '-s', this.#session, '-x', String(this.columns), '-y', String(this.rows), `${env} bash --norc --noprofile`]);
    this.#tmux(['send-keys', '-t', this.#session, command, 'Enter']);
  }

  capture(): string {
    return this.#tmux(['capture-pane', '-p', '-t', this.#session]);
  }

  /** The pane with its colour escapes. */
  captureAnsi(): string {
    return this.#tmux(['capture-pane', '-p', '-e', '-t', this.#session]);
  }

  /** A tmux format of the pane, e.g. #{history_size} (lines scrolled off the top) or #{alternate_on}. */
  format(f: string): string {
    return this.#tmux(['display-message', '-p', '-t', this.#session, f]).trim();
  }

  keys(...keys: string[]): void {
    this.#tmux(['send-keys', '-t', this.#session, ...keys]);
  }

  stop(): void {
    spawnSync('tmux', ['-L', this.#socket, 'kill-server']);
  }

  #tmux(args: readonly string[]): string {
    const r = spawnSync('tmux', ['-L', this.#socket, ...args], { encoding: 'utf8' });
    if (r.error !== undefined) throw new Error(`tmux is required for this test (apt-get install tmux): ${r.error.message}`);
    if (r.status !== 0) throw new Error(`tmux ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  }
}

describe('kubectl cloneset (the kubectl plugin)', () => {
  let client: KubeClient;
  let ns: string;
  let controller: ControllerProcess;

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'plugin');
    controller = startController(ns);
  });
  after(async () => {
    await controller.stop();
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  it('is found by kubectl plugin discovery, and --help lists every command', async () => {
    const list = spawnSync('kubectl', ['plugin', 'list'], { env: { ...process.env, PATH: PATH_WITH_PLUGIN }, encoding: 'utf8' });
    assert.match(list.stdout, /kubectl-cloneset/);
    const help = await ok(['--help']);
    for (const command of [
      'get NAME',
      'plan NAME',
      'rollout status',
      'rollout history',
      'rollout undo',
      'rollout pause',
      'rollout resume',
      'rollout restart',
      'set image',
      'scale NAME',
    ]) {
      assert.ok(help.includes(command), `--help mentions ${command}`);
    }
  });

  it('says when a CloneSet does not exist and how to list them, with exit code 1', async () => {
    const r = await kubectlCloneset(['get', 'nope', '-n', ns]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /clonesets\.apps\.kruise\.io "nope" not found in namespace/);
    assert.ok(r.stderr.includes(`kubectl get clonesets -n ${ns}`), r.stderr);
  });

  it('says which server it could not reach and what to check, with exit code 1', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'plugin-kubeconfig-'));
    const file = path.join(dir, 'kubeconfig');
    // Port 1 on loopback: nothing listens there, the connection is refused at once.
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: dead',
        'clusters: [{name: dead, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]',
        'users: [{name: u, user: {token: x}}]',
        'contexts: [{name: dead, context: {cluster: dead, user: u}}]',
        '',
      ].join('\n'),
    );
    const r = await kubectlCloneset(['get', 'sample', '-n', ns, '--kubeconfig', file]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /127\.0\.0\.1:1/);
    assert.match(r.stderr, /kubectl cluster-info/);
    const badContext = await kubectlCloneset(['get', 'sample', '--context', 'missing']);
    assert.equal(badContext.code, 1);
    assert.match(badContext.stderr, /context "missing" does not exist/);
  });

  it('scales, sets the image, waits for the rollout, lists the history and undoes it', async () => {
    // minReadySeconds makes the rollout last long enough (≥ 3 × 5 s) to be watched in progress, even when a loaded
    // machine takes seconds to start the plugin.
    await client.create(CLONESETS, ns, newCloneSet(ns, 'web', 2, { spec: { minReadySeconds: 5, updateStrategy: { type: 'ReCreate', maxUnavailable: 1 } } }));
    assert.match(await ok(['scale', 'web', '-n', ns, '--replicas', '3']), /^cloneset\.apps\.kruise\.io\/web scaled\n$/);
    assert.match(await ok(['rollout', 'status', 'web', '-n', ns, '--timeout', '2m']), /cloneset "web" successfully rolled out/);
    assert.equal((await readyPods(client, ns, 'web', 3))?.length, 3);
    const first = await getCloneSet(client, ns, 'web');

    assert.match(await ok(['set', 'image', 'web', `--namespace=${ns}`, 'nginx=nginx:mainline']), /image updated/);
    const status = await ok(['rollout', 'status', 'web', '-n', ns, '--timeout=2m']);
    assert.match(status, /Waiting for rollout to finish: \d+ (out of 3 new replicas have been updated|of 3 updated replicas are available)/);
    assert.match(status, /successfully rolled out\n$/);
    const second = await rolledOut(client, ns, 'web', 3);
    assert.ok((await activePods(client, ns, 'web')).every((p) => imageOf(p) === 'nginx:mainline'));

    const history = await ok(['rollout', 'history', 'web', '-n', ns]);
    assert.match(history, new RegExp(`1\\s+${first.status?.updateRevision ?? 'x'}\\s+nginx=nginx:alpine`));
    assert.match(history, new RegExp(`2\\s+${second.status?.updateRevision ?? 'x'}\\s+current,update\\s+nginx=nginx:mainline`));
    assert.match(await ok(['rollout', 'history', 'web', '-n', ns, '--revision', '1']), /image: nginx:alpine/);

    assert.match(await ok(['rollout', 'undo', 'web', '-n', ns]), /rolled back to revision 1/);
    const undone = await eventually(
      'undo rolled out',
      async () => {
        const cs = await rolledOut(client, ns, 'web', 3);
        return cs.status?.updateRevision === first.status?.updateRevision ? cs : undefined;
      },
      { timeoutMs: 120_000 },
    );
    // docs/features.md#revisions (Kruise pkg/controller/cloneset/core/cloneset_core.go): the old revision is reused under a new number, no new name.
    assert.equal(undone.status?.updateRevision, first.status?.updateRevision);
    assert.ok((await activePods(client, ns, 'web')).every((p) => imageOf(p) === 'nginx:alpine'));
    assert.match(await ok(['rollout', 'history', 'web', '-n', ns]), new RegExp(`3\\s+${first.status?.updateRevision ?? 'x'}\\s+current,update`));
    assert.match(await ok(['rollout', 'undo', 'web', '-n', ns, '--to-revision', '3']), /skipped rollback/);
  });

  it('runs every command against a v1beta1 OnDelete CloneSet and a v1alpha1 CloneSet (writes go through the preferred version)', async () => {
    await client.create<CloneSetV1beta1>(CLONESETS_V1BETA1, ns, {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'CloneSet',
      metadata: { name: 'od', namespace: ns },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'od' } },
        updateStrategy: { type: 'OnDelete' },
        template: { metadata: { labels: { app: 'od' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:alpine' }] } },
      },
    });
    await client.create(CLONESETS, ns, newCloneSet(ns, 'alpha', 2, { spec: { updateStrategy: { type: 'ReCreate', maxUnavailable: 1 } } }));
    const transcript: string[] = [];
    const run = async (args: readonly string[]): Promise<string> => {
      const r = await kubectlCloneset([...args, '-n', ns]);
      transcript.push(`${args.join(' ')} → exit ${r.code}${r.code === 0 ? '' : `: ${r.stderr.trim()}`}`);
      return r.stdout;
    };
    for (const name of ['od', 'alpha']) {
      await rolledOut(client, ns, name, 2);
      await run(['get', name]);
      await run(['get', name, '-o', 'json']);
      await run(['plan', name]);
      await run(['rollout', 'status', name, '--timeout', '1m']);
      await run(['scale', name, '--replicas', '3']);
      await run(['set', 'image', name, 'nginx=nginx:mainline']);
      // OnDelete never replaces a pod by itself: its status is read once instead of waited for.
      await run(['rollout', 'status', name, ...(name === 'od' ? ['--watch=false'] : ['--timeout', '2m'])]);
      await run(['rollout', 'history', name]);
      await run(['rollout', 'pause', name]);
      await run(['rollout', 'resume', name]);
      await run(['rollout', 'restart', name]);
      await run(['rollout', 'undo', name]);
    }
    assert.deepEqual(
      transcript.filter((t) => !t.endsWith('exit 0')),
      [],
      transcript.join('\n'),
    );
    const od = await client.get<CloneSetV1beta1>(CLONESETS_V1BETA1, ns, 'od');
    assert.equal(od.spec.updateStrategy?.type, 'OnDelete');
    assert.equal(od.spec.replicas, 3);
    assert.notEqual(od.spec.updateStrategy?.rollingUpdate?.paused, true, 'resumed');
    assert.equal(od.spec.updateStrategy?.rollingUpdate?.partition, 0, 'the pause added the block admission requires');
    assert.equal(od.spec.template.spec.containers[0]?.image, 'nginx:mainline', 'undone to the revision before the restart');
  });

  it('ends rollout status when the partition in force is reached', async () => {
    await client.create(CLONESETS, ns, newCloneSet(ns, 'part', 4, { spec: { updateStrategy: { type: 'ReCreate', maxUnavailable: 1, partition: 2 } } }));
    await rolledOut(client, ns, 'part', 4);
    await ok(['set', 'image', 'part', '-n', ns, 'nginx=nginx:mainline']);
    assert.match(await ok(['rollout', 'status', 'part', '-n', ns, '--timeout', '2m']), /cloneset "part" successfully rolled out \(partition 2: 2 of 4 replicas updated\)\n$/);
    const images = (await activePods(client, ns, 'part')).map(imageOf).sort();
    assert.deepEqual(images, ['nginx:alpine', 'nginx:alpine', 'nginx:mainline', 'nginx:mainline']);
  });

  it('pauses and resumes a rollout', async () => {
    await client.create(CLONESETS, ns, newCloneSet(ns, 'paused', 2, { spec: { updateStrategy: { type: 'ReCreate', maxUnavailable: 1 } } }));
    await rolledOut(client, ns, 'paused', 2);
    assert.match(await ok(['rollout', 'pause', 'paused', '-n', ns]), /paused$/m);
    const again = await kubectlCloneset(['rollout', 'pause', 'paused', '-n', ns]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already paused/);
    await ok(['set', 'image', 'paused', '-n', ns, '*=nginx:mainline']);
    // Paused: the status line says so, and --watch=false reports once without waiting.
    const waiting = await ok(['rollout', 'status', 'paused', '-n', ns, '--watch=false']);
    assert.match(waiting, /paused: resume with kubectl cloneset rollout resume paused|spec update to be observed/);
    const stillOld = await eventually('controller observed the paused change', async () => {
      const cs = await getCloneSet(client, ns, 'paused');
      return cs.status?.observedGeneration === cs.metadata.generation ? cs : undefined;
    });
    assert.equal(stillOld.status?.updatedReplicas, 0);
    assert.ok((await activePods(client, ns, 'paused')).every((p) => imageOf(p) === 'nginx:alpine'));
    assert.match(await ok(['rollout', 'resume', 'paused', '-n', ns]), /resumed$/m);
    assert.match(await ok(['rollout', 'status', 'paused', '-n', ns, '--timeout', '2m']), /successfully rolled out/);
    assert.ok((await activePods(client, ns, 'paused')).every((p) => imageOf(p) === 'nginx:mainline'));
  });

  it('restarts a ReCreate CloneSet with the restartedAt template annotation alone, and an InPlaceIfPossible one without kruise-daemon in place', async () => {
    await client.create(CLONESETS, ns, newCloneSet(ns, 'rs', 2, { spec: { updateStrategy: { type: 'ReCreate', maxUnavailable: 1 } } }));
    await rolledOut(client, ns, 'rs', 2);
    const before = new Set((await activePods(client, ns, 'rs')).map((p) => p.metadata.uid));
    const out = await ok(['rollout', 'restart', 'rs', '-n', ns]);
    assert.match(out, /^cloneset\.apps\.kruise\.io\/rs restarted\n {2}every pod is deleted and created anew/);
    await ok(['rollout', 'status', 'rs', '-n', ns, '--timeout', '2m']);
    const after = await activePods(client, ns, 'rs');
    assert.equal(after.length, 2);
    assert.ok(
      after.every((p) => !before.has(p.metadata.uid)),
      'every pod is new',
    );
    assert.ok(after.every((p) => p.metadata.annotations?.['kubectl.kubernetes.io/restartedAt'] !== undefined));
    const restarted = await getCloneSet(client, ns, 'rs');
    assert.deepEqual(
      restarted.spec.template.spec.containers.map((c) => c['env']),
      [undefined],
      'no env var: the containers are as the user wrote them',
    );

    await client.create(CLONESETS, ns, newCloneSet(ns, 'ip', 2, { spec: { updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } } }));
    await rolledOut(client, ns, 'ip', 2);
    const uids = new Set((await activePods(client, ns, 'ip')).map((p) => p.metadata.uid));
    const inPlace = await ok(['rollout', 'restart', 'ip', '-n', ns]);
    assert.match(inPlace, /metadata-only in-place update/);
    assert.match(await ok(['rollout', 'status', 'ip', '-n', ns, '--timeout', '2m']), /successfully rolled out/);
    const patched = await eventually(
      'both pods annotated in place',
      async () => {
        const pods = await activePods(client, ns, 'ip');
        return pods.length === 2 && pods.every((p) => p.metadata.annotations?.['kubectl.kubernetes.io/restartedAt'] !== undefined) ? pods : undefined;
      },
      { timeoutMs: 60_000 },
    );
    assert.ok(
      patched.every((p) => uids.has(p.metadata.uid)),
      'the same pods',
    );
  });

  it('restarts an InPlaceIfPossible CloneSet with --mode=recreate, and refuses --mode=in-place without kruise-daemon', async () => {
    await client.create(CLONESETS, ns, newCloneSet(ns, 'ipr', 2, { spec: { updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } } }));
    await rolledOut(client, ns, 'ipr', 2);
    const refused = await kubectlCloneset(['rollout', 'restart', 'ipr', '-n', ns, '--mode=in-place']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /would wait for ever/);
    const untouched = await getCloneSet(client, ns, 'ipr');
    assert.equal(untouched.spec.template.metadata?.annotations?.['kubectl.kubernetes.io/restartedAt'], undefined, 'a refused restart writes nothing');
    const original = new Set((await activePods(client, ns, 'ipr')).map((p) => p.metadata.uid));
    assert.match(await ok(['rollout', 'restart', 'ipr', '-n', ns, '--mode=recreate']), /every pod is deleted and created anew \(InPlaceIfPossible/);
    await ok(['rollout', 'status', 'ipr', '-n', ns, '--timeout', '2m']);
    const after = await activePods(client, ns, 'ipr');
    assert.equal(after.length, 2);
    assert.ok(
      after.every((p) => !original.has(p.metadata.uid)),
      'every pod is new',
    );
  });

  it('fails rollout status with the reason on ProgressDeadlineExceeded', async () => {
    // The new template's pods wait for a readiness gate nobody sets: they never become ready.
    await client.create(CLONESETS, ns, newCloneSet(ns, 'stuck', 2, { spec: { progressDeadlineSeconds: 3, updateStrategy: { type: 'ReCreate', maxUnavailable: 1 } } }));
    await rolledOut(client, ns, 'stuck', 2);
    const cs = await getCloneSet(client, ns, 'stuck');
    await client.patch(
      CLONESETS,
      ns,
      'stuck',
      {
        spec: {
          template: { spec: { readinessGates: [{ conditionType: 'example.com/never' }], containers: [{ ...cs.spec.template.spec.containers[0], image: 'nginx:mainline' }] } },
        },
      },
      'merge',
    );
    const started = Date.now();
    const r = await kubectlCloneset(['rollout', 'status', 'stuck', '-n', ns, '--timeout', '90s']);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, /cloneset "stuck" exceeded its progress deadline/);
    assert.ok(Date.now() - started < 60_000, 'it ends at the deadline, long before --timeout');
  });

  it('rollout status right after rollout undo of a rollout that missed its deadline exits 0, 10 times in a row', async () => {
    await client.create(CLONESETS, ns, newCloneSet(ns, 'undo', 2, { spec: { progressDeadlineSeconds: 3, updateStrategy: { type: 'ReCreate', maxUnavailable: 1 } } }));
    const good = await rolledOut(client, ns, 'undo', 2);
    const container = good.spec.template.spec.containers[0];
    const results: string[] = [];
    for (let i = 1; i <= 10; i++) {
      // A template whose pods wait for a readiness gate nobody sets: the rollout misses its 3 s deadline.
      await client.patch(
        CLONESETS,
        ns,
        'undo',
        { spec: { template: { spec: { readinessGates: [{ conditionType: 'example.com/never' }], containers: [{ ...container, image: `nginx:broken-${i}` }] } } } },
        'merge',
      );
      await eventually(
        `attempt ${i}: the deadline exceeded for the broken revision`,
        async () => {
          const cs = await getCloneSet(client, ns, 'undo');
          const c = cs.status?.conditions?.find((x) => x.type === 'Progressing');
          return cs.status?.observedGeneration === cs.metadata.generation &&
            c?.reason === 'ProgressDeadlineExceeded' &&
            c.message === `CloneSet revision ${cs.status?.updateRevision ?? '?'} has timed out progressing`
            ? true
            : undefined;
        },
        { timeoutMs: 60_000 },
      );
      assert.match(await ok(['rollout', 'undo', 'undo', '-n', ns]), /rolled back to revision/);
      const status = await kubectlCloneset(['rollout', 'status', 'undo', '-n', ns, '--timeout', '90s']);
      results.push(`${i}: exit ${status.code}${status.code === 0 ? '' : ` ${status.stderr.trim()}`}`);
    }
    assert.deepEqual(
      results,
      Array.from({ length: 10 }, (_, k) => `${k + 1}: exit 0`),
    );
    assert.ok((await activePods(client, ns, 'undo')).every((p) => imageOf(p) === container?.image));
  });

  it('plans a rollout blocked by maxUnavailable (no pod next, the unavailable pod named, the rest in update order); rollout status times out on it', async () => {
    await client.create(CLONESETS, ns, newCloneSet(ns, 'blocked', 4, { spec: { updateStrategy: { type: 'ReCreate', maxUnavailable: 1 } } }));
    await rolledOut(client, ns, 'blocked', 4);
    const cs = await getCloneSet(client, ns, 'blocked');
    await client.patch(
      CLONESETS,
      ns,
      'blocked',
      {
        spec: {
          template: { spec: { readinessGates: [{ conditionType: 'example.com/never' }], containers: [{ ...cs.spec.template.spec.containers[0], image: 'nginx:mainline' }] } },
        },
      },
      'merge',
    );
    // One pod is recreated at the new revision and stays not ready: the budget of 1 is spent.
    const stuckPod = await eventually(
      'one new pod, not ready',
      async () => {
        const pods = await activePods(client, ns, 'blocked');
        const fresh = pods.filter((p) => imageOf(p) === 'nginx:mainline');
        return pods.length === 4 && fresh.length === 1 ? fresh[0] : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const text = await ok(['plan', 'blocked', '-n', ns]);
    assert.match(text, /Next reconcile \(\w+\): nothing to write/);
    assert.match(text, new RegExp(`maxUnavailable: a budget of 1 unavailable pods \\(maxUnavailable 1\\); 1 unavailable now \\(${stuckPod.metadata.name ?? 'x'}\\): 3 more`));
    assert.match(text, /3 more pod\(s\) wait/);
    assert.equal((text.match(/ wait {2}blocked-/g) ?? []).length, 3);
    assert.match(text, /Not visible from outside the controller:\n {2}- expectations/);
    const json = JSON.parse(await ok(['plan', 'blocked', '-n', ns, '-o', 'json'])) as {
      actions: unknown[];
      explanation: { unavailable: string[]; candidates: { next: boolean }[] };
    };
    assert.deepEqual(json.actions, []);
    assert.deepEqual(json.explanation.unavailable, [stuckPod.metadata.name]);
    assert.ok(json.explanation.candidates.every((c) => !c.next));
    // Without a progress deadline, rollout status waits — until its own --timeout, with the reason.
    const timedOut = await kubectlCloneset(['rollout', 'status', 'blocked', '-n', ns, '--timeout', '3s']);
    assert.equal(timedOut.code, 1);
    assert.match(timedOut.stdout, /Waiting for rollout to finish: 1 out of 4 new replicas have been updated\.\.\./);
    assert.match(timedOut.stderr, /timed out waiting for the rollout of clonesets\.apps\.kruise\.io "blocked" to finish/);
  });

  it('shows the tree as JSON and as plain text when piped', async () => {
    await client.create(CLONESETS, ns, newCloneSet(ns, 'tree', 2));
    await rolledOut(client, ns, 'tree', 2);
    const view = JSON.parse(await ok(['get', 'tree', '-n', ns, '-o', 'json'])) as { status: string; revisions: { role: string; pods: { status: string }[] }[] };
    assert.equal(view.status, 'Healthy');
    assert.equal(view.revisions[0]?.role, 'update,current');
    assert.deepEqual(
      view.revisions[0]?.pods.map((p) => p.status),
      ['Running', 'Running'],
    );
    const plain = await ok(['get', 'tree', '-n', ns]);
    assert.match(plain, /└──# revision:1/);
    assert.doesNotMatch(plain, /\x1b\[/, 'no escape codes when piped');
  });

  it('fits the live tree of 50 pods into an 80×24 terminal: the header in every frame, no scrollback, q restores the screen', async () => {
    await client.create(CLONESETS, ns, newCloneSet(ns, 'tall', 50, { spec: { updateStrategy: { type: 'ReCreate', maxUnavailable: '50%' } } }));
    await rolledOut(client, ns, 'tall', 50);
    const term = new Terminal(80, 24);
    try {
      term.start(`kubectl cloneset get tall -n ${ns} --watch`);
      await eventually('the fitted tree in the terminal', async () => (/… \d+ more pods/.test(term.capture()) ? true : undefined), { timeoutMs: 30_000 });
      assert.equal(term.format('#{alternate_on}'), '1', 'the view is on the alternate screen');
      await ok(['set', 'image', 'tall', '-n', ns, 'nginx=nginx:mainline']);
      // Frames sampled while the rollout redraws the view many times a second.
      const frames: string[] = [];
      await eventually(
        '20 frames of the rollout',
        async () => {
          frames.push(term.capture());
          return frames.length >= 20 ? true : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );
      for (const [i, frame] of frames.entries()) {
        const lines = frame.replace(/\n+$/, '').split('\n');
        assert.match(lines[0] ?? '', /^Name: +tall$/, `frame ${i} starts with the header:\n${frame}`);
        assert.match(frame, /^Status: +\S/m, `frame ${i} shows the status`);
        assert.ok(lines.length <= 24, `frame ${i} fits 24 rows`);
        assert.ok(
          lines.every((l) => [...l].length <= 80),
          `frame ${i}: no line wider than 80:\n${frame}`,
        );
        assert.match(frame, /└── … \d+ more pods/, `frame ${i} folds the pods`);
      }
      assert.equal(term.format('#{history_size}'), '0', 'nothing scrolled off the screen');
      term.keys('q');
      term.keys('echo "exit=$?"', 'Enter');
      await eventually('the view ended on q', async () => (/exit=0/.test(term.capture()) ? true : undefined));
      assert.equal(term.format('#{alternate_on}'), '0', "the shell's screen is back");
      assert.doesNotMatch(term.capture(), /Name: +tall/, "the view left nothing on the shell's screen");
      assert.equal(term.format('#{history_size}'), '0', 'and nothing in the scrollback');
    } finally {
      term.stop();
    }
  });

  it('redraws the live tree in a real terminal during an in-place rollout', async () => {
    await client.create(
      CLONESETS,
      ns,
      newCloneSet(ns, 'live', 3, {
        spec: { updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1, inPlaceUpdateStrategy: { gracePeriodSeconds: 3 } } },
      }),
    );
    await rolledOut(client, ns, 'live', 3);
    const uids = new Set((await activePods(client, ns, 'live')).map((p) => p.metadata.uid));
    const term = new Terminal();
    try {
      term.start(`kubectl cloneset get live -n ${ns} --watch`);
      await eventually('the tree in the terminal', async () =>
        /Status: +✔ Healthy/.test(term.capture()) && (term.capture().match(/✔ Running/g) ?? []).length === 3 ? true : undefined,
      );
      assert.match(term.captureAnsi(), /\x1b\[32m✔ Healthy/, 'colours in a terminal');
      await ok(['set', 'image', 'live', '-n', ns, 'nginx=nginx:mainline']);
      // The grace period of an in-place update counts down in the view.
      await eventually('an in-place update in the terminal', async () => (/in-place → live-\w+: grace period \d+s left \(nginx\)/.test(term.capture()) ? true : undefined), {
        timeoutMs: 60_000,
      });
      assert.match(term.capture(), /Status: +◌ Progressing/);
      await eventually(
        'the finished rollout in the terminal',
        async () => {
          const screen = term.capture();
          return /Status: +✔ Healthy/.test(screen) && /└──# revision:2 .*update,current/.test(screen) && !/revision:1/.test(screen) ? screen : undefined;
        },
        { timeoutMs: 120_000 },
      );
      term.keys('C-c');
      term.keys('echo "exit=$?"', 'Enter');
      await eventually('the command ended on Ctrl-C', async () => (/exit=0/.test(term.capture()) ? true : undefined));
    } finally {
      term.stop();
    }
    // In place: the same pods.
    const after = await activePods(client, ns, 'live');
    assert.ok(after.every((p) => uids.has(p.metadata.uid) && imageOf(p) === 'nginx:mainline'));
  });
});
