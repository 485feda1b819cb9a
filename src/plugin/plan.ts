// `plan NAME`: a dry run of the next reconcile. Reads a snapshot from the live cluster (CloneSet, its pods, PVCs,
// revisions, the pods' nodes, the clock), resolves the revisions read-only, runs the controller's pure planner
// (cloneset/plan/index.ts) on it and prints what it would write and why. Writes nothing.
import { randomInt } from 'node:crypto';
import { stringify } from 'yaml';
import type { CloneSet } from '../api/cloneset.ts';
import { LABEL_RETAINED_BY, pvcResizePolicyOf } from '../api/extensions.ts';
import { FEATURE_GATE_DEFAULTS, type FeatureGates } from '../api/well-known.ts';
import { parseFeatureGates, parseSurgeRule } from '../config.ts';
import { planCloneSet, type PlannerConfig, type ResolvedRevisions, type Snapshot } from '../cloneset/plan/index.ts';
import { randomInstanceIdSource } from '../cloneset/plan/instance-ids.ts';
import { chooseRevisions, templateFromRevision } from '../cloneset/plan/revisions.ts';
import { selectorProblem } from '../cloneset/plan/selector-check.ts';
import { controllerRefOf } from '../kube/owner-refs.ts';
import { matchesLabelSelector, selectorToString } from '../kube/selectors.ts';
import { CONTROLLER_REVISIONS, NODES, PODS, PVCS, STORAGE_CLASSES } from '../kube/resources.ts';
import type { ControllerRevision, Node, PersistentVolumeClaim, Pod, StorageClass } from '../kube/types.ts';
import { deletionFacts, describeAction, explainUpdate, UNKNOWABLE, type Explanation } from './explain.ts';
import type { PlanAction } from '../cloneset/plan/actions.ts';
import type { Flags, OutputFormat } from './flags.ts';
import { getCloneSet, PluginError, type Session } from './session.ts';
import { deadlineActionNote } from './rollout-status.ts';

export interface PlanReport {
  readonly cloneSet: string;
  readonly namespace: string;
  readonly observedAt: string;
  readonly revisions: { readonly current: string; readonly update: string; readonly pending?: string };
  readonly pods: { readonly active: number; readonly updated: number; readonly unavailable: readonly string[] };
  readonly phase: string;
  readonly actions: readonly { readonly kind: string; readonly pod?: string; readonly text: string }[];
  readonly events: readonly string[];
  readonly plannerNotes: readonly string[];
  readonly explanation: Explanation;
  readonly requeueAfterMs?: number;
  readonly cannotKnow: readonly string[];
  /** The last action of cloneset-controller.io/progress-deadline-action (docs/features.md#progress-deadline-action). */
  readonly progressDeadlineAction?: string;
}

export function plannerConfigOf(flags: Flags): PlannerConfig {
  let gates: FeatureGates = FEATURE_GATE_DEFAULTS;
  try {
    if (flags.featureGates !== undefined) gates = parseFeatureGates(flags.featureGates);
    const surgeRule = parseSurgeRule(flags.surgeRule ?? 'sustained');
    return { gates, excludePreparingDelete: flags.excludePreparingDelete, surgeRule };
  } catch (e) {
    throw new PluginError(e instanceof Error ? e.message : String(e));
  }
}

const isOwnedBy =
  (uid: string) =>
  (o: { metadata: { ownerReferences?: readonly { uid: string }[] } }): boolean =>
    (o.metadata.ownerReferences ?? []).some((r) => r.uid === uid);

