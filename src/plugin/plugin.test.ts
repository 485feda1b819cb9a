// The pure parts of kubectl-cloneset: the rollout verdict, merge patches, undo, restart, set image, the tree text
// and the plan's explanation (which must name the same pods the planner chose).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CloneSet, CloneSetStatus } from '../api/cloneset.ts';
import { planCloneSet, type Snapshot } from '../cloneset/plan/index.ts';
import { newRevision } from '../cloneset/plan/revisions.ts';
import { aCloneSet, aPod, plannerConfig, readyPods, revisions, sequentialIds, T0 } from '../cloneset/plan/testing/builders.ts';
import type { ControllerRevision, Pod } from '../kube/types.ts';
import { deletionFacts, describeAction, explainUpdate, podsUpdatedBy } from './explain.ts';
import { parseDuration, parseFlags } from './flags.ts';
import { complete, completionAnswer, completionScript } from './completion.ts';
import { objectName } from './session.ts';
import { historyRows, undoPatch, undoTarget } from './history.ts';
import { createMergePatch } from './merge-patch.ts';
import { cloneSetApiFor, v1beta1Patch } from './cloneset-api.ts';
import { ANNOTATION_RESTARTED_AT, ENV_RESTARTED_AT, planRestart } from './restart.ts';
import { rolloutVerdict, watchRetryDelayMs } from './rollout-status.ts';
import { ApiError, ConnectionError } from '../kube/api-error.ts';
import { parseImageArgs, planSetImage } from './set-image.ts';
import { buildView, clip, renderView } from './tree.ts';

const STATUS: CloneSetStatus = {
  observedGeneration: 2,
  replicas: 4,
  readyReplicas: 4,
  availableReplicas: 4,
  updatedReplicas: 4,
  updatedReadyReplicas: 4,
  updatedAvailableReplicas: 4,
  expectedUpdatedReplicas: 4,
};

function withStatus(status: Partial<CloneSetStatus>, spec: Partial<CloneSet['spec']> = {}): CloneSet {
  const cs = aCloneSet('web').replicas(4).build();
  return { ...cs, metadata: { ...cs.metadata, generation: 2 }, spec: { ...cs.spec, ...spec }, status: { ...STATUS, ...status } };
}

describe('rollout status verdict', () => {
  test('waits for the controller to observe the spec', () => {
    assert.deepEqual(rolloutVerdict(withStatus({ observedGeneration: 1 })), { done: false, message: 'Waiting for cloneset "web" spec update to be observed...' });
  });
  test('counts updated, then available replicas, then old ones terminating', () => {
    assert.match(rolloutVerdict(withStatus({ updatedReplicas: 1 })).message, /1 out of 4 new replicas have been updated/);
    assert.match(rolloutVerdict(withStatus({ updatedAvailableReplicas: 3 })).message, /3 of 4 updated replicas are available/);
    assert.match(rolloutVerdict(withStatus({ replicas: 5 })).message, /1 old replicas are pending termination/);
  });
  test('is complete for the partition in force', () => {
    const v = rolloutVerdict(withStatus({ updatedReplicas: 3, updatedAvailableReplicas: 3, expectedUpdatedReplicas: 3 }, { updateStrategy: { partition: 1 } }));
    assert.deepEqual(v, { done: true, message: 'cloneset "web" successfully rolled out (partition 1: 3 of 4 replicas updated)' });
  });
  test('fails on ProgressDeadlineExceeded', () => {
    const v = rolloutVerdict(withStatus({ updatedReplicas: 1, conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'timed out' }] }));
    assert.deepEqual(v, { done: false, failed: true, message: 'cloneset "web" exceeded its progress deadline: timed out' });
  });
  test('fails on a ProgressDeadlineExceeded that names the current update revision', () => {
    const timedOut = { type: 'Progressing' as const, status: 'False' as const, reason: 'ProgressDeadlineExceeded', message: 'CloneSet revision web-new has timed out progressing' };
    const v = rolloutVerdict(withStatus({ updatedReplicas: 1, updateRevision: 'web-new', conditions: [timedOut] }));
    assert.deepEqual(v, { done: false, failed: true, message: 'cloneset "web" exceeded its progress deadline: CloneSet revision web-new has timed out progressing' });
  });
  test('ignores a ProgressDeadlineExceeded left from the revision before (right after an undo)', () => {
    const stale = { type: 'Progressing' as const, status: 'False' as const, reason: 'ProgressDeadlineExceeded', message: 'CloneSet revision web-bad has timed out progressing' };
    const waiting = rolloutVerdict(withStatus({ updatedReplicas: 1, updateRevision: 'web-good', conditions: [stale] }));
    assert.deepEqual(waiting, { done: false, message: 'Waiting for rollout to finish: 1 out of 4 new replicas have been updated...' });
    assert.equal(rolloutVerdict(withStatus({ updateRevision: 'web-good', conditions: [stale] })).done, true);
  });
});

