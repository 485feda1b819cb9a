// An in-memory world for driving the pure planner: a CloneSet, its pods and PVCs, a clock, and a fake
// scheduler + kubelet. `applyPlan` performs a Plan's actions the way the API server and our executor would;
// `converge` runs plan → apply → status → kubelet until nothing changes, checking invariants on every step.
import { describeExtensionAction, isExtensionAction } from '../../extensions.ts';
import type { CloneSet } from '../../../../api/cloneset.ts';
import {
  ANNOTATION_LIFECYCLE_TIMESTAMP,
  CONDITION_INPLACE_UPDATE_READY,
  FEATURE_GATE_DEFAULTS,
  LABEL_INSTANCE_ID,
  LABEL_LIFECYCLE_STATE,
  LABEL_POD_TEMPLATE_HASH,
  LABEL_SPECIFIED_DELETE,
  type FeatureGates,
} from '../../../../api/well-known.ts';
import type { Node, PersistentVolumeClaim, Pod, PodCondition, PodTemplateSpec } from '../../../../kube/types.ts';
import type { PlanAction } from '../../actions.ts';
import { applyPodPatch, applyPodStatusPatch, PatchConflict } from '../../../inplace/testing/apply-patch.ts';
import { planCloneSet, type PlannerConfig, type PlanResult, type ResolvedRevisions, type Snapshot } from '../../index.ts';
import type { InstanceIdSource } from '../../instance-ids.ts';
import { rfc3339 } from '../../pod-template.ts';
import { isPodActive, isPodAvailable, isSpecifiedDelete, podCondition, revisionMatches } from '../../pod-predicates.ts';
import { boundsOf } from '../spec-bounds.ts';
import { computeStatus, isStatusChanged } from '../../status.ts';
import { revisionName, sequentialIds, T0 } from '../builders.ts';

export interface KubeletOptions {
  /** Clock advance per step (ms). */
  readonly stepMs: number;
  /** Kubelet steps a pod waits unscheduled before the scheduler binds it. */
  readonly scheduleAfterSteps: number;
  /** Kubelet steps between Running and Ready (once every readiness gate is True). */
  readonly readyAfterSteps: number;
  /** Kubelet steps a deleted pod lingers with a deletionTimestamp (0: gone at once). */
  readonly terminationSteps: number;
  readonly nodes: number;
  /** Pods for which this returns false never become Ready (e.g. a broken image). */
  readonly canBecomeReady: (pod: Pod) => boolean;
  /**
   * A preDelete hook owner: created pods get `label: "true"` (as a webhook would add it), and a pod that has
   * waited `releaseAfterSteps` steps in PreparingDelete gets `label: "done"` (the hook is released).
   */
  readonly preDeleteHook: { readonly label: string; readonly releaseAfterSteps: number } | undefined;
}

export interface WorldOptions extends Partial<KubeletOptions> {
  readonly gates?: Partial<FeatureGates>;
  readonly excludePreparingDelete?: boolean;
  readonly ids?: InstanceIdSource;
  /** Revision short names known to the world; the last one is the update revision. Default ['r1']. */
  readonly revisions?: readonly string[];
  readonly nowMs?: number;
}

export interface World {
  cloneSet: CloneSet;
  pods: Pod[];
  pvcs: PersistentVolumeClaim[];
  nowMs: number;
  /** Full revision names → templates, in creation order. */
  readonly revisionTemplates: Map<string, PodTemplateSpec>;
  updateRevision: string;
  readonly kubelet: KubeletOptions;
  readonly config: PlannerConfig;
  readonly ids: InstanceIdSource;
  /** Simulator bookkeeping per pod uid (not visible to the planner). */
  readonly ages: Map<string, { created: number; running?: number; deletedAt?: number; preparingDeleteSince?: number }>;
  step: number;
  rv: number;
  uidSeq: number;
}

const DEFAULT_KUBELET: KubeletOptions = {
  stepMs: 1000,
  scheduleAfterSteps: 0,
  readyAfterSteps: 1,
  terminationSteps: 0,
  nodes: 3,
  canBecomeReady: () => true,
  preDeleteHook: undefined,
};

