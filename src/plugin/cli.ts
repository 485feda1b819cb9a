// kubectl-cloneset: the kubectl plugin for CloneSets (`kubectl cloneset …` through kubectl's plugin discovery, or
// bin/kubectl-cloneset directly). Parses the command line, opens a session and dispatches; every write is a JSON
// merge patch of the CloneSet (apps.kruise.io/v1alpha1). Errors print as `error: …` and exit 1, as in kubectl.
import { stringify } from 'yaml';
import type { CloneSet } from '../api/cloneset.ts';
import { isConflict } from '../kube/api-error.ts';
import { CONTROLLER_REVISIONS, NAMESPACES, PODS } from '../kube/resources.ts';
import { selectorToString } from '../kube/selectors.ts';
import { rfc3339 } from '../kube/time.ts';
import type { ControllerRevision, KubeObject, Pod } from '../kube/types.ts';
import { templateFromRevision } from '../cloneset/plan/revisions.ts';
import { parseFlags, UsageError, type Flags } from './flags.ts';
import { getCommand, listCommand, type Terminal } from './get.ts';
import { complete, completionAnswer, completionScript } from './completion.ts';
import { formatHistory, historyRows, ownedRevisions, undoPatch, undoTarget } from './history.ts';
import { formatPlan, planCommand } from './plan.ts';
import { parseRestartMode, planRestart } from './restart.ts';
import { waitForRollout } from './rollout-status.ts';
import { describeError, getCloneSet, nameArg, OBJECT_PREFIX, objectName, openSession, PluginError, RESOURCE, VERSION, type Session } from './session.ts';
import { parseImageArgs, planSetImage } from './set-image.ts';

export const USAGE = `kubectl cloneset controls OpenKruise CloneSets (apps.kruise.io, the version the API server prefers).

Commands (NAME or cloneset/NAME):
  get [-A] [-l SELECTOR] [-o json|yaml]       List the CloneSets of the namespace (-A: of all namespaces)
  get NAME [--watch] [-o json|yaml|wide]      Show the CloneSet, its revisions and pods as a tree (live with --watch)
  plan NAME [-o json|yaml]                    Dry run: what the next reconcile would do and why (writes nothing)
  rollout status NAME [--timeout 5m] [--watch=true]
                                              Wait until the rollout is complete for the partition in force
  rollout history NAME [--revision N]         List the revisions (or show the template of revision N)
  rollout undo NAME [--to-revision N]         Restore the pod template of a revision (default: the previous one)
  rollout pause NAME                          Stop updating pods (spec.updateStrategy.paused=true)
  rollout resume NAME                         Resume updating pods
  rollout restart NAME [--mode auto|recreate|in-place]
                                              Restart every pod, within maxUnavailable (see docs/kubectl-plugin.md)
  set image NAME CONTAINER=IMAGE ...          Change container images (*=IMAGE for all containers)
  scale NAME --replicas N                     Set spec.replicas
  completion bash|zsh                         Print a shell completion script (see docs/kubectl-plugin.md)
  version                                     Print the version (also --version)

Global flags (as kubectl):
  -n, --namespace NS       namespace (default: the context's namespace, else "default")
      --context NAME       kubeconfig context to use
      --kubeconfig PATH    kubeconfig file (default: $KUBECONFIG, then ~/.kube/config)
  -o, --output FORMAT      json, yaml or wide (get, plan, rollout history)
  -A, --all-namespaces     get: list the CloneSets of every namespace
  -l, --selector SELECTOR  get: only the CloneSets with these labels (e.g. app=web,tier!=db)
  -h, --help               this help
      --version            the version of kubectl-cloneset

plan flags (to match the controller's own): --feature-gates=A=true,... --cloneset-surge-rule=sustained|kruise
  --cloneset-scaling-exclude-preparing-delete

Exit status: 0 on success, 1 on any error (no such CloneSet, cluster unreachable, rollout failed or timed out).`;

export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly tty: boolean;
  /** stdout's terminal, for the live view. */
  readonly terminal?: Terminal;
  readonly signal: AbortSignal;
}

const line = (io: Io, text: string): void => io.out(`${text}\n`);

