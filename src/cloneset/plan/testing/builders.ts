// Fluent test builders for CloneSets, pods and PVCs: every test starts from a
// sensible default and states only what matters to it, e.g. `aPod(cs).ofRevision('r1').ready().build()`.
import type { CloneSet, CloneSetCondition, CloneSetStatus, IntOrString, LifecycleHook } from '../../../api/cloneset.ts';
import {
  ANNOTATION_POD_DELETION_COST,
  CONDITION_INPLACE_UPDATE_READY,
  FEATURE_GATE_DEFAULTS,
  LABEL_INSTANCE_ID,
  LABEL_LIFECYCLE_STATE,
  LABEL_POD_TEMPLATE_HASH,
  LABEL_REVISION_HASH,
  LABEL_SPECIFIED_DELETE,
  type FeatureGates,
  type LifecycleState,
} from '../../../api/well-known.ts';
import type { PersistentVolumeClaim, Pod, PodCondition, PodPhase, PodTemplateSpec } from '../../../kube/types.ts';
import type { PlannerConfig, ResolvedRevisions } from '../index.ts';
import type { InstanceIdSource } from '../instance-ids.ts';
import { INSTANCE_ID_ALPHABET } from '../instance-ids.ts';
import { controllerRefTo, pvcName, rfc3339 } from '../pod-template.ts';
import { shortHash } from '../pod-predicates.ts';

/** The pinned "now" of planner tests: 2025-01-02T03:04:05Z. */
export const T0 = Date.parse('2025-01-02T03:04:05Z');
export const HOUR = 3_600_000;

/** Full revision name for a short one: `r1` → `sample-r1` (a name with a dash is kept as is). */
export function revisionName(cs: CloneSet, rev: string): string {
  return rev.includes('-') ? rev : `${cs.metadata.name ?? ''}-${rev}`;
}

// ---------------------------------------------------------------------------------------------------------------
// CloneSet

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export class CloneSetBuilder {
  private readonly name: string;
  private replicasValue: number | undefined = undefined;
  private readonly update: Mutable<NonNullable<CloneSet['spec']['updateStrategy']>> = {};
  private readonly scale: Mutable<NonNullable<CloneSet['spec']['scaleStrategy']>> = {};
  private minReady: number | undefined = undefined;
  private deadline: number | undefined = undefined;
  private claimTemplates: string[] = [];
  private statusValue: CloneSetStatus | undefined = undefined;
  private deletion: string | undefined = undefined;
  private preNormal: LifecycleHook | undefined = undefined;
  private preDelete: LifecycleHook | undefined = undefined;
  private csLabels: Record<string, string> = {};

  constructor(name: string) {
    this.name = name;
  }

  replicas(n: number): this {
    this.replicasValue = n;
    return this;
  }
  partition(v: IntOrString): this {
    this.update.partition = v;
    return this;
  }
  maxSurge(v: IntOrString): this {
    this.update.maxSurge = v;
    return this;
  }
  maxUnavailable(v: IntOrString): this {
    this.update.maxUnavailable = v;
    return this;
  }
  paused(p = true): this {
    this.update.paused = p;
    return this;
  }
  /** scaleStrategy.excludePreparingDelete (v1beta1; the v1alpha1 label becomes this field through conversion). */
  excludePreparingDelete(): this {
    this.scale.excludePreparingDelete = true;
    return this;
  }
  podsToDelete(...names: string[]): this {
    this.scale.podsToDelete = names;
    return this;
  }
  scaleMaxUnavailable(v: IntOrString): this {
    this.scale.maxUnavailable = v;
    return this;
  }
  minReadySeconds(s: number): this {
    this.minReady = s;
    return this;
  }
  progressDeadlineSeconds(s: number): this {
    this.deadline = s;
    return this;
  }
  /** Adds a volume claim template (PVC per pod). */
  volumeClaimTemplate(name: string): this {
    this.claimTemplates = [...this.claimTemplates, name];
    return this;
  }
  preNormalHook(hook: LifecycleHook): this {
    this.preNormal = hook;
    return this;
  }
  preDeleteHook(hook: LifecycleHook): this {
    this.preDelete = hook;
    return this;
  }
  status(s: CloneSetStatus): this {
    this.statusValue = s;
    return this;
  }
  /** A status carrying only these conditions (counters zero). */
  conditions(...conditions: CloneSetCondition[]): this {
    this.statusValue = { replicas: 0, readyReplicas: 0, availableReplicas: 0, updatedReplicas: 0, updatedReadyReplicas: 0, conditions };
    return this;
  }
  labels(l: Record<string, string>): this {
    this.csLabels = { ...this.csLabels, ...l };
    return this;
  }
  deleting(atMs = T0): this {
    this.deletion = rfc3339(atMs);
    return this;
  }

  build(): CloneSet {
    const name = this.name;
    const selectorLabels = { app: name };
    return {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: {
        name,
        namespace: 'default',
        uid: `uid-${name}`,
        generation: 1,
        resourceVersion: '1',
        ...(Object.keys(this.csLabels).length > 0 ? { labels: { ...this.csLabels } } : {}),
        ...(this.deletion !== undefined ? { deletionTimestamp: this.deletion } : {}),
      },
      spec: {
        ...(this.replicasValue !== undefined ? { replicas: this.replicasValue } : {}),
        selector: { matchLabels: selectorLabels },
        template: templateFor(name, 'nginx:1'),
        ...(this.claimTemplates.length > 0
          ? {
              volumeClaimTemplates: this.claimTemplates.map((t) => ({
                metadata: { name: t },
                spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
              })),
            }
          : {}),
        ...(Object.keys(this.scale).length > 0 ? { scaleStrategy: { ...this.scale } } : {}),
        updateStrategy: { type: 'ReCreate', ...this.update },
        ...(this.minReady !== undefined ? { minReadySeconds: this.minReady } : {}),
        ...(this.deadline !== undefined ? { progressDeadlineSeconds: this.deadline } : {}),
        ...(this.preNormal !== undefined || this.preDelete !== undefined
          ? {
              lifecycle: {
                ...(this.preNormal !== undefined ? { preNormal: this.preNormal } : {}),
                ...(this.preDelete !== undefined ? { preDelete: this.preDelete } : {}),
              },
            }
          : {}),
      },
      ...(this.statusValue !== undefined ? { status: this.statusValue } : {}),
    };
  }
}