export function newWorld(cloneSet: CloneSet, pods: readonly Pod[] = [], pvcs: readonly PersistentVolumeClaim[] = [], opts: WorldOptions = {}): World {
  const revs = opts.revisions ?? ['r1'];
  const revisionTemplates = new Map<string, PodTemplateSpec>();
  for (const r of revs) revisionTemplates.set(revisionName(cloneSet, r), templateOf(cloneSet, r));
  const last = revs[revs.length - 1] ?? 'r1';
  const current = revisionName(cloneSet, revs[0] ?? 'r1');
  const world: World = {
    cloneSet:
      cloneSet.status?.currentRevision !== undefined
        ? cloneSet
        : {
            ...cloneSet,
            status: { replicas: 0, readyReplicas: 0, availableReplicas: 0, updatedReplicas: 0, updatedReadyReplicas: 0, ...cloneSet.status, currentRevision: current },
          },
    pods: [...pods],
    pvcs: [...pvcs],
    nowMs: opts.nowMs ?? T0,
    revisionTemplates,
    updateRevision: revisionName(cloneSet, last),
    kubelet: { ...DEFAULT_KUBELET, ...definedOnly(opts) },
    config: { gates: { ...FEATURE_GATE_DEFAULTS, ...opts.gates }, excludePreparingDelete: opts.excludePreparingDelete ?? false },
    ids: opts.ids ?? sequentialIds(),
    ages: new Map(),
    step: 0,
    rv: 100,
    uidSeq: 0,
  };
  for (const p of world.pods) world.ages.set(p.metadata.uid ?? '', { created: -100, ...(p.status?.phase === 'Running' ? { running: -100 } : {}) });
  return world;
}

function definedOnly(opts: WorldOptions): Partial<KubeletOptions> {
  const out: { -readonly [K in keyof KubeletOptions]?: KubeletOptions[K] } = {};
  if (opts.stepMs !== undefined) out.stepMs = opts.stepMs;
  if (opts.scheduleAfterSteps !== undefined) out.scheduleAfterSteps = opts.scheduleAfterSteps;
  if (opts.readyAfterSteps !== undefined) out.readyAfterSteps = opts.readyAfterSteps;
  if (opts.terminationSteps !== undefined) out.terminationSteps = opts.terminationSteps;
  if (opts.nodes !== undefined) out.nodes = opts.nodes;
  if (opts.canBecomeReady !== undefined) out.canBecomeReady = opts.canBecomeReady;
  if (opts.preDeleteHook !== undefined) out.preDeleteHook = opts.preDeleteHook;
  return out;
}

function templateOf(cs: CloneSet, rev: string): PodTemplateSpec {
  return { ...cs.spec.template, spec: { ...cs.spec.template.spec, containers: [{ name: 'main', image: `nginx:${rev}` }] } };
}

/** A new template revision becomes the update revision (as a `kubectl apply` of a new image would). */
export function rollOut(world: World, rev: string): void {
  const name = revisionName(world.cloneSet, rev);
  if (!world.revisionTemplates.has(name)) world.revisionTemplates.set(name, templateOf(world.cloneSet, rev));
  world.updateRevision = name;
  world.cloneSet = { ...world.cloneSet, metadata: { ...world.cloneSet.metadata, generation: (world.cloneSet.metadata.generation ?? 1) + 1 } };
}

/** Replaces the CloneSet spec (a user edit). */
export function editSpec(world: World, edit: (spec: CloneSet['spec']) => CloneSet['spec']): void {
  const cs = world.cloneSet;
  world.cloneSet = { ...cs, metadata: { ...cs.metadata, generation: (cs.metadata.generation ?? 1) + 1 }, spec: edit(cs.spec) };
}

// ---------------------------------------------------------------------------------------------------------------
// Reading the world as the controller would

const isOwned = (world: World, pod: { readonly metadata: Pod['metadata'] }): boolean => (pod.metadata.ownerReferences ?? []).some((r) => r.uid === world.cloneSet.metadata.uid);