/** A merge patch of the internal model of `current`, written through the version the server prefers. */
async function patchCloneSet(s: Session, current: CloneSet, patch: unknown): Promise<void> {
  await s.client.patch<unknown>(s.api.resource, s.namespace, current.metadata.name ?? '', s.api.patchFor(current, patch), 'merge');
}

async function rollout(s: Session, flags: Flags, io: Io): Promise<void> {
  const sub = flags.positionals[1];
  const usage = `kubectl cloneset rollout ${sub ?? '<status|history|undo|pause|resume|restart>'} NAME`;
  switch (sub) {
    case 'status': {
      const name = nameArg(flags.positionals, 2, `${usage} [--timeout 5m] [--watch=true]`);
      const cs = await getCloneSet(s, name);
      await waitForRollout(s, name, cs, { watch: flags.watch ?? true, timeoutMs: flags.timeoutMs ?? 0, write: (t) => line(io, t) });
      return;
    }
    case 'history': {
      const name = nameArg(flags.positionals, 2, `${usage} [--revision N]`);
      const cs = await getCloneSet(s, name);
      const revs = await s.client.listAll<ControllerRevision>(CONTROLLER_REVISIONS, s.namespace, { labelSelector: selectorToString(cs.spec.selector) });
      if (flags.revision !== undefined && flags.revision > 0) {
        const rev = ownedRevisions(cs, revs.items).find((r) => r.revision === flags.revision);
        if (rev === undefined) throw new PluginError(`unable to find the specified revision ${flags.revision} of cloneset "${name}"; see kubectl cloneset rollout history ${name}`);
        const view = { revision: rev.revision, name: rev.metadata.name, template: templateFromRevision(rev) };
        io.out(
          flags.output === 'json'
            ? `${JSON.stringify(view, null, 2)}\n`
            : `${OBJECT_PREFIX}/${name} with revision #${rev.revision} (${rev.metadata.name ?? ''})\n${stringify({ 'Pod Template': view.template })}`,
        );
        return;
      }
      const rows = historyRows(cs, revs.items);
      if (flags.output === 'json') line(io, JSON.stringify(rows, null, 2));
      else if (flags.output === 'yaml') io.out(stringify(rows));
      else line(io, formatHistory(name, rows));
      return;
    }
    case 'undo': {
      const name = nameArg(flags.positionals, 2, `${usage} [--to-revision N]`);
      const cs = await getCloneSet(s, name);
      const revs = await s.client.listAll<ControllerRevision>(CONTROLLER_REVISIONS, s.namespace, { labelSelector: selectorToString(cs.spec.selector) });
      const target = undoTarget(cs, revs.items, flags.toRevision);
      if (!target.ok) throw new PluginError(target.message);
      const patch = undoPatch(cs, target.revision, target.template);
      if (patch === undefined) {
        line(io, `${OBJECT_PREFIX}/${name} skipped rollback (current template already matches revision ${target.revision.revision})`);
        return;
      }
      await patchCloneSet(s, cs, patch);
      line(io, `${OBJECT_PREFIX}/${name} rolled back to revision ${target.revision.revision} (${target.revision.metadata.name ?? ''})`);
      return;
    }
    case 'pause':
    case 'resume': {
      const name = nameArg(flags.positionals, 2, usage);
      const cs = await getCloneSet(s, name);
      const want = sub === 'pause';
      if ((cs.spec.updateStrategy?.paused === true) === want) throw new PluginError(`${RESOURCE} "${name}" is ${want ? 'already paused' : 'not paused'}`);
      await patchCloneSet(s, cs, { spec: { updateStrategy: { paused: want } } });
      line(io, `${OBJECT_PREFIX}/${name} ${want ? 'paused' : 'resumed'}`);
      return;
    }
    case 'restart': {
      const name = nameArg(flags.positionals, 2, `${usage} [--mode auto|recreate|in-place]`);
      let mode;
      try {
        mode = parseRestartMode(flags.mode);
      } catch (e) {
        throw new UsageError(e instanceof Error ? e.message : String(e));
      }
      const cs = await getCloneSet(s, name);
      const pods = await s.client.listAll<Pod>(PODS, s.namespace, { labelSelector: selectorToString(cs.spec.selector) });
      const plan = planRestart(cs, pods.items, mode, rfc3339(Date.now()));
      if (!plan.ok) throw new PluginError(plan.message);
      await patchCloneSet(s, cs, plan.patch);
      line(io, `${OBJECT_PREFIX}/${name} restarted`);
      line(io, `  ${plan.effect}`);
      return;
    }
    default:
      throw new UsageError(`unknown rollout command "${sub ?? ''}": use status, history, undo, pause, resume or restart\nSee 'kubectl cloneset --help' for usage.`);
  }
}