describe('rollout status watch retries', () => {
  const status = (code: number, reason: string, retryAfterSeconds?: number): ApiError =>
    new ApiError(code, { kind: 'Status', code, reason, message: reason, ...(retryAfterSeconds === undefined ? {} : { details: { retryAfterSeconds } }) }, reason);
  test('a compacted resourceVersion (410) or an ERROR event: read again and watch on at once', () => {
    assert.equal(watchRetryDelayMs(status(410, 'Expired')), 0);
    assert.equal(watchRetryDelayMs(new Error('watch error: {"code":500}')), 0);
  });
  test('429 "storage is (re)initializing" (a CRD just updated) is waited out for its Retry-After, capped at 10 s', () => {
    assert.equal(watchRetryDelayMs(status(429, 'TooManyRequests', 1)), 1000);
    assert.equal(watchRetryDelayMs(status(429, 'TooManyRequests')), 1000);
    assert.equal(watchRetryDelayMs(status(429, 'TooManyRequests', 60)), 10_000);
  });
  test('a 5xx or an unreachable API server is retried after a second', () => {
    assert.equal(watchRetryDelayMs(status(503, 'ServiceUnavailable')), 1000);
    assert.equal(watchRetryDelayMs(new ConnectionError('https://127.0.0.1:6443', 'GET /apis', new Error('ECONNRESET'))), 1000);
  });
  test('anything else is the answer: forbidden, not found, a bad request', () => {
    assert.equal(watchRetryDelayMs(status(403, 'Forbidden')), undefined);
    assert.equal(watchRetryDelayMs(status(404, 'NotFound')), undefined);
    assert.equal(watchRetryDelayMs(status(400, 'BadRequest')), undefined);
  });
});

describe('flags', () => {
  test('kubectl spellings', () => {
    const f = parseFlags(['rollout', 'status', 'x', '-n=ns', '--watch=false', '--timeout', '1m30s', '-ojson']);
    assert.deepEqual([f.namespace, f.watch, f.timeoutMs, f.output, f.positionals], ['ns', false, 90_000, 'json', ['rollout', 'status', 'x']]);
    assert.throws(() => parseDuration('timeout', '5 minutes'), /invalid argument "5 minutes" for "--timeout" flag/);
    assert.throws(() => parseFlags(['get', 'x', '-o', 'table']), /allowed formats are: json,yaml,wide/);
  });
  test('-w=false, -A, -l and --version as kubectl takes them', () => {
    const f = parseFlags(['get', '-A', '-l', 'app=web', '-w=false', '--version']);
    assert.deepEqual([f.allNamespaces, f.selector, f.watch, f.version], [true, 'app=web', false, true]);
    assert.equal(parseFlags(['get', 'x', '-w=true']).watch, true);
  });
  test("errors in pflag's words, without node's advice about --", () => {
    assert.throws(
      () => parseFlags(['get', '--foo']),
      (e: Error) => e.message === "unknown flag: --foo\nSee 'kubectl cloneset --help' for usage.",
    );
    assert.throws(() => parseFlags(['get', 'x', '-n']), /^UsageError: flag needs an argument: --namespace/);
    assert.throws(() => parseFlags(['get', 'x', '--watch=maybe']), /invalid argument for "-w, --watch" flag: write --watch, --watch=true or --watch=false/);
  });
  test('TYPE/NAME: cloneset/web, clonesets.apps.kruise.io/web; another type is refused', () => {
    assert.equal(objectName('web'), 'web');
    assert.equal(objectName('cloneset/web'), 'web');
    assert.equal(objectName('clonesets.apps.kruise.io/web'), 'web');
    assert.throws(() => objectName('deployment/web'), /works on CloneSets only; write NAME or cloneset\/NAME/);
  });
});