/** What loadSnapshot would read: owned pods (active or not), owned live PVCs, the pods' nodes. Deep-frozen. */
export function snapshotOf(world: World): Snapshot {
  const pods = world.pods.filter((p) => isOwned(world, p));
  const pvcs = world.pvcs.filter((c) => isOwned(world, c) && c.metadata.deletionTimestamp === undefined);
  const nodes = new Map<string, Node>();
  for (const p of pods) {
    const n = p.spec.nodeName;
    if (n !== undefined && n !== '') nodes.set(n, { metadata: { name: n, labels: { 'kubernetes.io/hostname': n } } });
  }
  return deepFreeze(structuredClone({ cloneSet: world.cloneSet, pods, pvcs, nodes, nowMs: world.nowMs }));
}

/** Revision sync (docs/features.md#revisions; Kruise pkg/controller/cloneset/cloneset_controller.go): current = status.currentRevision when that revision still exists, else update. */
export function revisionsOf(world: World): ResolvedRevisions {
  const update = world.updateRevision;
  const stored = world.cloneSet.status?.currentRevision;
  const current = stored !== undefined && world.revisionTemplates.has(stored) ? stored : update;
  const tpl = (name: string): PodTemplateSpec => world.revisionTemplates.get(name) ?? world.cloneSet.spec.template;
  return { current: { name: current, template: tpl(current) }, update: { name: update, template: tpl(update) }, collisionCount: 0 };
}

export function currentRevisionOf(world: World): string {
  return revisionsOf(world).current.name;
}

/** Claimed active pods (what the status counts). */
export function activePods(world: World): Pod[] {
  return world.pods.filter((p) => isPodActive(p) && isOwnedByController(world, p));
}

function isOwnedByController(world: World, pod: Pod): boolean {
  return (pod.metadata.ownerReferences ?? []).some((r) => r.controller === true && r.uid === world.cloneSet.metadata.uid);
}

export function plan(world: World): PlanResult {
  return planCloneSet(snapshotOf(world), revisionsOf(world), world.config, world.ids);
}

// ---------------------------------------------------------------------------------------------------------------
// Writing: the API server + executor

function nextRv(world: World): string {
  world.rv++;
  return String(world.rv);
}

function replacePod(world: World, name: string, uid: string, edit: (p: Pod) => Pod, violations: string[], what: string): void {
  const i = world.pods.findIndex((p) => p.metadata.name === name);
  const pod = world.pods[i];
  if (pod === undefined) {
    violations.push(`${what}: pod ${name} does not exist`);
    return;
  }
  if (pod.metadata.uid !== uid) {
    violations.push(`${what}: pod ${name} has uid ${pod.metadata.uid ?? ''}, action is for ${uid}`);
    return;
  }
  const next = edit(pod);
  world.pods[i] = { ...next, metadata: { ...next.metadata, resourceVersion: nextRv(world) } };
}

function withLabel(pod: Pod, key: string, value: string): Pod {
  return { ...pod, metadata: { ...pod.metadata, labels: { ...pod.metadata.labels, [key]: value } } };
}

function setCondition(pod: Pod, cond: PodCondition): Pod {
  const conditions = (pod.status?.conditions ?? []).filter((c) => c.type !== cond.type);
  return { ...pod, status: { ...pod.status, conditions: [...conditions, cond] } };
}