/** Tries of a command whose write answered 409 Conflict (client-go's retry.DefaultRetry has 5 steps). */
const CONFLICT_TRIES = 5;

/** One command on an open session: every write reads the CloneSet first, so running it again is safe. */
async function runCommand(s: Session, command: string, flags: Flags, io: Io): Promise<void> {
  switch (command) {
    case 'get': {
      if (flags.positionals.length === 1) {
        if (flags.watch === true) throw new UsageError('--watch needs a NAME: kubectl cloneset get NAME --watch');
        await listCommand(s, { allNamespaces: flags.allNamespaces, ...(flags.selector !== undefined ? { selector: flags.selector } : {}), output: flags.output, write: io.out });
        return;
      }
      const name = nameArg(flags.positionals, 1, 'kubectl cloneset get NAME [--watch] [-o json|yaml|wide]');
      await getCommand(s, name, {
        watch: flags.watch ?? false,
        output: flags.output,
        tty: io.tty,
        ...(io.terminal !== undefined ? { terminal: io.terminal } : {}),
        write: io.out,
        signal: io.signal,
      });
      return;
    }
    case 'plan': {
      const name = nameArg(flags.positionals, 1, 'kubectl cloneset plan NAME [-o json|yaml]');
      line(io, formatPlan(await planCommand(s, name, flags), flags.output));
      return;
    }
    case 'rollout':
      await rollout(s, flags, io);
      return;
    case 'set': {
      if (flags.positionals[1] !== 'image') throw new UsageError('only "set image" is supported: kubectl cloneset set image NAME CONTAINER=IMAGE ...');
      const arg = flags.positionals[2];
      if (arg === undefined) throw new PluginError('NAME is required\nUsage: kubectl cloneset set image NAME CONTAINER=IMAGE ...');
      const name = objectName(arg);
      const images = parseImageArgs(flags.positionals.slice(3));
      if (typeof images === 'string') throw new UsageError(`${images}\nUsage: kubectl cloneset set image NAME CONTAINER=IMAGE ...`);
      const cs = await getCloneSet(s, name);
      const plan = planSetImage(cs, images);
      if (!plan.ok) throw new PluginError(plan.message);
      if (plan.changed) await patchCloneSet(s, cs, plan.patch);
      line(io, `${OBJECT_PREFIX}/${name} ${plan.changed ? 'image updated' : 'unchanged'}`);
      return;
    }
    case 'scale': {
      const name = nameArg(flags.positionals, 1, 'kubectl cloneset scale NAME --replicas N');
      if (flags.replicas === undefined) throw new UsageError('--replicas=COUNT is required\nUsage: kubectl cloneset scale NAME --replicas N');
      const cs = await getCloneSet(s, name);
      await patchCloneSet(s, cs, { spec: { replicas: flags.replicas } });
      line(io, `${OBJECT_PREFIX}/${name} scaled`);
      return;
    }
  }
}

async function dispatch(flags: Flags, io: Io): Promise<void> {
  const command = flags.positionals[0];
  if (command === undefined) throw new UsageError(`a command is required\n${USAGE}`);
  if (command === 'version') {
    io.out(`kubectl-cloneset ${VERSION}\n`);
    return;
  }
  if (command === 'completion') {
    const script = completionScript(flags.positionals[1] ?? '');
    if (script === undefined) throw new UsageError('usage: kubectl cloneset completion bash|zsh');
    io.out(script);
    return;
  }
  const known = ['get', 'plan', 'rollout', 'set', 'scale'];
  if (!known.includes(command)) throw new UsageError(`unknown command "${command}" for "kubectl cloneset"\nSee 'kubectl cloneset --help' for usage.`);
  const s = await openSession(flags);
  try {
    // A guarded write (resourceVersion precondition) that raced the controller's own write to the CloneSet answers 409:
    // read it again and retry, as client-go's retry.RetryOnConflict does for kubectl (5 tries).
    for (let attempt = 1; ; attempt++) {
      try {
        await runCommand(s, command, flags, io);
        return;
      } catch (e) {
        if (!isConflict(e) || attempt >= CONFLICT_TRIES) throw e;
      }
    }
  } catch (e) {
    throw new PluginError(describeError(e, s));
  } finally {
    s.client.close();
  }
}

