// Fencing that means what it says (docs/operations.md#fencing-on-lease-loss): `npm run bench:fencing` on its own
// local control plane (it needs the API server's audit log) — two replicas behind a proxy that holds every request
// 2 s, the leader paused (SIGSTOP) for longer than its lease in the middle of a scale-up, then resumed. The audit
// log must show none of the old leader's writes arriving after its lease expired.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { ROOT } from '../helpers/kube.ts';

describe('fencing', () => {
  it('a paused leader behind a slow proxy: no write of the old leader reaches the API server after its lease expired', async () => {
    const proc = spawn(
      process.execPath,
      [
        '--disable-warning=ExperimentalWarning',
        path.join(ROOT, 'bench/fencing.ts'),
        '--pods',
        '200',
        '--pause-at',
        '63',
        '--delay',
        '2',
        '--pause',
        '25',
        '--state-dir',
        path.join(ROOT, '.cluster', 'fencing-test'),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    proc.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const [code] = (await once(proc, 'exit')) as [number | null];
    const tail = stderr.split('\n').slice(-30).join('\n');
    assert.equal(code, 0, `bench/fencing.ts exited ${String(code)}\n${stdout}\n--- stderr (tail) ---\n${tail}`);
    assert.match(stdout, /^old leader \S+: \d+ pod writes/m, 'the old leader wrote before its pause, and a successor took over');
    assert.match(stdout, /late writes: 0\n/);
  });
});