describe('completion', () => {
  test('commands, rollout subcommands, flag values, and a NAME from the cluster', () => {
    assert.deepEqual(complete(['ro']), { candidates: ['rollout'], need: 'none' });
    assert.deepEqual(complete(['rollout', '']).candidates, ['status', 'history', 'undo', 'pause', 'resume', 'restart']);
    assert.deepEqual(complete(['get', '-o', '']).candidates, ['json', 'yaml', 'wide']);
    assert.deepEqual(complete(['rollout', 'restart', 'web', '--mode', 'in']).candidates, ['in-place']);
    assert.equal(complete(['rollout', 'status', '']).need, 'cloneset-names');
    assert.equal(complete(['-n', 'shop', 'get', '']).need, 'cloneset-names');
    assert.equal(complete(['get', '-n', '']).need, 'namespaces');
    assert.deepEqual(complete(['rollout', 'status', '--t']).candidates, ['--timeout']);
    assert.equal(completionAnswer(['a', 'b']), 'a\nb\n:4\n');
  });
  test('bash and zsh scripts call __complete', () => {
    assert.match(completionScript('bash') ?? '', /complete -o default -F _kubectl_cloneset kubectl-cloneset/);
    assert.match(completionScript('zsh') ?? '', /compdef _kubectl_cloneset kubectl-cloneset/);
    assert.equal(completionScript('fish'), undefined);
  });
});

describe('createMergePatch', () => {
  test('changed keys, removed keys as null, lists whole', () => {
    assert.deepEqual(createMergePatch({ a: 1, b: { c: 2, d: 3 }, l: [1] }, { a: 1, b: { c: 4 }, l: [1, 2], n: 'x' }), { b: { c: 4, d: null }, l: [1, 2], n: 'x' });
    assert.equal(createMergePatch({ a: [1] }, { a: [1] }), undefined);
  });
});

function revisionOf(cs: CloneSet, number: number, image: string): ControllerRevision {
  const withImage: CloneSet = { ...cs, spec: { ...cs.spec, template: { ...cs.spec.template, spec: { ...cs.spec.template.spec, containers: [{ name: 'main', image }] } } } };
  return newRevision(withImage, number, 0);
}

