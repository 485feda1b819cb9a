// `get NAME [--watch]`: reads (or watches, through the runtime's informers: one list, then watch streams) the
// CloneSet, its ControllerRevisions and its pods, and prints the tree of tree.ts. In a terminal the live view
// takes the alternate screen (as `top` and `less` do: the shell's screen and scrollback come back untouched on
// exit, `q` or Ctrl-C), redraws in place with colours, fits the terminal (lines clipped to its width, pods and
// revisions folded to its height, the header always on screen, redrawn on resize), and refreshes once a second
// for ages and grace countdowns. Piped, each change prints a fresh plain copy.
import { pino } from 'pino';
import { stringify } from 'yaml';
import type { CloneSet } from '../api/cloneset.ts';
import { controllerRefOf } from '../kube/owner-refs.ts';
import { selectorToString } from '../kube/selectors.ts';
import { CONTROLLER_REVISIONS, PODS } from '../kube/resources.ts';
import type { ControllerRevision, KubeObject, Pod } from '../kube/types.ts';
import { Informer } from '../runtime/informer.ts';
import { systemClock } from '../runtime/clock.ts';
import type { OutputFormat } from './flags.ts';
import { getCloneSet, PluginError, RESOURCE, type Session } from './session.ts';
import { formatTable } from './history.ts';
import { age, buildView, clip, overall, renderView, type CloneSetView } from './tree.ts';

/** The terminal the live view draws on (absent when stdout is not one). */
export interface Terminal {
  readonly size: () => { readonly columns: number; readonly rows: number };
  /** Calls back on every resize; returns the unsubscribe. */
  readonly onResize: (redraw: () => void) => () => void;
  /** Reads single keys (raw mode) until the returned function restores the input; absent when stdin is no terminal. */
  readonly onKey?: (key: (k: string) => void) => () => void;
}

export interface GetOptions {
  readonly watch: boolean;
  readonly output: OutputFormat;
  readonly tty: boolean;
  readonly terminal?: Terminal;
  readonly write: (text: string) => void;
  /** Ends the watch (SIGINT); the command then resolves. */
  readonly signal: AbortSignal;
}

const ALT_SCREEN_ON = '\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J';
const ALT_SCREEN_OFF = '\x1b[?25h\x1b[?1049l';

const ownedBy =
  (uid: string) =>
  (o: KubeObject): boolean =>
    controllerRefOf(o)?.uid === uid;

function render(view: CloneSetView, opts: GetOptions, fit?: { readonly columns: number; readonly rows: number }): string {
  if (opts.output === 'json') return JSON.stringify(view, null, 2);
  if (opts.output === 'yaml') return stringify(view);
  const width = fit?.columns ?? (opts.tty ? opts.terminal?.size().columns : undefined);
  return renderView(view, { colour: opts.tty, wide: opts.output === 'wide', ...(width !== undefined ? { width } : {}), ...(fit !== undefined ? { height: fit.rows } : {}) });
}

export async function getCommand(s: Session, name: string, opts: GetOptions): Promise<void> {
  const first = await getCloneSet(s, name);
  const selector = selectorToString(first.spec.selector);
  if (!opts.watch) {
    const [revs, pods] = await Promise.all([
      s.client.listAll<ControllerRevision>(CONTROLLER_REVISIONS, s.namespace, { labelSelector: selector }),
      s.client.listAll<Pod>(PODS, s.namespace, { labelSelector: selector }),
    ]);
    const uid = first.metadata.uid ?? '';
    opts.write(`${render(buildView(first, revs.items, pods.items.filter(ownedBy(uid)), Date.now(), opts.output === 'wide'), opts)}\n`);
    return;
  }
  await watchView(s, name, selector, opts);
}

