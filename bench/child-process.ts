// A child process of the benchmarks (the controller, the webhook) with its stdout and stderr in a log file, and a
// stop that sends SIGTERM and waits for the exit (a no-op once it has exited).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';

export interface LoggedChild {
  readonly proc: ChildProcess;
  stop(): Promise<void>;
}

/** Runs `opts.command` (default: this Node) with `args`; `opts.env` replaces the environment when given. */
export function spawnLogged(args: readonly string[], logFile: string, opts: { append?: boolean; command?: string; env?: NodeJS.ProcessEnv } = {}): LoggedChild {
  const out = createWriteStream(logFile, opts.append === true ? { flags: 'a' } : {});
  const proc = spawn(opts.command ?? process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(opts.env !== undefined ? { env: opts.env } : {}) });
  proc.stdout.pipe(out);
  proc.stderr.pipe(out);
  const exited = once(proc, 'exit');
  const stop = async (): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
    await exited;
  };
  return { proc, stop };
}
