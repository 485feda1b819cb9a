// `get NAME`: the CloneSet, its revisions and each pod as a tree (after Argo Rollouts' `get rollout`). Pure:
// objects and a clock reading in, text out; colours only when asked (a TTY).
import type { CloneSet } from '../api/cloneset.ts';
import { CONDITION_INPLACE_UPDATE_READY, LABEL_LIFECYCLE_STATE, LABEL_REVISION_HASH, LABEL_SPECIFIED_DELETE } from '../api/well-known.ts';
import { decodeGraceSpec, graceAnnotationOf, readState } from '../cloneset/inplace/state.ts';
import { partitionAbs, scaledValue } from '../cloneset/plan/int-or-percent.ts';
import { podCondition, timestampMs } from '../cloneset/plan/pod-predicates.ts';
import { templateFromRevision } from '../cloneset/plan/revisions.ts';
import type { ControllerRevision, Pod } from '../kube/types.ts';
import { imagesOf, ownedRevisions } from './history.ts';

export type Tone = 'ok' | 'progress' | 'bad' | 'muted' | 'plain';

const ANSI: Readonly<Record<Tone, string>> = { ok: '\x1b[32m', progress: '\x1b[33m', bad: '\x1b[31m', muted: '\x1b[90m', plain: '' };
const RESET = '\x1b[0m';

interface Cell {
  readonly text: string;
  readonly tone?: Tone;
}

export interface PodView {
  readonly name: string;
  readonly revision: string;
  readonly phase: string;
  readonly status: string;
  readonly tone: Tone;
  readonly ready: string;
  readonly lifecycle: string;
  readonly inPlace: string;
  readonly node: string;
  readonly age: string;
  readonly restarts: number;
}

export interface CloneSetView {
  readonly name: string;
  readonly namespace: string;
  readonly status: string;
  readonly tone: Tone;
  readonly message: string;
  readonly strategy: Readonly<Record<string, string | number | boolean>>;
  readonly replicas: Readonly<Record<string, number>>;
  readonly currentRevision: string;
  readonly updateRevision: string;
  readonly conditions: readonly string[];
  readonly revisions: readonly {
    readonly name: string;
    readonly revision: number;
    readonly role: string;
    readonly images: string;
    readonly age: string;
    readonly pods: readonly PodView[];
  }[];
}