/** `__complete WORDS…`: completion candidates (completion.ts), names read from the cluster when it answers. */
async function completeCommand(words: readonly string[], io: Io): Promise<void> {
  const { candidates, need } = complete(words);
  const names: string[] = [];
  if (need !== 'none') {
    // The flags typed so far choose the cluster and namespace; a line that does not parse yet offers no names.
    try {
      const typed = parseFlags(words.slice(0, -1).filter((w, i, all) => !(w.startsWith('-') && !w.includes('=') && i === all.length - 1)));
      const s = await openSession(typed);
      try {
        if (need === 'namespaces') names.push(...(await s.client.listAll<KubeObject>(NAMESPACES, undefined)).items.map((n) => n.metadata?.name ?? ''));
        else names.push(...(await s.client.listAll<KubeObject>(s.api.resource, s.namespace)).items.map((c) => c.metadata?.name ?? ''));
      } finally {
        s.client.close();
      }
    } catch {
      // No names: completion must never print an error into the command line being typed.
    }
  }
  const current = words.at(-1) ?? '';
  io.out(completionAnswer([...candidates, ...names.filter((n) => n.startsWith(current))]));
}

export async function run(argv: readonly string[], io: Io): Promise<number> {
  if (argv[0] === '__complete') {
    await completeCommand(argv.slice(1), io);
    return 0;
  }
  let flags: Flags;
  try {
    flags = parseFlags(argv);
  } catch (e) {
    io.err(`error: ${describeError(e)}\n`);
    return 1;
  }
  if (flags.version) {
    io.out(`kubectl-cloneset ${VERSION}\n`);
    return 0;
  }
  if (flags.help || flags.positionals.length === 0) {
    (flags.help ? io.out : io.err)(`${USAGE}\n`);
    return flags.help ? 0 : 1;
  }
  try {
    await dispatch(flags, io);
    return 0;
  } catch (e) {
    io.err(`error: ${describeError(e)}\n`);
    return 1;
  }
}

if (import.meta.main) {
  const abort = new AbortController();
  // `get --watch` ends cleanly on the abort (cursor shown again, exit 0); any other command still running half a
  // second later exits 130, as a shell reports a Ctrl-C.
  const interrupt = (): void => {
    abort.abort();
    setTimeout(() => process.exit(130), 500).unref();
  };
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);
  // A closed pipe (`… | head`) is not an error worth a stack trace.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
  const { stdin, stdout } = process;
  const terminal: Terminal | undefined = stdout.isTTY
    ? {
        size: () => ({ columns: stdout.columns, rows: stdout.rows }),
        onResize: (redraw) => {
          stdout.on('resize', redraw);
          return () => stdout.off('resize', redraw);
        },
        ...(stdin.isTTY
          ? {
              onKey: (key: (k: string) => void) => {
                const onData = (d: Buffer): void => key(d.toString('utf8'));
                stdin.setRawMode(true);
                stdin.on('data', onData);
                stdin.resume();
                return () => {
                  stdin.off('data', onData);
                  stdin.setRawMode(false);
                  stdin.pause();
                };
              },
            }
          : {}),
      }
    : undefined;
  const code = await run(process.argv.slice(2), {
    out: (t) => stdout.write(t),
    err: (t) => process.stderr.write(t),
    tty: stdout.isTTY,
    ...(terminal !== undefined ? { terminal } : {}),
    signal: abort.signal,
  });
  process.exitCode = code;
  // Watches and keep-alive sockets must not keep a finished command alive.
  process.stdout.write('', () => process.exit(code));
}