/** Applies every action of a plan; returns the invariant violations detected while doing so. */
export function applyPlan(world: World, actions: readonly PlanAction[]): string[] {
  const violations: string[] = [];
  const now = rfc3339(world.nowMs);
  for (const a of actions) {
    switch (a.kind) {
      case 'CreatePods':
        for (const c of a.pods) {
          const name = c.pod.metadata.name ?? '';
          for (const pvc of c.pvcs) {
            if (!world.pvcs.some((x) => x.metadata.name === pvc.metadata.name)) {
              world.pvcs.push({ ...pvc, metadata: { ...pvc.metadata, uid: `uid-pvc-${world.uidSeq++}`, resourceVersion: nextRv(world) } });
            }
          }
          if (world.pods.some((p) => p.metadata.name === name)) {
            violations.push(`CreatePods: pod ${name} already exists (AlreadyExists)`);
            continue;
          }
          const uid = `uid-${name}-${world.uidSeq++}`;
          const hook = world.kubelet.preDeleteHook;
          const labels = hook !== undefined ? { ...c.pod.metadata.labels, [hook.label]: 'true' } : c.pod.metadata.labels;
          world.pods.push({
            ...c.pod,
            metadata: { ...c.pod.metadata, ...(labels !== undefined ? { labels } : {}), uid, resourceVersion: nextRv(world), creationTimestamp: now },
            status: { phase: 'Pending' },
          });
          world.ages.set(uid, { created: world.step });
        }
        break;
      case 'DeletePods':
        for (const d of a.pods) {
          const pod = world.pods.find((p) => p.metadata.name === d.pod.name);
          if (pod === undefined || pod.metadata.uid !== d.pod.uid) {
            violations.push(`DeletePods: ${d.pod.name}/${d.pod.uid} not found`);
            continue;
          }
          if (!isPodActive(pod) || !isOwnedByController(world, pod)) violations.push(`DeletePods: ${d.pod.name} is not a claimed active pod`);
          const id = pod.metadata.labels?.[LABEL_INSTANCE_ID] ?? '';
          const expected = world.pvcs
            .filter((c) => isOwned(world, c) && (c.metadata.labels?.[LABEL_INSTANCE_ID] ?? '') === id)
            .map((c) => c.metadata.name ?? '')
            .sort();
          if (JSON.stringify([...d.pvcNames].sort()) !== JSON.stringify(expected)) {
            violations.push(`DeletePods: ${d.pod.name} deletes PVCs ${d.pvcNames.join(',')} but owns ${expected.join(',')}`);
          }
          if (world.kubelet.terminationSteps > 0) {
            world.pods = world.pods.map((p) => (p === pod ? { ...p, metadata: { ...p.metadata, deletionTimestamp: now, resourceVersion: nextRv(world) } } : p));
            const age = world.ages.get(d.pod.uid);
            if (age !== undefined) age.deletedAt = world.step;
          } else {
            world.pods = world.pods.filter((p) => p !== pod);
          }
          world.pvcs = world.pvcs.filter((c) => !d.pvcNames.includes(c.metadata.name ?? ''));
        }
        break;
      case 'MarkSpecifiedDelete':
        replacePod(world, a.pod.name, a.pod.uid, (p) => withLabel(p, LABEL_SPECIFIED_DELETE, 'true'), violations, a.kind);
        break;
      case 'PatchPodLifecycle':
        replacePod(
          world,
          a.pod.name,
          a.pod.uid,
          (p) => {
            const q = withLabel(p, LABEL_LIFECYCLE_STATE, a.state);
            // Hook handlers put back with the state (Updated → PreparingUpdate): labels set, finalizers merged.
            const labels = { ...q.metadata.labels, ...a.addLabels };
            const finalizers = a.addFinalizers !== undefined ? { finalizers: [...new Set([...(q.metadata.finalizers ?? []), ...a.addFinalizers])] } : {};
            return { ...q, metadata: { ...q.metadata, labels, ...finalizers, annotations: { ...q.metadata.annotations, [ANNOTATION_LIFECYCLE_TIMESTAMP]: now } } };
          },
          violations,
          a.kind,
        );
        break;
      case 'PatchPodTemplateHash':
        replacePod(world, a.pod.name, a.pod.uid, (p) => withLabel(p, LABEL_POD_TEMPLATE_HASH, a.hash), violations, a.kind);
        break;
      case 'SetInPlaceUpdateReady': {
        const lifecycle = a.lifecycle;
        replacePod(
          world,
          a.pod.name,
          a.pod.uid,
          (p) => {
            const q = setCondition(p, { type: CONDITION_INPLACE_UPDATE_READY, status: 'True', lastTransitionTime: now });
            if (lifecycle === undefined) return q;
            const labels = { ...q.metadata.labels, [LABEL_LIFECYCLE_STATE]: lifecycle.state, ...lifecycle.addLabels };
            return { ...q, metadata: { ...q.metadata, labels, annotations: { ...q.metadata.annotations, [ANNOTATION_LIFECYCLE_TIMESTAMP]: now } } };
          },
          violations,
          a.kind,
        );
        break;
      }
      case 'PatchPodConditions':
        replacePod(world, a.pod.name, a.pod.uid, (p) => a.conditions.reduce((q, c) => setCondition(q, { ...c, lastTransitionTime: now }), p), violations, a.kind);
        break;
      case 'MarkPodNotReadyForInPlaceUpdate':
        replacePod(world, a.pod.name, a.pod.uid, (p) => applyPodStatusPatch(p, a.patch), violations, a.kind);
        break;
      case 'UpdatePodInPlace':
        // The resourceVersion precondition: a stale plan is refused (409), as the API server would.
        try {
          replacePod(world, a.pod.name, a.pod.uid, (p) => applyPodPatch(a.resize !== undefined ? applyPodPatch(p, a.resize) : p, a.patch), violations, a.kind);
        } catch (e) {
          if (!(e instanceof PatchConflict)) throw e;
        }
        break;
      case 'FailUpdate':
        break;
      case 'AdoptPod':
        replacePod(
          world,
          a.pod.name,
          a.pod.uid,
          (p) => {
            const refs = [...(p.metadata.ownerReferences ?? [])];
            if (a.replaceIndex !== undefined) refs[a.replaceIndex] = a.ownerRef;
            else refs.push(a.ownerRef);
            return { ...p, metadata: { ...p.metadata, ownerReferences: refs } };
          },
          violations,
          a.kind,
        );
        break;
      case 'ReleasePod':
        replacePod(
          world,
          a.pod.name,
          a.pod.uid,
          (p) => {
            const refs = p.metadata.ownerReferences ?? [];
            if (refs[a.ownerRefIndex]?.uid !== a.ownerUid) {
              violations.push(`ReleasePod: ${a.pod.name} owner ref ${a.ownerRefIndex} is not ${a.ownerUid}`);
              return p;
            }
            return { ...p, metadata: { ...p.metadata, ownerReferences: refs.filter((_, i) => i !== a.ownerRefIndex) } };
          },
          violations,
          a.kind,
        );
        break;
      case 'ReownPvc': {
        const i = world.pvcs.findIndex((c) => c.metadata.name === a.pvc.name && c.metadata.uid === a.pvc.uid);
        const pvc = world.pvcs[i];
        if (pvc === undefined || pvc.metadata.ownerReferences?.[a.ownerRefIndex]?.uid !== a.ownerUid) {
          violations.push(`ReownPvc: ${a.pvc.name}/${a.pvc.uid} not found or owner ref ${a.ownerRefIndex} is not ${a.ownerUid}`);
          break;
        }
        const refs = (pvc.metadata.ownerReferences ?? []).filter((_, j) => j !== a.ownerRefIndex);
        world.pvcs[i] = { ...pvc, metadata: { ...pvc.metadata, ownerReferences: a.podRef !== undefined ? [...refs, a.podRef] : refs, resourceVersion: nextRv(world) } };
        break;
      }
      case 'DeletePvc': {
        const before = world.pvcs.length;
        world.pvcs = world.pvcs.filter((c) => !(c.metadata.name === a.pvc.name && c.metadata.uid === a.pvc.uid));
        if (world.pvcs.length === before) violations.push(`DeletePvc: ${a.pvc.name}/${a.pvc.uid} not found`);
        break;
      }
    }
  }
  return violations;
}