describe('rollout history and undo', () => {
  const base = aCloneSet('web').replicas(2).build();
  const cs: CloneSet = { ...base, metadata: { ...base.metadata, uid: 'uid-web', resourceVersion: '7' } };
  const r1 = revisionOf(cs, 1, 'nginx:1');
  const r2 = revisionOf(cs, 2, 'nginx:2');
  const current: CloneSet = {
    ...cs,
    spec: {
      ...cs.spec,
      template: { ...cs.spec.template, metadata: { ...cs.spec.template.metadata, annotations: { added: 'later' } }, spec: { containers: [{ name: 'main', image: 'nginx:2' }] } },
    },
    status: { ...STATUS, updateRevision: r2.metadata.name ?? '', currentRevision: r2.metadata.name ?? '' },
  };
  test('rows are numbered, with images and roles', () => {
    const rows = historyRows(current, [r2, r1]);
    assert.deepEqual(
      rows.map((r) => [r.revision, r.role, r.images]),
      [
        [1, '', 'main=nginx:1'],
        [2, 'current,update', 'main=nginx:2'],
      ],
    );
  });
  test('undo goes to the previous revision and restores its template exactly', () => {
    const target = undoTarget(current, [r1, r2], undefined);
    assert.ok(target.ok);
    assert.equal(target.revision.revision, 1);
    const patch = undoPatch(current, target.revision, target.template) as {
      metadata: unknown;
      spec: { template: { metadata: { annotations: unknown }; spec: { containers: { image: string }[] } } };
    };
    assert.deepEqual(patch.metadata, { resourceVersion: '7' });
    assert.deepEqual(patch.spec.template.metadata.annotations, null, 'an annotation the old template lacks is removed');
    assert.equal(patch.spec.template.spec.containers[0]?.image, 'nginx:1');
    const same = undoTarget(current, [r1, r2], 2);
    assert.ok(same.ok);
    const onR2: CloneSet = { ...current, spec: { ...current.spec, template: { ...cs.spec.template, spec: { containers: [{ name: 'main', image: 'nginx:2' }] } } } };
    assert.equal(undoPatch(onR2, same.revision, same.template), undefined, 'already the template of revision 2: nothing to do');
    assert.deepEqual(undoTarget(current, [r1, r2], 9), {
      ok: false,
      message: 'unable to find the specified revision 9 of cloneset "web" (revisions: 1, 2); see kubectl cloneset rollout history web',
    });
  });
});

describe('rollout restart', () => {
  const recreate = aCloneSet('web').replicas(2).build();
  const inPlace: CloneSet = { ...recreate, spec: { ...recreate.spec, updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 } } };
  const daemonPod: Pod = { ...aPod(inPlace).ofRevision('r1').build() };
  const withDaemon: Pod = { ...daemonPod, metadata: { ...daemonPod.metadata, annotations: { 'apps.kruise.io/runtime-containers-meta': '{}' } } };
  type Patch = {
    spec: { template: { metadata: { annotations: Record<string, string> }; spec?: { containers: { env: { name: string; value?: string; valueFrom?: unknown }[] }[] } } };
  };
  test('ReCreate: only the kubectl.kubernetes.io/restartedAt template annotation, as kubectl writes it; every pod is recreated', () => {
    const plan = planRestart(recreate, [], 'auto', '2025-01-02T03:04:05Z');
    assert.ok(plan.ok);
    assert.equal(plan.mode, 'recreate');
    assert.deepEqual(plan.patch, { spec: { template: { metadata: { annotations: { [ANNOTATION_RESTARTED_AT]: '2025-01-02T03:04:05Z' } } } } });
    assert.match(plan.effect, /every pod is deleted and created anew/);
  });
  test('InPlaceIfPossible without kruise-daemon, default mode: the annotation alone, a metadata-only in-place update that needs no daemon', () => {
    const plan = planRestart(inPlace, [daemonPod], 'auto', 't');
    assert.ok(plan.ok);
    assert.deepEqual(plan.patch, { spec: { template: { metadata: { annotations: { [ANNOTATION_RESTARTED_AT]: 't' } } } } });
    assert.match(plan.effect, /metadata-only in-place update.*containers keep running/);
    assert.match(plan.effect, /--mode=recreate/);
  });
  test('--mode=in-place without kruise-daemon: refused with what to do; --mode=recreate on InPlaceIfPossible: a literal env value', () => {
    const refused = planRestart(inPlace, [daemonPod], 'in-place', 't');
    assert.ok(!refused.ok);
    assert.match(refused.message, /would wait for ever/);
    assert.match(refused.message, /--mode=recreate/);
    const recreated = planRestart(inPlace, [daemonPod], 'recreate', 't');
    assert.ok(recreated.ok);
    assert.match(recreated.effect, /every pod is deleted and created anew \(InPlaceIfPossible: an env value cannot change in place/);
    assert.deepEqual((recreated.patch as Patch).spec.template.spec?.containers[0]?.env.at(-1), { name: ENV_RESTARTED_AT, value: 't' });
  });
  test('in place with kruise-daemon: the env var reads the annotation; once it is there only the annotation changes', () => {
    const first = planRestart(inPlace, [withDaemon], 'in-place', 't1');
    assert.ok(first.ok);
    assert.equal(first.mode, 'in-place');
    assert.match(first.effect, /first in-place restart/);
    const env = (first.patch as Patch).spec.template.spec?.containers[0]?.env ?? [];
    const after: CloneSet = {
      ...inPlace,
      spec: {
        ...inPlace.spec,
        template: { ...inPlace.spec.template, spec: { ...inPlace.spec.template.spec, containers: inPlace.spec.template.spec.containers.map((c) => ({ ...c, env })) } },
      },
    };
    const second = planRestart(after, [withDaemon], 'auto', 't2');
    assert.ok(second.ok);
    assert.equal((second.patch as Patch).spec.template.spec, undefined, 'no container change: an in-place update');
    assert.match(second.effect, /updated in place/);
  });
});