export function age(fromIso: string | null | undefined, nowMs: number): string {
  const t = timestampMs(fromIso);
  if (t === undefined) return '<unknown>';
  const s = Math.max(0, Math.floor((nowMs - t) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60}s`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${m % 60 === 0 ? '' : `${m % 60}m`}`;
  return `${Math.floor(h / 24)}d`;
}

/** In-place update progress from the pod's annotations: target revision, container batches, grace left. */
export function inPlaceProgress(pod: Pod, nowMs: number): string {
  const parts: string[] = [];
  const grace = graceAnnotationOf(pod);
  const state = readState(pod);
  if (grace !== undefined) {
    try {
      const spec = decodeGraceSpec(grace);
      const since = state?.ok === true ? (timestampMs(state.value.updateTimestamp) ?? 0) + 1000 : undefined;
      const left = since === undefined ? undefined : Math.max(0, Math.ceil((since + spec.graceSeconds * 1000 - nowMs) / 1000));
      parts.push(
        `in-place → ${spec.revision}: grace period${left === undefined ? '' : ` ${left}s left`} (${[...Object.keys(spec.containerImages), ...Object.keys(spec.containerRefMetadata)].join(',') || 'metadata'})`,
      );
    } catch {
      parts.push('in-place: unreadable grace annotation');
    }
    return parts.join(' ');
  }
  if (state === undefined) return '';
  if (!state.ok) return `in-place: unreadable state (${state.error})`;
  const s = state.value;
  const ready = podCondition(pod, CONDITION_INPLACE_UPDATE_READY)?.status;
  const batches = s.containerBatchesRecord ?? [];
  const pending = [...Object.keys(s.nextContainerImages ?? {}), ...Object.keys(s.nextContainerRefMetadata ?? {})];
  const total = batches.length + (pending.length > 0 ? 1 : 0);
  const done = ready === 'True' && pending.length === 0;
  if (done) return '';
  const current = batches.at(-1);
  const batchText = total > 0 ? ` batch ${batches.length}/${total}${current !== undefined ? ` [${current.containers.join(',')}]` : ''}` : '';
  const next = pending.length > 0 ? ` next [${pending.join(',')}]` : '';
  const since = age(s.updateTimestamp, nowMs);
  return `in-place → ${s.revision}:${batchText}${next} for ${since}${ready === 'False' ? ' (InPlaceUpdateReady=False)' : ''}`;
}

function podView(pod: Pod, nowMs: number): PodView {
  const statuses = pod.status?.containerStatuses ?? [];
  const containers = pod.spec.containers.length;
  const readyCount = statuses.filter((c) => c.ready === true).length;
  const ready = podCondition(pod, 'Ready')?.status === 'True';
  const lifecycle = pod.metadata.labels?.[LABEL_LIFECYCLE_STATE] ?? '';
  const inPlace = inPlaceProgress(pod, nowMs);
  const phase = pod.status?.phase ?? 'Pending';
  let status: string;
  let tone: Tone;
  if (pod.metadata.deletionTimestamp !== undefined) [status, tone] = ['Terminating', 'muted'];
  else if (phase === 'Failed' || phase === 'Succeeded') [status, tone] = [phase, phase === 'Failed' ? 'bad' : 'muted'];
  else if (inPlace !== '' || (lifecycle !== '' && lifecycle !== 'Normal')) [status, tone] = [lifecycle !== '' && lifecycle !== 'Normal' ? lifecycle : 'Updating', 'progress'];
  else if (pod.metadata.labels?.[LABEL_SPECIFIED_DELETE] !== undefined) [status, tone] = ['SpecifiedDelete', 'progress'];
  else if (phase === 'Running' && ready) [status, tone] = ['Running', 'ok'];
  else [status, tone] = [phase === 'Running' ? 'NotReady' : phase, 'progress'];
  return {
    name: pod.metadata.name ?? '',
    revision: pod.metadata.labels?.[LABEL_REVISION_HASH] ?? '',
    phase,
    status,
    tone,
    ready: `${readyCount}/${containers}${ready ? '' : ` not-ready${gatesPending(pod)}`}`,
    lifecycle,
    inPlace,
    node: pod.spec.nodeName ?? '<none>',
    age: age(pod.metadata.creationTimestamp, nowMs),
    restarts: statuses.reduce((n, c) => n + (c.restartCount ?? 0), 0),
  };
}

/** Readiness gates whose condition is not True (why a pod with ready containers is still not Ready). */
function gatesPending(pod: Pod): string {
  const pending = (pod.spec.readinessGates ?? []).map((g) => g.conditionType).filter((t) => podCondition(pod, t)?.status !== 'True');
  return pending.length > 0 ? ` (gate ${pending.join(', ')})` : '';
}

/** Kruise's pod label holds the full revision name, or only the hash (gate CloneSetShortHash). */
function podOfRevision(pod: PodView, revisionName: string): boolean {
  return pod.revision !== '' && (revisionName === pod.revision || revisionName.endsWith(`-${pod.revision}`));
}

/** `allRevisions` (-o wide): also the revisions that are neither current nor update and have no pods. */
export function buildView(cs: CloneSet, revisions: readonly ControllerRevision[], pods: readonly Pod[], nowMs: number, allRevisions = false): CloneSetView {
  const status = cs.status;
  const us = cs.spec.updateStrategy ?? {};
  const replicas = cs.spec.replicas ?? 1;
  const views = pods.map((p) => podView(p, nowMs)).sort((a, b) => a.name.localeCompare(b.name));
  const owned = ownedRevisions(cs, revisions).reverse();
  const used = new Set<PodView>();
  const revViews = owned
    .map((r) => {
      const name = r.metadata.name ?? '';
      const mine = views.filter((p) => !used.has(p) && podOfRevision(p, name));
      for (const p of mine) used.add(p);
      const role = [name === status?.updateRevision ? 'update' : '', name === status?.currentRevision ? 'current' : ''].filter((x) => x !== '').join(',');
      return { name, revision: r.revision, role, images: imagesOf(templateFromRevision(r)), age: age(r.metadata.creationTimestamp, nowMs), pods: mine };
    })
    .filter((r) => allRevisions || r.role !== '' || r.pods.length > 0);
  const orphans = views.filter((p) => !used.has(p));
  if (orphans.length > 0) revViews.push({ name: '<unknown revision>', revision: 0, role: '', images: '', age: '', pods: orphans });
  const { text, tone, message } = overall(cs);
  const maxSurge = us.maxSurge === undefined ? 0 : scaledValue(us.maxSurge, replicas, true);
  return {
    name: cs.metadata.name ?? '',
    namespace: cs.metadata.namespace ?? '',
    status: text,
    tone,
    message,
    strategy: {
      type: us.type ?? 'ReCreate',
      partition: partitionAbs(us.partition, replicas),
      maxUnavailable: String(us.maxUnavailable ?? '20%'),
      maxSurge: us.maxSurge === undefined ? '0' : `${String(us.maxSurge)}${typeof us.maxSurge === 'string' ? ` (${maxSurge})` : ''}`,
      paused: us.paused === true,
      ...(us.inPlaceUpdateStrategy?.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: us.inPlaceUpdateStrategy.gracePeriodSeconds } : {}),
    },
    replicas: {
      desired: replicas,
      current: status?.replicas ?? 0,
      updated: status?.updatedReplicas ?? 0,
      expectedUpdated: status?.expectedUpdatedReplicas ?? replicas,
      ready: status?.readyReplicas ?? 0,
      available: status?.availableReplicas ?? 0,
    },
    currentRevision: status?.currentRevision ?? '',
    updateRevision: status?.updateRevision ?? '',
    conditions: (status?.conditions ?? []).map(
      (c) => `${c.type}=${c.status}${c.reason !== undefined ? ` (${c.reason})` : ''}${c.message !== undefined && c.message !== '' ? `: ${c.message}` : ''}`,
    ),
    revisions: revViews,
  };
}

