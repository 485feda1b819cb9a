// Detached component processes: each runs in its own session/process group (so it outlives `cli.ts up` and can be
// signalled as a group), with stdout+stderr appended to a log file.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Started {
  readonly pid: number;
  /** Rejects if the process exits; only meaningful while we wait for it to become ready. */
  readonly exited: Promise<never>;
}

export function startDetached(
  command: string,
  args: readonly string[],
  logFile: string,
  env: Readonly<Record<string, string | undefined>>,
  label: string = basename(command),
  /** 'a' appends to the log (a restarted component keeps its history) */
  logMode: 'w' | 'a' = 'w',
): Started {
  const fd = openSync(logFile, logMode);
  try {
    const child = spawn(command, args, { detached: true, stdio: ['ignore', fd, fd], env: { ...env } });
    const pid = child.pid;
    let onSpawnError: (e: Error) => void = () => {};
    const exited = new Promise<never>((_resolve, reject) => {
      onSpawnError = reject;
      child.on('exit', (code, signal) => {
        reject(new Error(`${label} exited (${signal ?? `code ${String(code)}`}); last lines of ${logFile}:\n${tail(logFile, 25)}`));
      });
    });
    child.on('error', (e) => onSpawnError(e));
    exited.catch(() => {}); // observed by whoever awaits it
    if (pid === undefined) throw new Error(`could not start ${command}`);
    child.unref();
    return { pid, exited };
  } finally {
    closeSync(fd);
  }
}

export function tail(file: string, lines: number): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  // a zombie (exited, not yet reaped by its parent) counts as dead
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true; // no procfs: trust kill(0)
  }
}

/** argv of a running process, or undefined. */
export function cmdline(pid: number): readonly string[] | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter((s) => s !== '');
  } catch {
    return undefined;
  }
}

/** True when pid still runs `binaryName` with an argument mentioning `marker` (guards against pid reuse). */
export function isOurProcess(pid: number, binaryName: string, marker: string): boolean {
  if (!isAlive(pid)) return false;
  const argv = cmdline(pid);
  if (argv === undefined) return true; // no procfs: cannot check, assume it is ours
  const first = argv[0];
  return first !== undefined && basename(first) === binaryName && argv.some((a) => a.includes(marker));
}

/** A running process whose command line mentions a marker: its pid, executable base name and argv. */
export interface MarkedProcess {
  readonly pid: number;
  readonly exe: string;
  readonly argv: readonly string[];
}

/** Processes (like `pgrep -f marker`) other than this one whose command line contains `marker`. */
export function processesMentioning(marker: string): MarkedProcess[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: MarkedProcess[] = [];
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    const pid = Number(e);
    if (pid === process.pid) continue;
    const argv = cmdline(pid);
    const first = argv?.[0];
    if (argv === undefined || first === undefined || !argv.some((a) => a.includes(marker))) continue;
    let exe = basename(first);
    try {
      exe = basename(readlinkSync(`/proc/${pid}/exe`));
    } catch {
      // keep argv[0]
    }
    if (!isAlive(pid)) continue;
    out.push({ pid, exe, argv });
  }
  return out;
}

/**
 * Processes whose executable base name is one of `binaryNames` and whose command line contains `marker`. Used by
 * `down` to leave no stray processes even when the state file is lost.
 */
export function findProcesses(binaryNames: readonly string[], marker: string): number[] {
  return processesMentioning(marker)
    .filter((p) => binaryNames.includes(p.exe) || binaryNames.includes(basename(p.argv[0] ?? '')))
    .map((p) => p.pid);
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal); // the process group (the process is its leader: spawned detached)
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/** SIGTERM the process group, wait up to timeoutMs, then SIGKILL. Resolves once the process is gone. */
export async function stopProcess(pid: number, timeoutMs: number): Promise<'terminated' | 'killed' | 'not running'> {
  if (!isAlive(pid)) return 'not running';
  signalGroup(pid, 'SIGTERM');
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return 'terminated';
    await sleep(50);
  }
  signalGroup(pid, 'SIGKILL');
  const killDeadline = Date.now() + 5000;
  while (isAlive(pid) && Date.now() < killDeadline) await sleep(20);
  return 'killed';
}