describe('writes through apps.kruise.io/v1beta1 (the preferred version)', () => {
  const rolling = aCloneSet('web').build();
  const onDelete: CloneSet = { ...rolling, spec: { ...rolling.spec, updateStrategy: { type: 'OnDelete' } } };
  test('rollout fields move under updateStrategy.rollingUpdate; replicas, template and metadata keep their path', () => {
    assert.deepEqual(v1beta1Patch(rolling, { spec: { updateStrategy: { paused: true } } }), { spec: { updateStrategy: { rollingUpdate: { paused: true } } } });
    assert.deepEqual(v1beta1Patch(onDelete, { spec: { replicas: 3 } }), { spec: { replicas: 3 } });
    const template = { metadata: { resourceVersion: '7' }, spec: { template: { metadata: { annotations: { a: 'b' } } } } };
    assert.deepEqual(v1beta1Patch(onDelete, template), template);
  });
  test('an OnDelete CloneSet without a rollingUpdate block gets the partition and maxUnavailable admission requires with it', () => {
    assert.deepEqual(v1beta1Patch(onDelete, { spec: { updateStrategy: { paused: true } } }), {
      spec: { updateStrategy: { rollingUpdate: { paused: true, partition: 0, maxUnavailable: '20%' } } },
    });
  });
  test('discovery picks the preferred version, else the newest one this plugin knows', () => {
    assert.equal(cloneSetApiFor('v1beta1')?.resource.version, 'v1beta1');
    assert.equal(cloneSetApiFor('v1alpha1')?.resource.version, 'v1alpha1');
    assert.equal(cloneSetApiFor('v2'), undefined);
  });
});

describe('set image', () => {
  const cs = aCloneSet('web').build();
  test('sets the named container, sends the whole list, refuses unknown containers', () => {
    const images = parseImageArgs(['main=nginx:2']);
    assert.ok(images instanceof Map);
    const plan = planSetImage(cs, images);
    assert.ok(plan.ok && plan.changed);
    assert.equal(parseImageArgs(['main']), 'invalid argument "main": expected container=image (or *=image)');
    const bad = planSetImage(cs, new Map([['nope', 'x']]));
    assert.ok(!bad.ok);
    assert.match(bad.message, /unable to find container named "nope"/);
  });
});

