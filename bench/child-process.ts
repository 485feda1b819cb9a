// A child process of the benchmarks (the controller, the webhook, Kruise's manager) with its stdout and stderr in a
// log file, and a stop that sends SIGTERM and waits for the exit (a no-op once it has exited).
//
// The child writes to the file itself, as a container runtime's log file takes a container's output: a pipe read
// by this process's event loop, busy with its watches at 10 000 pods, filled up and blocked the controller's
// synchronous log writes (a 1 000-pod profile showed 7 % of its samples in `writeUtf8String`), which is the
// benchmark's cost, not the controller's.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync } from 'node:fs';

export interface LoggedChild {
  readonly proc: ChildProcess;
  stop(): Promise<void>;
}

// The children still running, so that an interrupted benchmark stops them (`withCluster`'s SIGINT/SIGTERM handler
// in bench/harness.ts): a Ctrl-C at a terminal reaches them too (one process group), a `kill -INT` of the benchmark
// alone does not, and it left the webhook running after session 34's stopped 100 000-pod run.
const running = new Set<LoggedChild>();

/** Stops every child `spawnLogged` started that has not exited yet. */
export async function stopRunningChildren(): Promise<void> {
  await Promise.all([...running].map((c) => c.stop()));
}

/** Runs `opts.command` (default: this Node) with `args`; `opts.env` replaces the environment when given. */
export function spawnLogged(args: readonly string[], logFile: string, opts: { append?: boolean; command?: string; env?: NodeJS.ProcessEnv } = {}): LoggedChild {
  const fd = openSync(logFile, opts.append === true ? 'a' : 'w');
  let proc: ChildProcess;
  try {
    proc = spawn(opts.command ?? process.execPath, args, { stdio: ['ignore', fd, fd], ...(opts.env !== undefined ? { env: opts.env } : {}) });
  } finally {
    // The child holds its own copy of the descriptor.
    closeSync(fd);
  }
  const exited = once(proc, 'exit');
  const stop = async (): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    await exited;
  };
  const child = { proc, stop };
  running.add(child);
  proc.once('exit', () => running.delete(child));
  return child;
}