/** The reconciler's status step: compute from the claimed pods of the plan, write when changed. */
export function writeStatus(world: World, claimed: readonly Pod[]): number | undefined {
  const revs = revisionsOf(world);
  const { status, requeueAfterMs } = computeStatus({
    cloneSet: world.cloneSet,
    pods: claimed,
    updateRevision: revs.update.name,
    currentRevision: revs.current.name,
    collisionCount: revs.collisionCount,
    nowMs: world.nowMs,
  });
  if (isStatusChanged(world.cloneSet.status, status)) world.cloneSet = { ...world.cloneSet, status };
  return requeueAfterMs;
}

// ---------------------------------------------------------------------------------------------------------------
// The scheduler + kubelet

/**
 * One kubelet step: schedule, start, make Ready (gates permitting), finish terminations. Returns the number of
 * pods changed; `kubeletBusy` tells whether a later step would still change something on its own.
 */
export function kubeletStep(world: World): number {
  const k = world.kubelet;
  let changes = 0;
  const now = rfc3339(world.nowMs);
  const next: Pod[] = [];
  for (const pod of world.pods) {
    const uid = pod.metadata.uid ?? '';
    const age = world.ages.get(uid) ?? { created: world.step };
    world.ages.set(uid, age);
    if (pod.metadata.deletionTimestamp !== undefined) {
      if (age.deletedAt === undefined || world.step - age.deletedAt >= k.terminationSteps) {
        changes++;
        continue; // gone
      }
      next.push(pod);
      continue;
    }
    if (!isPodActive(pod)) {
      next.push(pod);
      continue;
    }
    let p = pod;
    const hook = k.preDeleteHook;
    if (hook !== undefined && p.metadata.labels?.[LABEL_LIFECYCLE_STATE] === 'PreparingDelete' && p.metadata.labels[hook.label] === 'true') {
      age.preparingDeleteSince ??= world.step;
      if (world.step - age.preparingDeleteSince >= hook.releaseAfterSteps) p = withLabel(p, hook.label, 'done');
    } else {
      delete age.preparingDeleteSince;
    }
    const node = p.spec.nodeName ?? '';
    if (node === '') {
      if (world.step - age.created >= k.scheduleAfterSteps) {
        p = { ...p, spec: { ...p.spec, nodeName: `node-${world.uidSeq++ % k.nodes}` } };
      }
    } else if (p.status?.phase !== 'Running') {
      p = setCondition({ ...p, status: { ...p.status, phase: 'Running' } }, { type: 'Ready', status: 'False', lastTransitionTime: now });
      age.running = world.step;
    } else {
      const gatesTrue = (p.spec.readinessGates ?? []).every((g) => podCondition(p, g.conditionType)?.status === 'True');
      const ready = podCondition(p, 'Ready')?.status === 'True';
      const waited = world.step - (age.running ?? world.step) >= k.readyAfterSteps;
      if (!ready && gatesTrue && waited && k.canBecomeReady(p)) {
        p = setCondition(p, { type: 'Ready', status: 'True', lastTransitionTime: now });
      } else if (ready && !gatesTrue) {
        p = setCondition(p, { type: 'Ready', status: 'False', lastTransitionTime: now });
      }
    }
    if (p !== pod) {
      changes++;
      p = { ...p, metadata: { ...p.metadata, resourceVersion: nextRv(world) } };
    }
    next.push(p);
  }
  world.pods = next;
  return changes;
}

