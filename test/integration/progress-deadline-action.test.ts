// The action on a missed progress deadline (docs/features.md#progress-deadline-action; kubernetes#23211, Argo
// Rollouts' progressDeadlineAbort) on a real API server. A revision that never gets Ready is made with a readiness
// gate nobody sets (KWOK follows the kubelet rule: Ready needs every gate True).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet } from '../../src/api/cloneset.ts';
import type { KubeClient } from '../../src/kube/client.ts';
import { CLONESETS, CONTROLLER_REVISIONS, NAMESPACES, PODS } from '../../src/kube/resources.ts';
import type { ControllerRevision, Pod, PodTemplateSpec } from '../../src/kube/types.ts';
import { activePods, eventsOf, getCloneSet, isReady, newCloneSet, readyPods } from '../helpers/cloneset.ts';
import { eventually, kubeconfigPath, newNamespace, ROOT, startController, testClient, type ControllerProcess } from '../helpers/kube.ts';

/** `kubectl cloneset ARGS` with the plugin on PATH (docs/kubectl-plugin.md); stdout and stderr together. */
function kubectlCloneset(args: readonly string[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'plugin-bin-'));
  symlinkSync(path.join(ROOT, 'bin', 'kubectl-cloneset'), path.join(dir, 'kubectl-cloneset'));
  const r = spawnSync('kubectl', ['cloneset', ...args], {
    encoding: 'utf8',
    env: { ...process.env, PATH: `${dir}${path.delimiter}${process.env.PATH ?? ''}`, KUBECONFIG: kubeconfigPath() },
  });
  return `${r.stdout}${r.stderr}`;
}

const GATE = 'example.com/approved';

function withGate(t: PodTemplateSpec): PodTemplateSpec {
  return { ...t, spec: { ...t.spec, readinessGates: [{ conditionType: GATE }] } };
}

function manifest(ns: string, name: string, opts: { gated: boolean }): CloneSet {
  const cs = newCloneSet(ns, name, 3, {
    annotations: { 'cloneset-controller.io/progress-deadline-action': 'rollback' },
    spec: { progressDeadlineSeconds: 8, updateStrategy: { type: 'ReCreate', maxUnavailable: 1 } },
  });
  return opts.gated ? { ...cs, spec: { ...cs.spec, template: withGate(cs.spec.template) } } : cs;
}

/** What a gate controller would write: the readiness gate condition True. */
async function approve(client: KubeClient, ns: string, pod: Pod): Promise<void> {
  await client.patch(PODS, ns, pod.metadata.name ?? '', { status: { conditions: [{ type: GATE, status: 'True' }] } }, 'strategic', { subresource: 'status' });
}

/** A new image under a readiness gate nobody sets: this revision never gets Ready. */
async function pushNeverReadyRevision(client: KubeClient, ns: string, name: string): Promise<void> {
  const cs = await getCloneSet(client, ns, name);
  const template = withGate(cs.spec.template);
  const spec = template.spec;
  const containers = spec.containers.map((c) => ({ ...c, image: 'nginx:never-ready' }));
  await client.patch(
    CLONESETS,
    ns,
    name,
    [{ op: 'replace', path: '/spec/template', value: { ...template, spec: { ...spec, containers, readinessGates: [{ conditionType: 'example.com/never' }] } } }],
    'json',
  );
}

/** How often an event was recorded (the recorder folds repeats into one Event's count, as client-go does). */
const reasons = async (client: KubeClient, ns: string, name: string, reason: string): Promise<number> =>
  (await eventsOf(client, ns, name)).filter((e) => e.reason === reason).reduce((n, e) => n + (e.count ?? 1), 0);