export function overall(cs: CloneSet): { text: string; tone: Tone; message: string } {
  const status = cs.status;
  const replicas = cs.spec.replicas ?? 1;
  const progressing = status?.conditions?.find((c) => c.type === 'Progressing');
  const failed = status?.conditions?.find((c) => (c.type === 'FailedUpdate' || c.type === 'FailedScale') && c.status === 'True');
  if (progressing?.reason === 'ProgressDeadlineExceeded') return { text: 'Degraded', tone: 'bad', message: progressing.message ?? 'progress deadline exceeded' };
  if (failed !== undefined) return { text: 'Degraded', tone: 'bad', message: `${failed.type}: ${failed.message ?? ''}` };
  if (cs.spec.updateStrategy?.paused === true) return { text: 'Paused', tone: 'muted', message: 'updateStrategy.paused' };
  if (status === undefined || (status.observedGeneration ?? 0) < (cs.metadata.generation ?? 0))
    return { text: 'Progressing', tone: 'progress', message: 'spec change not yet observed' };
  const expected = status.expectedUpdatedReplicas ?? replicas;
  const done =
    status.updatedReplicas >= expected &&
    (status.updatedAvailableReplicas ?? status.updatedReadyReplicas) >= expected &&
    status.replicas === replicas &&
    status.availableReplicas >= replicas;
  return done ? { text: 'Healthy', tone: 'ok', message: '' } : { text: 'Progressing', tone: 'progress', message: '' };
}

const paint = (text: string, tone: Tone | undefined, colour: boolean): string => (colour && tone !== undefined && tone !== 'plain' ? `${ANSI[tone]}${text}${RESET}` : text);