/** True while some pod would still move without the controller: unscheduled, starting, terminating. */
export function kubeletBusy(world: World): boolean {
  const k = world.kubelet;
  return world.pods.some((p) => {
    if (p.metadata.deletionTimestamp !== undefined) return true;
    if (!isPodActive(p)) return false;
    const hook = k.preDeleteHook;
    if (hook !== undefined && p.metadata.labels?.[LABEL_LIFECYCLE_STATE] === 'PreparingDelete' && p.metadata.labels[hook.label] === 'true') return true;
    if ((p.spec.nodeName ?? '') === '' || p.status?.phase !== 'Running') return true;
    const gatesTrue = (p.spec.readinessGates ?? []).every((g) => podCondition(p, g.conditionType)?.status === 'True');
    return gatesTrue && podCondition(p, 'Ready')?.status !== 'True' && k.canBecomeReady(p);
  });
}

// ---------------------------------------------------------------------------------------------------------------
// converge

export interface StepRecord {
  readonly step: number;
  readonly atMs: number;
  /** The world the plan was made for, e.g. "4 old + 1 new(not ready)". */
  readonly before: string;
  readonly phase: string;
  readonly actions: readonly string[];
  readonly explain: readonly string[];
}

export interface ConvergeOptions {
  readonly maxSteps?: number;
  /** Extra invariants, checked on the world after each step. */
  readonly invariants?: readonly ((world: World) => string | undefined)[];
}

export interface ConvergeResult {
  readonly converged: boolean;
  readonly steps: readonly StepRecord[];
  readonly violations: readonly string[];
  /** Largest number of claimed active pods seen at any time. */
  readonly maxPods: number;
}