/** The snapshot the controller would load from its caches, read from the API instead. */
export async function readSnapshot(s: Session, cs: CloneSet, nowMs: number): Promise<{ snapshot: Snapshot; revisions: readonly ControllerRevision[] }> {
  const uid = cs.metadata.uid ?? '';
  const [pods, pvcs, revs] = await Promise.all([
    s.client.listAll<Pod>(PODS, s.namespace),
    s.client.listAll<PersistentVolumeClaim>(PVCS, s.namespace),
    s.client.listAll<ControllerRevision>(CONTROLLER_REVISIONS, s.namespace, { labelSelector: selectorToString(cs.spec.selector) }),
  ]);
  const owned = pods.items.filter(isOwnedBy(uid));
  const nodes = new Map<string, Node>();
  const nodeNames = new Set(owned.map((p) => p.spec.nodeName ?? '').filter((n) => n !== ''));
  if (nodeNames.size > 0) {
    for (const n of (await s.client.listAll<Node>(NODES, undefined)).items) if (nodeNames.has(n.metadata.name ?? '')) nodes.set(n.metadata.name ?? '', n);
  }
  const revisions = revs.items.filter((r) => {
    const owner = controllerRefOf(r);
    return (owner === undefined || owner.uid === uid) && matchesLabelSelector(cs.spec.selector, r.metadata.labels ?? {});
  });
  // Our extensions (docs/features.md#beyond-kruise): the retained PVCs, and the StorageClasses for in-place resize.
  const retainedPvcs = pvcs.items.filter((c) => c.metadata.labels?.[LABEL_RETAINED_BY] === cs.metadata.name);
  const storageClasses =
    pvcResizePolicyOf(cs) === undefined
      ? undefined
      : new Map((await s.client.listAll<StorageClass>(STORAGE_CLASSES, undefined)).items.map((c) => [c.metadata.name ?? '', c] as const));
  return {
    snapshot: {
      cloneSet: cs,
      pods: owned,
      pvcs: pvcs.items.filter(isOwnedBy(uid)).filter((c) => c.metadata.deletionTimestamp === undefined),
      nodes,
      nowMs,
      ...(retainedPvcs.length > 0 ? { retainedPvcs } : {}),
      ...(storageClasses !== undefined ? { storageClasses } : {}),
    },
    revisions,
  };
}

function template(rev: ControllerRevision): { name: string; template: NonNullable<ReturnType<typeof templateFromRevision>> } {
  const t = templateFromRevision(rev);
  if (t === undefined) throw new PluginError(`ControllerRevision ${rev.metadata.name ?? ''} holds no pod template in data.spec.template`);
  return { name: rev.metadata.name ?? '', template: t };
}

/** planRevisions (cloneset/plan/pass.ts) read-only: what the controller would use, and what it would first create or renumber. */
export function resolveReadOnly(cs: CloneSet, revisions: readonly ControllerRevision[]): { resolved: ResolvedRevisions; pending?: string } {
  const choice = chooseRevisions(cs, revisions);
  switch (choice.kind) {
    case 'use':
      return { resolved: { current: template(choice.current), update: template(choice.update), collisionCount: choice.collisionCount, history: revisions } };
    case 'bumpExisting': {
      const current = choice.current ?? choice.updated;
      return {
        resolved: {
          current: template(current),
          update: template(choice.updated),
          collisionCount: choice.collisionCount,
          history: [...revisions.filter((r) => r.metadata.name !== choice.updated.metadata.name), choice.updated],
        },
        pending: `the controller first renumbers ControllerRevision ${choice.updated.metadata.name ?? ''} to revision ${choice.newNumber} (a rollback to an earlier template)`,
      };
    }
    case 'create': {
      const current = choice.current ?? choice.candidate;
      return {
        resolved: { current: template(current), update: template(choice.candidate), collisionCount: choice.collisionCount, history: [...revisions, choice.candidate] },
        pending: `the controller first creates ControllerRevision ${choice.candidate.metadata.name ?? ''} (revision ${choice.candidate.revision}) for the new template`,
      };
    }
  }
}

export async function planCommand(s: Session, name: string, flags: Flags): Promise<PlanReport> {
  const cs = await getCloneSet(s, name);
  const problem = selectorProblem(cs);
  if (problem !== undefined) throw new PluginError(`the controller does not act on cloneset "${name}": ${problem}`);
  const cfg = plannerConfigOf(flags);
  const nowMs = Date.now();
  const { snapshot, revisions } = await readSnapshot(s, cs, nowMs);
  const { resolved, pending } = resolveReadOnly(cs, revisions);
  const plan = planCloneSet(snapshot, resolved, cfg, randomInstanceIdSource(randomInt));
  const explanation = explainUpdate(snapshot, resolved, cfg, plan.claimed, plan.actions);
  const updated = plan.claimed.filter((p) => explanation.candidates.every((c) => c.pod !== p.metadata.name)).length;
  return {
    cloneSet: name,
    namespace: s.namespace,
    observedAt: new Date(nowMs).toISOString(),
    revisions: { current: resolved.current.name, update: resolved.update.name, ...(pending !== undefined ? { pending } : {}) },
    pods: { active: plan.claimed.length, updated, unavailable: explanation.unavailable },
    phase: plan.phase,
    actions: plan.actions.map((a) => ({ kind: a.kind, ...('pod' in a ? { pod: a.pod.name } : {}), text: withDeletionFacts(a, snapshot, resolved.update.name) })),
    events: plan.events.map((e) => `${e.type} ${e.reason}: ${e.message}`),
    plannerNotes: plan.explain,
    explanation,
    ...(plan.requeueAfterMs !== undefined ? { requeueAfterMs: plan.requeueAfterMs } : {}),
    cannotKnow: UNKNOWABLE,
    ...(deadlineActionNote(cs) !== '' ? { progressDeadlineAction: deadlineActionNote(cs) } : {}),
  };
}