describe('progress deadline action on a real API server', () => {
  let client: KubeClient;
  let ns: string;
  let controller: ControllerProcess;

  before(async () => {
    client = await testClient();
    ns = await newNamespace(client, 'deadline');
    controller = startController(ns);
  });
  after(async () => {
    await controller.stop();
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  it('rollback: a rollout that never gets Ready is rolled back to the current revision, which completes; event, condition and change-cause say so', async () => {
    await client.create<CloneSet>(CLONESETS, ns, manifest(ns, 'web', { gated: false }));
    await eventually('3 ready pods', () => readyPods(client, ns, 'web', 3), { timeoutMs: 90_000 });
    const before = await eventually('the first revision is current', async () => {
      const cs = await getCloneSet(client, ns, 'web');
      return cs.status?.currentRevision !== undefined && cs.status.updatedAvailableReplicas === 3 ? cs : undefined;
    });
    const image = before.spec.template.spec.containers[0]?.image;
    await pushNeverReadyRevision(client, ns, 'web');
    const bad = await eventually('the new revision observed', async () => {
      const st = (await getCloneSet(client, ns, 'web')).status;
      return st?.updateRevision !== undefined && st.updateRevision !== before.status?.currentRevision ? st.updateRevision : undefined;
    });
    const rolledBack = await eventually(
      'the CloneSet rolled back and available again',
      async () => {
        const cs = await getCloneSet(client, ns, 'web');
        const available = cs.status?.conditions?.find((c) => c.type === 'Progressing')?.reason === 'CloneSetAvailable';
        return available && cs.status?.updateRevision === before.status?.currentRevision && cs.status?.updatedReadyReplicas === 3 ? cs : undefined;
      },
      { timeoutMs: 120_000 },
    );
    assert.equal(rolledBack.spec.template.spec.containers[0]?.image, image);
    assert.equal(rolledBack.spec.template.spec.readinessGates, undefined);
    assert.equal(rolledBack.spec.updateStrategy?.paused ?? false, false);
    const taken = rolledBack.status?.conditions?.find((c) => c.type === 'ProgressDeadlineActionTaken');
    assert.equal(taken?.reason, 'RolledBack');
    assert.equal(taken?.message, `revision ${bad} missed its progress deadline: rolled back to ${before.status?.currentRevision ?? ''}`);
    assert.equal(await reasons(client, ns, 'web', 'ProgressDeadlineRollback'), 1);
    const revision = await client.get<ControllerRevision>(CONTROLLER_REVISIONS, ns, before.status?.currentRevision ?? '');
    assert.match(revision.metadata.annotations?.['kubernetes.io/change-cause'] ?? '', /^rolled back from web-\w+: it missed its progress deadline/);
    const pods = await activePods(client, ns, 'web');
    assert.equal(pods.filter(isReady).length, 3);
  });

  it('a rollback that itself misses the deadline pauses (never a second rollback), and a SIGKILL right after the rollback changes nothing', async () => {
    await client.create<CloneSet>(CLONESETS, ns, manifest(ns, 'gated', { gated: true }));
    const first = await eventually(
      '3 pods of the gated revision',
      async () => {
        const pods = await activePods(client, ns, 'gated');
        return pods.length === 3 && pods.every((p) => p.status?.phase === 'Running') ? pods : undefined;
      },
      { timeoutMs: 90_000 },
    );
    for (const pod of first) await approve(client, ns, pod);
    const before = await eventually(
      'the first revision available',
      async () => {
        const cs = await getCloneSet(client, ns, 'gated');
        return cs.status?.updatedAvailableReplicas === 3 ? cs : undefined;
      },
      { timeoutMs: 60_000 },
    );
    await pushNeverReadyRevision(client, ns, 'gated');
    // The rollback replaces the never-Ready pod by a pod of the first revision, whose gate nobody approves now.
    await eventually('the rollback', async () => ((await reasons(client, ns, 'gated', 'ProgressDeadlineRollback')) > 0 ? true : undefined), { timeoutMs: 90_000, intervalMs: 100 });
    await controller.kill9();
    controller = startController(ns);
    const paused = await eventually(
      'paused after the rollback missed its own deadline',
      async () => {
        const cs = await getCloneSet(client, ns, 'gated');
        return cs.spec.updateStrategy?.paused === true ? cs : undefined;
      },
      { timeoutMs: 90_000 },
    );
    assert.equal(paused.spec.template.spec.containers[0]?.image, before.spec.template.spec.containers[0]?.image, 'the rolled-back template stays');
    const record = JSON.parse(paused.metadata.annotations?.['cloneset-controller.io/progress-deadline-last-action'] ?? '{}') as { action?: string; from?: string };
    assert.equal(record.action, 'pause');
    assert.equal(record.from, before.status?.currentRevision);
    const taken = await eventually('the condition says paused', async () => {
      const c = (await getCloneSet(client, ns, 'gated')).status?.conditions?.find((x) => x.type === 'ProgressDeadlineActionTaken');
      return c?.reason === 'Paused' ? c : undefined;
    });
    assert.match(taken.message ?? '', /paused \(kubectl cloneset rollout resume to go on\)$/);
    assert.equal(await reasons(client, ns, 'gated', 'ProgressDeadlineRollback'), 1, 'exactly one rollback, also across the restart');
    assert.equal(await reasons(client, ns, 'gated', 'ProgressDeadlinePause'), 1);
    const status = kubectlCloneset(['rollout', 'status', 'gated', '-n', ns, '--watch=false']);
    assert.match(status, /\[progress deadline: paused at \S+: revision gated-\w+ missed its progress deadline: paused/);
    const plan = kubectlCloneset(['plan', 'gated', '-n', ns]);
    assert.match(plan, /Progress deadline action taken: \[progress deadline: paused/);
  });
});