/** One reconcile pass + one kubelet step; returns the record, violations and whether anything changed or will. */
export function reconcileStep(world: World): { record: StepRecord; violations: string[]; changed: boolean; requeueAfterMs: number | undefined } {
  const violations: string[] = [];
  const before = describePods(world);
  const countBefore = surgeCount(world);
  let result: PlanResult;
  try {
    result = plan(world);
  } catch (e) {
    throw new Error(`step ${world.step}: the planner threw (did it mutate its frozen input?): ${String(e)}`, { cause: e });
  }
  violations.push(...planViolations(world, result));
  violations.push(...applyPlan(world, result.actions));
  const statusBefore = world.cloneSet.status;
  const requeueAfterMs = writeStatus(world, result.claimed);
  const limit = surgeLimit(world);
  const countAfter = surgeCount(world);
  // Only creations are held to the limit: bringing a PreparingDelete pod back (docs/features.md#scaling; Kruise pkg/controller/cloneset/sync/cloneset_scale.go) is no new pod.
  if (result.actions.some((a) => a.kind === 'CreatePods') && countAfter > Math.max(countBefore, limit)) {
    violations.push(`${countAfter} pods after the pass, more than replicas + maxSurge = ${limit} (had ${countBefore})`);
  }
  const kubeletChanges = kubeletStep(world);
  const record: StepRecord = {
    step: world.step,
    atMs: world.nowMs,
    before,
    phase: result.phase,
    actions: result.actions.map(describeAction),
    explain: result.explain,
  };
  world.step++;
  world.nowMs += world.kubelet.stepMs;
  const changed = result.actions.length > 0 || kubeletChanges > 0 || statusBefore !== world.cloneSet.status || kubeletBusy(world);
  return { record, violations: violations.map((v) => `step ${record.step}: ${v}`), changed, requeueAfterMs };
}

/** Runs passes until a fixed point (nothing changes and no requeue is pending) or `maxSteps`. */
export function converge(world: World, opts: ConvergeOptions = {}): ConvergeResult {
  const maxSteps = opts.maxSteps ?? 200;
  const steps: StepRecord[] = [];
  const violations: string[] = [];
  let maxPods = activePods(world).length;
  for (let i = 0; i < maxSteps; i++) {
    const { record, violations: v, changed, requeueAfterMs } = reconcileStep(world);
    steps.push(record);
    violations.push(...v);
    for (const inv of opts.invariants ?? []) {
      const msg = inv(world);
      if (msg !== undefined) violations.push(`step ${record.step}: ${msg}`);
    }
    maxPods = Math.max(maxPods, activePods(world).length);
    if (!changed && requeueAfterMs === undefined) {
      const again = plan(world);
      if (again.actions.length > 0) violations.push(`fixed point but the plan is not empty: ${again.actions.map(describeAction).join('; ')}`);
      return { converged: true, steps, violations, maxPods };
    }
  }
  return { converged: false, steps, violations, maxPods };
}

/** The pods the surge limit applies to: claimed active pods, PreparingDelete ones left out when excluded. */
export function surgeCount(world: World): number {
  const excluded = world.config.excludePreparingDelete || world.cloneSet.spec.scaleStrategy?.excludePreparingDelete === true;
  return activePods(world).filter((p) => !(excluded && p.metadata.labels?.[LABEL_LIFECYCLE_STATE] === 'PreparingDelete')).length;
}

/** replicas + maxSurge by the test's own arithmetic (testing/spec-bounds.ts; paused leaves no surge), never the planner's. */
export function surgeLimit(world: World): number {
  const cs = world.cloneSet;
  const us = cs.spec.updateStrategy;
  const replicas = cs.spec.replicas ?? 1;
  const b = boundsOf({
    replicas,
    hasRollingUpdate: us?.type !== 'OnDelete' || us.partition !== undefined,
    ...(us?.paused !== undefined ? { paused: us.paused } : {}),
    ...(us?.maxSurge !== undefined ? { maxSurge: us.maxSurge } : {}),
  });
  return replicas + b.maxSurge;
}

/** Writes only the Update step makes (refresh or update): never in the same pass as a create or delete. */
function isUpdateWrite(a: PlanAction): boolean {
  return a.kind === 'MarkSpecifiedDelete' || a.kind === 'SetInPlaceUpdateReady' || a.kind === 'PatchPodTemplateHash' || (a.kind === 'PatchPodLifecycle' && a.state === 'Normal');
}

