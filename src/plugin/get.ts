// `get NAME [--watch]`: reads (or watches, through the runtime's informers: one list, then watch streams) the
// CloneSet, its ControllerRevisions and its pods, and prints the tree of tree.ts. In a terminal the view is
// redrawn in place (cursor home, clear below) with colours, and once a second for ages and grace countdowns;
// piped, each change prints a fresh plain copy.
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
import { buildView, renderView, type CloneSetView } from './tree.ts';

export interface GetOptions {
  readonly watch: boolean;
  readonly output: OutputFormat;
  readonly tty: boolean;
  readonly write: (text: string) => void;
  /** Ends the watch (SIGINT); the command then resolves. */
  readonly signal: AbortSignal;
}

const ownedBy = (uid: string) => (o: KubeObject): boolean => controllerRefOf(o)?.uid === uid;

function render(view: CloneSetView, opts: GetOptions): string {
  if (opts.output === 'json') return JSON.stringify(view, null, 2);
  if (opts.output === 'yaml') return stringify(view);
  return renderView(view, { colour: opts.tty, wide: opts.output === 'wide' });
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
  let last = '';
  let pending: ReturnType<typeof setTimeout> | undefined;
  let gone = false;
  const draw = (force: boolean): void => {
    const cs = cloneSets.store.get(`${s.namespace}/${name}`);
    if (cs === undefined) {
      if (!gone) opts.write(`${RESOURCE} "${name}" was deleted\n`);
      gone = true;
      stop.abort();
      return;
    }
    const uid = cs.metadata.uid ?? '';
    const text = render(buildView(cs, revisions.store.list(), pods.store.list().filter(ownedBy(uid)), Date.now(), opts.output === 'wide'), opts);
    if (!force && text === last) return;
    last = text;
    // Home, the frame with each line cleared to its end, then clear below: no flicker, no scrolling.
    if (opts.tty && opts.output !== 'json' && opts.output !== 'yaml') opts.write(`\x1b[H${text.split('\n').map((l) => `${l}\x1b[K`).join('\n')}\n\x1b[J`);
    else opts.write(`${text}\n\n`);
  };
  const schedule = (): void => {
    if (pending !== undefined) return;
    pending = setTimeout(() => { pending = undefined; draw(false); }, 100);
  };
  const handlers = { onAdd: schedule, onUpdate: schedule, onDelete: schedule };
  cloneSets.addHandlers(handlers);
  revisions.addHandlers(handlers);
  pods.addHandlers(handlers);
  cloneSets.start(stop.signal);
  revisions.start(stop.signal);
  pods.start(stop.signal);
  const ttyFrame = opts.tty && opts.output !== 'json' && opts.output !== 'yaml';
  if (ttyFrame) opts.write('\x1b[?25l\x1b[2J');
  try {
    await Promise.all([cloneSets.waitForSync(stop.signal), revisions.waitForSync(stop.signal), pods.waitForSync(stop.signal)]);
  } catch (e) {
    if (!stop.signal.aborted) throw e;
  }
  if (cloneSets.store.get(`${s.namespace}/${name}`) === undefined && !stop.signal.aborted) {
    stop.abort();
    throw new PluginError(`${RESOURCE} "${name}" not found in namespace "${s.namespace}"`);
  }
  draw(true);
  // Ages and grace countdowns move with the clock: redraw the terminal once a second (no API call).
  const ticker = ttyFrame ? setInterval(() => draw(false), 1000) : undefined;
  await new Promise<void>((resolve) => {
    if (stop.signal.aborted) resolve();
    else stop.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  if (ticker !== undefined) clearInterval(ticker);
  if (pending !== undefined) clearTimeout(pending);
  opts.signal.removeEventListener('abort', onAbort);
  if (ttyFrame) opts.write('\x1b[?25h');
}