/** The glyph the text view puts before a status (the data of -o json/yaml carries the word alone). */
const GLYPHS: Readonly<Record<string, string>> = { Healthy: '✔', Degraded: '✖', Paused: '॥', Progressing: '◌' };
const withGlyph = (status: string, tone: Tone): string => `${GLYPHS[status] ?? (tone === 'ok' ? '✔' : tone === 'bad' ? '✖' : '◌')} ${status}`;

const visibleLength = (text: string): number => [...text].length;

/**
 * `text` cut to `max` visible characters, at a word boundary when there is one in the second half, ending with
 * "…": a terminal never wraps the line, and no word is cut in two unless a single word is longer than the room.
 */
export function clip(text: string, max: number): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  if (max <= 1) return max === 1 ? '…' : '';
  const cut = chars.slice(0, max - 1).join('');
  const space = cut.lastIndexOf(' ');
  return `${(space >= Math.floor((max - 1) / 2) ? cut.slice(0, space) : cut).trimEnd()}…`;
}

function table(rows: readonly (readonly Cell[])[], colour: boolean, width: number | undefined): string[] {
  const widths: number[] = [];
  for (const row of rows)
    row.forEach((c, i) => {
      widths[i] = Math.max(widths[i] ?? 0, visibleLength(c.text));
    });
  return rows.map((row) => {
    let used = 0;
    return row
      .map((c, i) => {
        const last = i === row.length - 1;
        // The last column (INFO) gets what is left of the terminal's width; the others are never cut.
        const text = last && width !== undefined ? clip(c.text, Math.max(0, width - used)) : c.text;
        const pad = last ? '' : ' '.repeat((widths[i] ?? 0) - visibleLength(c.text) + 2);
        used += visibleLength(text) + pad.length;
        return paint(text, c.tone, colour) + pad;
      })
      .join('')
      .trimEnd();
  });
}

export interface RenderOptions {
  readonly colour: boolean;
  readonly wide: boolean;
  /** Terminal columns: lines are clipped to it (never wrapped). */
  readonly width?: number;
  /** Terminal rows: the header always shows, revisions and pods are folded into "… N more" to fit. */
  readonly height?: number;
}

type RevisionView = CloneSetView['revisions'][number];

/** Rows the tree needs when each revision shows at most `perRevision` pods (plus a "… N more" row if it hides some). */
function treeRows(revisions: readonly RevisionView[], perRevision: number): number {
  return revisions.reduce((n, r) => n + 1 + Math.min(r.pods.length, perRevision) + (r.pods.length > perRevision ? 1 : 0), 0);
}

/** The revisions and pods that fit in `rows` lines: as many pods per revision as fit, then fewer revisions. */
function fold(
  revisions: readonly RevisionView[],
  rows: number,
): { readonly revisions: readonly RevisionView[]; readonly hiddenPods: ReadonlyMap<RevisionView, number>; readonly hiddenRevisions: number } {
  const most = Math.max(0, ...revisions.map((r) => r.pods.length));
  let per = most;
  while (per > 0 && treeRows(revisions, per) > rows) per--;
  let shown = revisions;
  let hiddenRevisions = 0;
  // Even without pods the revisions do not fit: keep the newest (listed first), one row for the rest.
  while (shown.length > 0 && treeRows(shown, per) + (hiddenRevisions > 0 ? 1 : 0) > rows) {
    shown = shown.slice(0, -1);
    hiddenRevisions = revisions.length - shown.length;
  }
  const hiddenPods = new Map<RevisionView, number>();
  const folded = shown.map((r) => {
    if (r.pods.length <= per) return r;
    const kept = { ...r, pods: r.pods.slice(0, per) };
    hiddenPods.set(kept, r.pods.length - per);
    return kept;
  });
  return { revisions: folded, hiddenPods, hiddenRevisions };
}

