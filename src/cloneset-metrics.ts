// Per-CloneSet metrics, what kube-state-metrics gives Deployments: status replicas and conditions as the API server
// stores them, pods by lifecycle state, and from the reconciler (cloneset/rollout-observer.ts) why a rollout is
// blocked and how long rollouts and in-place updates took. Gauges are computed from the informer caches when
// scraped (nothing runs between scrapes); only CloneSets the observer admitted (--metrics-max-clonesets) get series.
import { Gauge, Histogram, type Registry } from 'prom-client';
import type { CloneSet } from './api/cloneset.ts';
import { LABEL_LIFECYCLE_STATE } from './api/well-known.ts';
import type { Pod } from './kube/types.ts';
import type { Store } from './runtime/store.ts';
import { INDEX_OWNER_UID } from './cloneset/snapshot.ts';
import type { RolloutMetricsSink, RolloutObserver } from './cloneset/rollout-observer.ts';

/** What the collector reads while a manager runs (the leader); a standby exports no per-CloneSet series. */
export interface CloneSetMetricsSource {
  readonly cloneSets: Store<CloneSet>;
  readonly pods: Store<Pod>;
  readonly rollouts: RolloutObserver;
}

/** Seconds: from a few seconds (a handful of in-place updates) to hours (a large fleet behind a slow budget). */
const ROLLOUT_BUCKETS = [5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400];
const INPLACE_BUCKETS = [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600];
const LIFECYCLE_STATES = ['Normal', 'PreparingNormal', 'PreparingUpdate', 'Updated', 'PreparingDelete'] as const;

/** Registers the per-CloneSet metrics; returns the sink the RolloutObserver writes durations to. */
export function cloneSetMetrics(registry: Registry, source: () => CloneSetMetricsSource | undefined): RolloutMetricsSink {
  const registers = [registry];
  const each = function* (): Iterable<{ cs: CloneSet; labels: { namespace: string; cloneset: string } }> {
    const src = source();
    if (src === undefined) return;
    for (const key of src.rollouts.keys()) {
      const cs = src.cloneSets.get(key);
      if (cs !== undefined) yield { cs, labels: { namespace: cs.metadata.namespace ?? '', cloneset: cs.metadata.name ?? '' } };
    }
  };
  new Gauge({
    name: 'cloneset_status_replicas',
    help: 'CloneSet replicas by state, as the CloneSet status reports them (desired is spec.replicas).',
    labelNames: ['namespace', 'cloneset', 'state'],
    registers,
    collect() {
      this.reset();
      for (const { cs, labels } of each()) {
        const s = cs.status;
        const values: Record<string, number> = {
          desired: cs.spec.replicas ?? 1,
          current: s?.replicas ?? 0,
          updated: s?.updatedReplicas ?? 0,
          ready: s?.readyReplicas ?? 0,
          available: s?.availableReplicas ?? 0,
          updated_ready: s?.updatedReadyReplicas ?? 0,
        };
        for (const [state, v] of Object.entries(values)) this.set({ ...labels, state }, v);
      }
    },
  });
  new Gauge({
    name: 'cloneset_status_condition',
    help: 'The CloneSet status conditions: 1 for the status the condition has, with its reason.',
    labelNames: ['namespace', 'cloneset', 'condition', 'status', 'reason'],
    registers,
    collect() {
      this.reset();
      for (const { cs, labels } of each()) {
        for (const c of cs.status?.conditions ?? []) this.set({ ...labels, condition: c.type, status: c.status, reason: c.reason ?? '' }, 1);
      }
    },
  });
  new Gauge({
    name: 'cloneset_status_observed_generation_lag',
    help: 'metadata.generation minus status.observedGeneration: above 0 while the controller has not yet acted on a spec change.',
    labelNames: ['namespace', 'cloneset'],
    registers,
    collect() {
      this.reset();
      for (const { cs, labels } of each()) this.set(labels, Math.max(0, (cs.metadata.generation ?? 0) - (cs.status?.observedGeneration ?? 0)));
    },
  });
  new Gauge({
    name: 'cloneset_pods',
    help: 'Active pods owned by the CloneSet by lifecycle state (lifecycle.apps.kruise.io/state; Normal when unset).',
    labelNames: ['namespace', 'cloneset', 'lifecycle_state'],
    registers,
    collect() {
      this.reset();
      const src = source();
      if (src === undefined) return;
      for (const { cs, labels } of each()) {
        const counts = new Map<string, number>(LIFECYCLE_STATES.map((s) => [s, 0]));
        for (const pod of src.pods.byIndex(INDEX_OWNER_UID, cs.metadata.uid ?? '')) {
          if (pod.metadata.deletionTimestamp !== undefined || pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed') continue;
          const state = pod.metadata.labels?.[LABEL_LIFECYCLE_STATE] ?? 'Normal';
          counts.set(state === '' ? 'Normal' : state, (counts.get(state === '' ? 'Normal' : state) ?? 0) + 1);
        }
        for (const [lifecycleState, n] of counts) this.set({ ...labels, lifecycle_state: lifecycleState }, n);
      }
    },
  });
  new Gauge({
    name: 'cloneset_rollout_blocked',
    help: "1 while the reason holds the CloneSet's rollout back (from the planner: paused, partition, maxUnavailable, readinessGate, preDeleteHook, inPlaceUpdateHook, gracePeriod, failedUpdate, progressDeadline, expectations); no series when nothing does.",
    labelNames: ['namespace', 'cloneset', 'reason'],
    registers,
    collect() {
      this.reset();
      for (const b of source()?.rollouts.blocked() ?? []) this.set({ namespace: b.namespace, cloneset: b.cloneSet, reason: b.reason }, 1);
    },
  });
  new Gauge({
    name: 'cloneset_rollout_blocked_seconds',
    help: "How long the reason has held the CloneSet's rollout back.",
    labelNames: ['namespace', 'cloneset', 'reason'],
    registers,
    collect() {
      this.reset();
      const now = Date.now();
      for (const b of source()?.rollouts.blocked() ?? []) this.set({ namespace: b.namespace, cloneset: b.cloneSet, reason: b.reason }, Math.max(0, (now - b.sinceMs) / 1000));
    },
  });
  new Gauge({
    name: 'cloneset_metrics_clonesets_omitted',
    help: 'CloneSets without per-CloneSet series because --metrics-max-clonesets was reached.',
    registers,
    collect() {
      this.set(source()?.rollouts.omitted() ?? 0);
    },
  });
  const rollout = new Histogram({
    name: 'cloneset_rollout_duration_seconds',
    help: 'Time from a new update revision to all pods updated and available.',
    labelNames: ['namespace', 'cloneset'],
    buckets: ROLLOUT_BUCKETS,
    registers,
  });
  const inPlace = new Histogram({
    name: 'cloneset_inplace_update_duration_seconds',
    help: "Time from the start of a pod's in-place update to the pod being ready again at the new revision.",
    labelNames: ['namespace', 'cloneset'],
    buckets: INPLACE_BUCKETS,
    registers,
  });
  return {
    rolloutFinished: (namespace, cloneset, seconds) => rollout.observe({ namespace, cloneset }, seconds),
    inPlaceUpdated: (namespace, cloneset, seconds) => inPlace.observe({ namespace, cloneset }, seconds),
    forgotten(namespace, cloneset) {
      rollout.remove({ namespace, cloneset });
      inPlace.remove({ namespace, cloneset });
    },
  };
}