function planViolations(world: World, result: PlanResult): string[] {
  const out: string[] = [];
  const scaling = result.actions.some((a) => a.kind === 'CreatePods' || a.kind === 'DeletePods');
  if (scaling && result.actions.some(isUpdateWrite)) {
    out.push(`scaling and updating in the same pass: ${result.actions.map(describeAction).join('; ')}`);
  }
  for (const a of result.actions) {
    if (!('pod' in a)) continue;
    const pod = world.pods.find((p) => p.metadata.name === a.pod.name);
    if (pod !== undefined && !isOwned(world, pod)) out.push(`${a.kind} on ${a.pod.name}, which the CloneSet does not own`);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Descriptions (step tables)

/** "5 old + 1 new(not ready)": claimed active pods by revision and condition, in a fixed category order. */
export function describePods(world: World, pods: readonly Pod[] = activePods(world)): string {
  const minReady = world.cloneSet.spec.minReadySeconds ?? 0;
  const podsToDelete = world.cloneSet.spec.scaleStrategy?.podsToDelete;
  const categories = ['old', 'old(specified-delete)', 'old(not ready)', 'new', 'new(specified-delete)', 'new(not ready)'];
  const counts = new Map<string, number>();
  for (const p of pods) {
    const rev = revisionMatches(p, world.updateRevision) ? 'new' : 'old';
    const flag = isSpecifiedDelete(p, podsToDelete) ? '(specified-delete)' : isPodAvailable(p, minReady, world.nowMs) ? '' : '(not ready)';
    counts.set(rev + flag, (counts.get(rev + flag) ?? 0) + 1);
  }
  const parts = categories.filter((c) => counts.has(c)).map((c) => `${counts.get(c) ?? 0} ${c}`);
  return parts.length > 0 ? parts.join(' + ') : 'no pods';
}

export function describeAction(a: PlanAction): string {
  switch (a.kind) {
    case 'CreatePods':
      return `create ${a.pods.map((c) => `${c.pod.metadata.name ?? ''}@${shortRev(c.revision)}`).join(' ')}`;
    case 'DeletePods':
      return `delete ${a.pods.map((d) => d.pod.name + (d.pvcNames.length > 0 ? `(+${d.pvcNames.join(',')})` : '')).join(' ')}`;
    case 'MarkSpecifiedDelete':
      return `mark ${a.pod.name}`;
    case 'PatchPodLifecycle':
      return `lifecycle ${a.pod.name}=${a.state}`;
    case 'PatchPodTemplateHash':
      return `template-hash ${a.pod.name}=${a.hash}`;
    case 'SetInPlaceUpdateReady':
      return `gate ${a.pod.name}${a.lifecycle !== undefined ? ` lifecycle=${a.lifecycle.state}` : ''}`;
    case 'PatchPodConditions':
      return `conditions ${a.pod.name} ${a.conditions.map((c) => `${c.type}=${c.status}`).join(',')}`;
    case 'ReleasePod':
      return `release ${a.pod.name}`;
    case 'AdoptPod':
      return `adopt ${a.pod.name}`;
    case 'ReownPvc':
      return `reown ${a.pvc.name}${a.podRef !== undefined ? `→${a.podRef.name}` : ''}`;
    case 'DeletePvc':
      return `delete-pvc ${a.pvc.name}`;
    case 'MarkPodNotReadyForInPlaceUpdate':
      return `not-ready ${a.pod.name}`;
    case 'UpdatePodInPlace':
      return `in-place(${a.step}) ${a.pod.name}@${shortRev(a.revision)}`;
    case 'FailUpdate':
      return `fail: ${a.message}`;
    default:
      return isExtensionAction(a) ? describeExtensionAction(a) : a.kind;
  }
}

function shortRev(name: string): string {
  return name.slice(name.lastIndexOf('-') + 1);
}

export function formatSteps(steps: readonly StepRecord[]): string {
  return steps.map((s) => `(step ${s.step + 1}/${steps.length}) [${s.before}] ${s.phase}: ${s.actions.join('; ') || '-'}`).join('\n');
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    if (value instanceof Map) {
      for (const v of value.values()) deepFreeze(v);
    } else {
      for (const v of Object.values(value)) deepFreeze(v);
    }
  }
  return value;
}
