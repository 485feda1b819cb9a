// Fencing that means what it says (docs/operations.md#fencing-on-lease-loss): `npm run bench:fencing` on its own
// local control plane (it needs the API server's audit log) — two replicas behind a proxy that holds every request
// 2 s, the leader paused (SIGSTOP) for longer than its lease in the middle of a scale-up, then resumed. The audit
// log must show none of the old leader's writes arriving after its lease expired.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { runBenchCommand } from '../helpers/bench-command.ts';
import { ROOT } from '../helpers/kube.ts';

describe('fencing', () => {
  it('a paused leader behind a slow proxy: no write of the old leader reaches the API server after its lease expired', async () => {
    const { code, stdout, stderrTail } = await runBenchCommand('fencing.ts', [
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
    ]);
    assert.equal(code, 0, `bench/fencing.ts exited ${String(code)}\n${stdout}\n--- stderr (tail) ---\n${stderrTail}`);
    assert.match(stdout, /^old leader \S+: \d+ pod writes/m, 'the old leader wrote before its pause, and a successor took over');
    assert.match(stdout, /late writes: 0\n/);
  });
});