export function renderView(v: CloneSetView, opts: RenderOptions): string {
  const s = v.strategy;
  const r = v.replicas;
  const fit = (line: string): string => (opts.width === undefined ? line : clip(line, opts.width));
  const statusText = withGlyph(v.status, v.tone);
  const statusLine = `Status:          ${statusText}`;
  const message = v.message === '' ? '' : opts.width === undefined ? `  ${v.message}` : clip(`  ${v.message}`, Math.max(0, opts.width - visibleLength(statusLine)));
  const head = [
    fit(`Name:            ${v.name}`),
    fit(`Namespace:       ${v.namespace}`),
    `Status:          ${paint(statusText, v.tone, opts.colour)}${message}`,
    fit(
      `Strategy:        ${String(s['type'])}  partition ${String(s['partition'])}  maxUnavailable ${String(s['maxUnavailable'])}  maxSurge ${String(s['maxSurge'])}${s['paused'] === true ? '  paused' : ''}${s['gracePeriodSeconds'] !== undefined ? `  grace ${String(s['gracePeriodSeconds'])}s` : ''}`,
    ),
    fit(
      `Replicas:        desired ${r['desired'] ?? 0}  current ${r['current'] ?? 0}  updated ${r['updated'] ?? 0}/${r['expectedUpdated'] ?? 0}  ready ${r['ready'] ?? 0}  available ${r['available'] ?? 0}`,
    ),
    fit(`Revisions:       current ${v.currentRevision || '<none>'}  update ${v.updateRevision || '<none>'}`),
    fit(`Conditions:      ${v.conditions.length === 0 ? '<none>' : v.conditions.join('; ')}`),
    '',
  ];
  // The table's own header and the CloneSet's row come first; the tree gets the rows left.
  const room = opts.height === undefined ? Number.POSITIVE_INFINITY : Math.max(0, opts.height - head.length - 2);
  const { revisions, hiddenPods, hiddenRevisions } = fold(v.revisions, room);
  const rows: Cell[][] = [[{ text: 'NAME' }, { text: 'KIND' }, { text: 'STATUS' }, { text: 'AGE' }, { text: 'INFO' }]];
  rows.push([{ text: `⟳ ${v.name}` }, { text: 'CloneSet' }, { text: statusText, tone: v.tone }, { text: '' }, { text: '' }]);
  revisions.forEach((rev, ri) => {
    const lastRev = ri === revisions.length - 1 && hiddenRevisions === 0;
    const label = rev.revision > 0 ? `revision:${rev.revision}` : rev.name;
    const info = [rev.role, rev.revision > 0 ? rev.name : '', opts.wide || rev.role !== '' ? rev.images : ''].filter((x) => x !== '').join('  ');
    rows.push([{ text: `${lastRev ? '└' : '├'}──# ${label}` }, { text: 'Revision' }, { text: '' }, { text: rev.age }, { text: info }]);
    const hidden = hiddenPods.get(rev) ?? 0;
    const indent = lastRev ? '   ' : '│  ';
    rev.pods.forEach((p, pi) => {
      const branch = `${indent}${pi === rev.pods.length - 1 && hidden === 0 ? '└' : '├'}──□ ${p.name}`;
      const info = [`ready:${p.ready}`, p.lifecycle !== '' ? `lifecycle:${p.lifecycle}` : '', p.node, `restarts:${p.restarts}`, p.inPlace].filter((x) => x !== '').join('  ');
      rows.push([{ text: branch }, { text: 'Pod' }, { text: withGlyph(p.status, p.tone), tone: p.tone }, { text: p.age }, { text: info }]);
    });
    if (hidden > 0) rows.push([{ text: `${indent}└── … ${hidden} more pod${hidden === 1 ? '' : 's'}`, tone: 'muted' }, { text: '' }, { text: '' }, { text: '' }, { text: '' }]);
  });
  if (hiddenRevisions > 0)
    rows.push([{ text: `└── … ${hiddenRevisions} more revision${hiddenRevisions === 1 ? '' : 's'}`, tone: 'muted' }, { text: '' }, { text: '' }, { text: '' }, { text: '' }]);
  const lines = [...head, ...table(rows, opts.colour, opts.width)];
  return (opts.height === undefined ? lines : lines.slice(0, opts.height)).join('\n');
}