export function aCloneSet(name = 'sample'): CloneSetBuilder {
  return new CloneSetBuilder(name);
}

function templateFor(name: string, image: string): PodTemplateSpec {
  return {
    metadata: { labels: { app: name } },
    spec: { containers: [{ name: 'main', image }] },
  };
}

/**
 * Revisions `current` and `update` (short names, e.g. 'r1'/'r2') whose templates differ by image, as the
 * revision sync would resolve them. The template is the CloneSet's with the image `nginx:<rev>`.
 */
export function revisions(cs: CloneSet, current = 'r1', update = current): ResolvedRevisions {
  const tpl = (rev: string): PodTemplateSpec => ({
    ...cs.spec.template,
    spec: { ...cs.spec.template.spec, containers: [{ name: 'main', image: `nginx:${rev}` }] },
  });
  return {
    current: { name: revisionName(cs, current), template: tpl(current) },
    update: { name: revisionName(cs, update), template: tpl(update) },
    collisionCount: 0,
  };
}

export function plannerConfig(gates: Partial<FeatureGates> = {}, excludePreparingDelete = false): PlannerConfig {
  return { gates: { ...FEATURE_GATE_DEFAULTS, ...gates }, excludePreparingDelete };
}

/** Deterministic instance ids: 5 characters of Kubernetes' alphabet counting up from `start`. */
export function sequentialIds(start = 0): InstanceIdSource {
  let n = start;
  return {
    random: () => {
      let v = n++;
      let id = '';
      for (let i = 0; i < 5; i++) {
        id = (INSTANCE_ID_ALPHABET[v % INSTANCE_ID_ALPHABET.length] ?? 'b') + id;
        v = Math.floor(v / INSTANCE_ID_ALPHABET.length);
      }
      return id;
    },
  };
}

/** Ids handed out from a fixed list (then sequential ones). */
export function fixedIds(...ids: string[]): InstanceIdSource {
  const rest = sequentialIds();
  const queue = [...ids];
  return { random: () => queue.shift() ?? rest.random() };
}

// ---------------------------------------------------------------------------------------------------------------
// Pod

let podCounter = 0;