/** A deletion says why those pods: the facts the scale-in order compared. */
function withDeletionFacts(a: PlanAction, s: Snapshot, updateRevision: string): string {
  if (a.kind !== 'DeletePods') return describeAction(a);
  const byName = new Map(s.pods.map((p) => [p.metadata.name ?? '', p]));
  return describeAction(a)
    .split('\n')
    .map((line, i) => {
      const pod = byName.get(a.pods[i]?.pod.name ?? '');
      return pod === undefined ? line : `${line}: ${deletionFacts(pod, updateRevision, s.nowMs)}`;
    })
    .join('\n');
}

export function formatPlan(r: PlanReport, output: OutputFormat): string {
  if (output === 'json') return JSON.stringify(r, null, 2);
  if (output === 'yaml') return stringify(r);
  const e = r.explanation;
  const lines: string[] = [];
  lines.push(`CloneSet ${r.namespace}/${r.cloneSet} — dry run of the next reconcile (snapshot ${r.observedAt}; nothing is written)`);
  lines.push(`Revisions: current ${r.revisions.current}, update ${r.revisions.update}`);
  if (r.revisions.pending !== undefined) lines.push(`  note: ${r.revisions.pending}`);
  if (r.progressDeadlineAction !== undefined) lines.push(`Progress deadline action taken:${r.progressDeadlineAction}`);
  lines.push(
    `Pods: ${r.pods.active} active, ${r.pods.updated} on the update revision, ${r.pods.unavailable.length} unavailable${r.pods.unavailable.length > 0 ? ` (${r.pods.unavailable.join(', ')})` : ''}`,
  );
  lines.push(
    `Limits: partition ${e.limits.partition}, maxUnavailable ${e.limits.maxUnavailable}, maxSurge ${e.limits.maxSurge}; this pass: update ${e.diff.updateNum} with an unavailable budget of ${e.diff.updateMaxUnavailable}, create ${e.diff.scaleUpNum}, delete ${e.diff.scaleDownNum}`,
  );
  lines.push('');
  if (r.actions.length === 0) lines.push(`Next reconcile (${r.phase}): nothing to write`);
  else {
    lines.push(`Next reconcile (${r.phase}): ${r.actions.length} write(s)`);
    let i = 1;
    for (const a of r.actions) for (const t of a.text.split('\n')) lines.push(`  ${i++}. ${t}`);
  }
  for (const ev of r.events) lines.push(`  event: ${ev}`);
  if (r.requeueAfterMs !== undefined) lines.push(`  then looks again in ${Math.ceil(r.requeueAfterMs / 1000)}s`);
  if (e.candidates.length > 0) {
    lines.push('');
    lines.push('Update order (pods waiting for the update revision, in the order the controller takes them: PreparingUpdate and');
    lines.push('already-marked pods, priority, then unscheduled, Pending, not ready, most recently ready, most restarts, newest):');
    e.candidates.forEach((c, i) => {
      lines.push(`  ${String(i + 1).padStart(2)}. ${c.next ? '→ next ' : '  wait '} ${c.pod}: ${c.why}`);
    });
  }
  lines.push('');
  if (e.blockers.length === 0) lines.push('Blocked: nothing');
  else {
    lines.push('Blocked:');
    for (const b of e.blockers) lines.push(`  - ${b}`);
  }
  if (r.plannerNotes.length > 0) {
    lines.push('');
    lines.push('Planner notes:');
    for (const n of r.plannerNotes) lines.push(`  - ${n}`);
  }
  lines.push('');
  lines.push('Not visible from outside the controller:');
  for (const n of r.cannotKnow) lines.push(`  - ${n}`);
  return lines.join('\n');
}