async function watchView(s: Session, name: string, selector: string, opts: GetOptions): Promise<void> {
  const logger = pino({ level: 'silent' });
  const base = { client: s.client, namespace: s.namespace, clock: systemClock, logger };
  const cloneSets = new Informer<CloneSet>({ ...base, resource: s.api.resource, transform: s.api.toInternal, fieldSelector: `metadata.name=${name}` });
  const revisions = new Informer<ControllerRevision>({ ...base, resource: CONTROLLER_REVISIONS, labelSelector: selector });
  const pods = new Informer<Pod>({ ...base, resource: PODS, labelSelector: selector });
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  opts.signal.addEventListener('abort', onAbort);
  const screen = opts.tty && opts.output !== 'json' && opts.output !== 'yaml' ? opts.terminal : undefined;
  let last = '';
  let pending: ReturnType<typeof setTimeout> | undefined;
  let gone = false;
  // No frame before all three caches are synced: a first frame with the CloneSet but not yet its pods would be wrong.
  let synced = false;
  const draw = (force: boolean): void => {
    if (!synced) return;
    const cs = cloneSets.store.get(`${s.namespace}/${name}`);
    if (cs === undefined) {
      if (!gone) opts.write(`${RESOURCE} "${name}" was deleted\n`);
      gone = true;
      stop.abort();
      return;
    }
    const uid = cs.metadata.uid ?? '';
    const view = buildView(cs, revisions.store.list(), pods.store.list().filter(ownedBy(uid)), Date.now(), opts.output === 'wide');
    // The last row stays free for the hint; no line ends the frame, so the screen never scrolls.
    const size = screen?.size();
    const text = render(view, opts, size === undefined ? undefined : { columns: size.columns, rows: Math.max(1, size.rows - 1) });
    if (!force && text === last) return;
    last = text;
    if (size !== undefined) {
      const hint = clip('(q or Ctrl-C to quit)', size.columns);
      opts.write(
        `\x1b[H${text
          .split('\n')
          .map((l) => `${l}\x1b[K`)
          .join('\r\n')}\x1b[J\x1b[${size.rows};1H\x1b[90m${hint}\x1b[0m`,
      );
    } else opts.write(`${text}\n\n`);
  };
  const schedule = (): void => {
    if (pending !== undefined) return;
    pending = setTimeout(() => {
      pending = undefined;
      draw(false);
    }, 100);
  };
  const handlers = { onAdd: schedule, onUpdate: schedule, onDelete: schedule };
  cloneSets.addHandlers(handlers);
  revisions.addHandlers(handlers);
  pods.addHandlers(handlers);
  cloneSets.start(stop.signal);
  revisions.start(stop.signal);
  pods.start(stop.signal);
  const cleanups: (() => void)[] = [];
  if (screen !== undefined) {
    opts.write(ALT_SCREEN_ON);
    cleanups.push(() => opts.write(ALT_SCREEN_OFF));
    cleanups.push(screen.onResize(() => draw(true)));
    // Raw mode turns Ctrl-C into a key: it ends the view like q.
    if (screen.onKey !== undefined)
      cleanups.push(
        screen.onKey((k) => {
          if (k === 'q' || k === 'Q' || k === '\x03') stop.abort();
        }),
      );
  }
  let ticker: ReturnType<typeof setInterval> | undefined;
  try {
    try {
      await Promise.all([cloneSets.waitForSync(stop.signal), revisions.waitForSync(stop.signal), pods.waitForSync(stop.signal)]);
    } catch (e) {
      if (!stop.signal.aborted) throw e;
    }
    if (cloneSets.store.get(`${s.namespace}/${name}`) === undefined && !stop.signal.aborted) {
      stop.abort();
      throw new PluginError(`${RESOURCE} "${name}" not found in namespace "${s.namespace}"`);
    }
    synced = true;
    draw(true);
    // Ages and grace countdowns move with the clock: redraw the terminal once a second (no API call).
    ticker = screen !== undefined ? setInterval(() => draw(false), 1000) : undefined;
    await new Promise<void>((resolve) => {
      if (stop.signal.aborted) resolve();
      else stop.signal.addEventListener('abort', () => resolve(), { once: true });
    });
  } finally {
    stop.abort();
    if (ticker !== undefined) clearInterval(ticker);
    if (pending !== undefined) clearTimeout(pending);
    opts.signal.removeEventListener('abort', onAbort);
    for (const cleanup of cleanups.reverse()) cleanup();
  }
}

export interface ListOptions {
  readonly allNamespaces: boolean;
  readonly selector?: string;
  readonly output: OutputFormat;
  readonly write: (text: string) => void;
}

/** `get` without NAME: the CloneSets of the namespace (or of all, -A), filtered by -l, as `kubectl get` lists them. */
export async function listCommand(s: Session, opts: ListOptions): Promise<void> {
  const list = await s.client.listAll<CloneSet>(s.api.resource, opts.allNamespaces ? undefined : s.namespace, {
    ...(opts.selector !== undefined ? { labelSelector: opts.selector } : {}),
    map: s.api.toInternal,
  });
  const now = Date.now();
  const rows = list.items.map((cs) => ({
    namespace: cs.metadata.namespace ?? '',
    name: cs.metadata.name ?? '',
    desired: cs.spec.replicas ?? 1,
    updated: cs.status?.updatedReplicas ?? 0,
    ready: cs.status?.readyReplicas ?? 0,
    available: cs.status?.availableReplicas ?? 0,
    status: overall(cs).text,
    age: age(cs.metadata.creationTimestamp, now),
  }));
  if (opts.output === 'json') return opts.write(`${JSON.stringify(rows, null, 2)}\n`);
  if (opts.output === 'yaml') return opts.write(stringify(rows));
  if (rows.length === 0) {
    return opts.write(opts.allNamespaces ? 'No resources found\n' : `No resources found in ${s.namespace} namespace.\n`);
  }
  const header = [...(opts.allNamespaces ? ['NAMESPACE'] : []), 'NAME', 'DESIRED', 'UPDATED', 'READY', 'AVAILABLE', 'STATUS', 'AGE'];
  const cells = rows.map((r) => [
    ...(opts.allNamespaces ? [r.namespace] : []),
    r.name,
    String(r.desired),
    String(r.updated),
    String(r.ready),
    String(r.available),
    r.status,
    r.age,
  ]);
  opts.write(`${formatTable([header, ...cells])}\n`);
}
