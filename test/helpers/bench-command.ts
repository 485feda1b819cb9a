// Runs a benchmark command of bench/ (the chaos run, the fencing check) as a child process the way a user runs it,
// for the integration tests that assert on its printed summary.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { ROOT } from './kube.ts';

export interface BenchCommandResult {
  readonly code: number | null;
  readonly stdout: string;
  /** The last 30 lines of stderr (its progress log), for the failure message. */
  readonly stderrTail: string;
}

/** `node bench/<script> <args…>` from the repository root; resolves when it exits. */
export async function runBenchCommand(script: string, args: readonly string[]): Promise<BenchCommandResult> {
  const proc = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', path.join(ROOT, 'bench', script), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (b: Buffer) => {
    stdout += b.toString();
  });
  proc.stderr.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  const [code] = (await once(proc, 'exit')) as [number | null];
  return { code, stdout, stderrTail: stderr.split('\n').slice(-30).join('\n') };
}