export class PodBuilder {
  private readonly cs: CloneSet;
  private id: string;
  private podName: string | undefined = undefined;
  private revision: string;
  private shortLabel = false;
  private stateValue: LifecycleState | '' = 'Normal';
  private phaseValue: PodPhase | undefined = 'Pending';
  private node: string | undefined = undefined;
  private readyValue: boolean | undefined = undefined;
  private readySince: number | undefined = undefined;
  private inPlaceReady: boolean | undefined = true;
  private extraLabels: Record<string, string> = {};
  private removedLabels: string[] = [];
  private annotations: Record<string, string> = {};
  private owner: 'cloneset' | 'none' | { uid: string; controller: boolean } = 'cloneset';
  private created: number | undefined = T0 - 2 * HOUR;
  private deletionTs: string | undefined = undefined;
  private restartCount: number | undefined = undefined;
  private uidValue: string | undefined = undefined;
  private gates = true;

  constructor(cs: CloneSet) {
    this.cs = cs;
    this.id = `p${String(podCounter++).padStart(4, '0')}`;
    this.revision = 'r1';
  }

  ofRevision(rev: string): this {
    this.revision = rev;
    return this;
  }
  /** Label the revision with the bare hash (gate CloneSetShortHash). */
  shortHashLabel(): this {
    this.shortLabel = true;
    return this;
  }
  instanceId(id: string): this {
    this.id = id;
    return this;
  }
  named(name: string): this {
    this.podName = name;
    return this;
  }
  uid(uid: string): this {
    this.uidValue = uid;
    return this;
  }
  /** The lifecycle state label; '' removes it. */
  state(s: LifecycleState | ''): this {
    this.stateValue = s;
    return this;
  }
  onNode(node: string): this {
    this.node = node;
    return this;
  }
  /** Scheduled and Running, containers not ready yet. */
  running(): this {
    this.phaseValue = 'Running';
    this.node ??= `node-${this.id}`;
    this.readyValue = false;
    return this;
  }
  /** Scheduled, Running and Ready (InPlaceUpdateReady True), Ready for an hour unless `since` says otherwise. */
  ready(): this {
    this.running();
    this.readyValue = true;
    this.readySince ??= T0 - HOUR;
    return this;
  }
  /** When the pod became Ready (epoch ms). */
  since(ms: number): this {
    this.readySince = ms;
    return this;
  }
  /** Ready condition True without a lastTransitionTime. */
  readyWithoutTime(): this {
    this.ready();
    this.readySince = undefined;
    return this;
  }
  /** Readiness gate InPlaceUpdateReady: condition absent (undefined), True or False. */
  inPlaceUpdateReady(v: boolean | undefined): this {
    this.inPlaceReady = v;
    return this;
  }
  withoutReadinessGate(): this {
    this.gates = false;
    return this;
  }
  pending(): this {
    this.phaseValue = 'Pending';
    this.readyValue = undefined;
    return this;
  }
  phase(p: PodPhase | undefined): this {
    this.phaseValue = p;
    return this;
  }
  failed(): this {
    this.phaseValue = 'Failed';
    this.readyValue = false;
    return this;
  }
  succeeded(): this {
    this.phaseValue = 'Succeeded';
    this.readyValue = false;
    return this;
  }
  terminating(atMs = T0): this {
    this.deletionTs = rfc3339(atMs);
    return this;
  }
  specifiedDelete(): this {
    this.extraLabels[LABEL_SPECIFIED_DELETE] = 'true';
    return this;
  }
  deletionCost(cost: number | string): this {
    this.annotations[ANNOTATION_POD_DELETION_COST] = String(cost);
    return this;
  }
  label(key: string, value: string): this {
    this.extraLabels[key] = value;
    return this;
  }
  withoutLabel(key: string): this {
    this.removedLabels = [...this.removedLabels, key];
    return this;
  }
  createdAt(ms: number | undefined): this {
    this.created = ms;
    return this;
  }
  restarts(n: number): this {
    this.restartCount = n;
    return this;
  }
  /** No owner reference at all: an orphan with matching labels. */
  orphan(): this {
    this.owner = 'none';
    return this;
  }
  /** Owned by someone else (controller) or referencing our CloneSet without being controlled by it. */
  ownedBy(uid: string, controller = true): this {
    this.owner = { uid, controller };
    return this;
  }