describe('tree', () => {
  test('plain without a terminal, coloured in one; pods under their revision', () => {
    const cs0 = aCloneSet('web').replicas(2).build();
    const r1 = revisionOf({ ...cs0, metadata: { ...cs0.metadata, uid: cs0.metadata.uid ?? 'u' } }, 1, 'nginx:1');
    const rev: ControllerRevision = { ...r1, metadata: { ...r1.metadata, name: 'web-r1' } };
    const cs: CloneSet = {
      ...cs0,
      status: {
        ...STATUS,
        replicas: 2,
        updatedReplicas: 2,
        readyReplicas: 2,
        availableReplicas: 2,
        updatedReadyReplicas: 2,
        updatedAvailableReplicas: 2,
        expectedUpdatedReplicas: 2,
        observedGeneration: cs0.metadata.generation ?? 0,
        updateRevision: 'web-r1',
        currentRevision: 'web-r1',
      },
    };
    const pods = readyPods(cs, 2).map((p) => ({ ...p, spec: { ...p.spec, nodeName: 'node-a' } }));
    const view = buildView(cs, [rev], pods, T0 + 65_000);
    const plain = renderView(view, { colour: false, wide: false });
    assert.doesNotMatch(plain, /\x1b\[/);
    assert.match(plain, /Status: +✔ Healthy/);
    assert.match(plain, /└──# revision:1 +Revision +\S+ +update,current {2}web-r1 {2}main=nginx:1/);
    assert.equal((plain.match(/ {3}[├└]──□ web-\w+ +Pod +✔ Running +\S+ +ready:\d\/1( not-ready)? {2}lifecycle:Normal {2}node-a {2}restarts:0/g) ?? []).length, 2);
    assert.match(renderView(view, { colour: true, wide: false }), /\x1b\[32m✔ Healthy\x1b\[0m/);
    assert.equal(view.status, 'Healthy', 'the data (-o json|yaml) carries the word, no glyph');
  });

  test('fitted to a terminal of 80×24: the header stays, 50 pods fold into "… N more pods", no line is wider than 80', () => {
    const cs0 = aCloneSet('web').replicas(50).build();
    const r1 = revisionOf({ ...cs0, metadata: { ...cs0.metadata, uid: cs0.metadata.uid ?? 'u' } }, 1, 'nginx:1');
    const rev: ControllerRevision = { ...r1, metadata: { ...r1.metadata, name: 'web-r1' } };
    const cs: CloneSet = {
      ...cs0,
      status: {
        ...STATUS,
        replicas: 50,
        observedGeneration: cs0.metadata.generation ?? 0,
        updateRevision: 'web-r1',
        currentRevision: 'web-r1',
        conditions: [{ type: 'FailedScale', status: 'True', message: 'a very long message '.repeat(10) }],
      },
    };
    const pods = readyPods(cs, 50).map((p) => ({ ...p, spec: { ...p.spec, nodeName: 'a-node-with-a-rather-long-name-for-the-info-column' } }));
    const lines = renderView(buildView(cs, [rev], pods, T0 + 65_000), { colour: false, wide: false, width: 80, height: 23 }).split('\n');
    assert.equal(lines.length, 23);
    assert.match(lines[0] ?? '', /^Name: +web$/);
    assert.ok(
      lines.every((l) => [...l].length <= 80),
      lines.filter((l) => [...l].length > 80).join('\n'),
    );
    // 23 rows − 8 header − table header − CloneSet row = 13: the revision, 11 pods and the fold.
    assert.equal(lines.filter((l) => /──□ web-/.test(l)).length, 11);
    assert.match(lines[22] ?? '', /└── … 39 more pods$/);
    assert.equal(
      lines.find((l) => l.startsWith('Conditions:')),
      'Conditions:      FailedScale=True: a very long message a very long message a…',
    );
  });

  test('clip cuts at a word boundary and marks the cut', () => {
    assert.equal(clip('ready:1/1  lifecycle:Normal  node-a', 20), 'ready:1/1…');
    assert.equal(clip('short', 20), 'short');
    assert.equal(clip('averyveryverylongword', 10), 'averyvery…');
  });
});

describe('plan explanation', () => {
  function explainFor(cs: CloneSet, pods: readonly Pod[]): { chosen: string[]; explained: ReturnType<typeof explainUpdate> } {
    const s: Snapshot = { cloneSet: cs, pods, pvcs: [], nodes: new Map(), nowMs: T0 };
    const revs = revisions(cs, 'r1', 'r2');
    const plan = planCloneSet(s, revs, plannerConfig(), sequentialIds());
    return { chosen: podsUpdatedBy(plan.actions), explained: explainUpdate(s, revs, plannerConfig(), plan.claimed, plan.actions) };
  }
  test('names the pods the planner chose, first in the order', () => {
    const cs = aCloneSet().replicas(4).maxUnavailable(1).build();
    const { chosen, explained } = explainFor(cs, readyPods(cs, 4));
    assert.equal(chosen.length, 1);
    assert.deepEqual(
      explained.candidates.filter((c) => c.next).map((c) => c.pod),
      chosen,
    );
    assert.equal(explained.candidates[0]?.pod, chosen[0]);
    assert.match(
      explained.blockers.join('\n'),
      /maxUnavailable: a budget of 1 unavailable pods \(maxUnavailable 1\); 0 unavailable now and 1 taken down by this pass: 3 more pod\(s\) wait/,
    );
  });
  test('blocked by an unavailable pod: nothing chosen, the pod named', () => {
    const cs = aCloneSet().replicas(4).maxUnavailable(1).build();
    const stuck = aPod(cs).ofRevision('r2').instanceId('stuck').running().build();
    const { chosen, explained } = explainFor(cs, [...readyPods(cs, 3), stuck]);
    assert.deepEqual(chosen, []);
    assert.deepEqual(explained.unavailable, [stuck.metadata.name]);
    assert.equal(explained.candidates.length, 3);
  });
  test('paused and partition are named as blockers', () => {
    const paused = aCloneSet().replicas(2).paused().build();
    assert.match(explainFor(paused, readyPods(paused, 2)).explained.blockers.join('\n'), /^paused: updateStrategy.paused is true/);
    const part = aCloneSet().replicas(2).partition(1).build();
    const pods = [...readyPods(part, 1), ...readyPods(part, 1, 'r2')];
    assert.match(explainFor(part, pods).explained.blockers.join('\n'), /^partition: 1 pods stay on the current revision/);
  });
  test('a scale-in says which pods go and the facts that put them first', () => {
    const cs = aCloneSet().replicas(2).build();
    const pending = aPod(cs).ofRevision('r1').instanceId('pendx').pending().build();
    const pods = [...readyPods(cs, 2), pending];
    const plan = planCloneSet({ cloneSet: cs, pods, pvcs: [], nodes: new Map(), nowMs: T0 }, revisions(cs, 'r1'), plannerConfig(), sequentialIds());
    const del = plan.actions.find((a) => a.kind === 'DeletePods');
    assert.ok(del !== undefined && del.kind === 'DeletePods');
    assert.equal(describeAction(del), `delete pod ${pending.metadata.name ?? ''} (scale in)`);
    assert.match(deletionFacts(pending, 'sample-r1', T0), /^update revision, (not scheduled|phase Pending), not ready/);
  });
  test('a pod held by a lifecycle hook is named with its hook', () => {
    const cs = aCloneSet()
      .replicas(2)
      .preDeleteHook({ labelsHandler: { 'example.com/hold': 'true' } })
      .build();
    const held = aPod(cs).ofRevision('r1').instanceId('heldx').state('PreparingDelete').ready().build();
    const hooked: Pod = { ...held, metadata: { ...held.metadata, labels: { ...held.metadata.labels, 'example.com/hold': 'true' } } };
    const { explained } = explainFor(cs, [...readyPods(cs, 2), hooked]);
    assert.ok(
      explained.blockers.includes(`lifecycle hook preDelete: pod ${hooked.metadata.name ?? ''} waits in PreparingDelete until its hook labels/finalizers are removed`),
      explained.blockers.join('\n'),
    );
  });
});