  build(): Pod {
    const cs = this.cs;
    const csName = cs.metadata.name ?? '';
    const rev = revisionName(cs, this.revision);
    const labels: Record<string, string> = {
      ...(cs.spec.template.metadata?.labels ?? {}),
      [LABEL_REVISION_HASH]: this.shortLabel ? shortHash(rev) : rev,
      [LABEL_POD_TEMPLATE_HASH]: shortHash(rev),
      [LABEL_INSTANCE_ID]: this.id,
      ...(this.stateValue !== '' ? { [LABEL_LIFECYCLE_STATE]: this.stateValue } : {}),
      ...this.extraLabels,
    };
    for (const k of this.removedLabels) delete labels[k];
    const ownerReferences =
      this.owner === 'none' ? undefined : this.owner === 'cloneset' ? [controllerRefTo(cs)] : [{ ...controllerRefTo(cs), uid: this.owner.uid, controller: this.owner.controller }];
    const conditions: PodCondition[] = [];
    if (this.inPlaceReady !== undefined && this.gates) {
      conditions.push({ type: CONDITION_INPLACE_UPDATE_READY, status: this.inPlaceReady ? 'True' : 'False' });
    }
    if (this.readyValue !== undefined) {
      conditions.push({
        type: 'Ready',
        status: this.readyValue ? 'True' : 'False',
        ...(this.readyValue && this.readySince !== undefined ? { lastTransitionTime: rfc3339(this.readySince) } : {}),
      });
    }
    const name = this.podName ?? `${csName}-${this.id}`;
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace: cs.metadata.namespace ?? 'default',
        uid: this.uidValue ?? `uid-${name}`,
        resourceVersion: '1',
        labels,
        ...(Object.keys(this.annotations).length > 0 ? { annotations: { ...this.annotations } } : {}),
        ...(ownerReferences !== undefined ? { ownerReferences } : {}),
        ...(this.created !== undefined ? { creationTimestamp: rfc3339(this.created) } : {}),
        ...(this.deletionTs !== undefined ? { deletionTimestamp: this.deletionTs } : {}),
      },
      spec: {
        containers: [{ name: 'main', image: `nginx:${shortHash(rev)}` }],
        ...(this.gates ? { readinessGates: [{ conditionType: CONDITION_INPLACE_UPDATE_READY }] } : {}),
        ...(this.node !== undefined ? { nodeName: this.node } : {}),
      },
      status: {
        ...(this.phaseValue !== undefined ? { phase: this.phaseValue } : {}),
        ...(conditions.length > 0 ? { conditions } : {}),
        ...(this.restartCount !== undefined ? { containerStatuses: [{ name: 'main', restartCount: this.restartCount }] } : {}),
      },
    };
  }
}

export function aPod(cs: CloneSet): PodBuilder {
  return new PodBuilder(cs);
}

/** `n` ready pods of a revision with ids `<prefix>0`, `<prefix>1`, … (5 characters). */
export function readyPods(cs: CloneSet, n: number, rev = 'r1', prefix = rev === 'r1' ? 'old' : 'new'): Pod[] {
  return Array.from({ length: n }, (_, i) => aPod(cs).ofRevision(rev).instanceId(`${prefix}${i}`.padEnd(5, 'x')).ready().build());
}

// ---------------------------------------------------------------------------------------------------------------
// PVC

export class PvcBuilder {
  private readonly cs: CloneSet;
  private id = 'xxxxx';
  private template = 'data';
  private deletionTs: string | undefined = undefined;

  constructor(cs: CloneSet) {
    this.cs = cs;
  }
  instanceId(id: string): this {
    this.id = id;
    return this;
  }
  fromTemplate(name: string): this {
    this.template = name;
    return this;
  }
  terminating(): this {
    this.deletionTs = rfc3339(T0);
    return this;
  }
  build(): PersistentVolumeClaim {
    const cs = this.cs;
    const name = pvcName(this.template, cs.metadata.name ?? '', this.id);
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name,
        namespace: cs.metadata.namespace ?? 'default',
        uid: `uid-${name}`,
        labels: { ...(cs.spec.selector.matchLabels ?? {}), [LABEL_INSTANCE_ID]: this.id },
        ownerReferences: [controllerRefTo(cs)],
        ...(this.deletionTs !== undefined ? { deletionTimestamp: this.deletionTs } : {}),
      },
      spec: { accessModes: ['ReadWriteOnce'] },
    };
  }
}

export function aPvc(cs: CloneSet): PvcBuilder {
  return new PvcBuilder(cs);
}
