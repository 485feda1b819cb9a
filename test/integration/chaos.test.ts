// The short, seeded chaos run (the long one is `npm run chaos -- --faults 200`, see docs/chaos.md): six faults,
// one of each kind that hits the control plane or the leader, during random CloneSet changes, with the invariant
// checker and the audit-log check of leader writes. It runs the command on its own local control plane (it needs
// the audit log and restarts the API server and etcd, which the shared test cluster must not suffer).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { runBenchCommand } from '../helpers/bench-command.ts';
import { ROOT } from '../helpers/kube.ts';

describe('chaos', () => {
  it('a seeded run with a leader kill, an API server restart, etcd stopped, 429s, dropped connections and lost create answers converges after every fault with no invariant violated', async () => {
    const { code, stdout, stderrTail } = await runBenchCommand('chaos.ts', [
      '--faults',
      '6',
      '--seed',
      '13',
      '--pods',
      '3',
      '--convergence-bound',
      '60s',
      '--kinds',
      'kill-leader,apiserver-restart,etcd-stop,throttle-429,connection-reset,lost-create-answer',
      '--round-robin',
      '--state-dir',
      path.join(ROOT, '.cluster', 'chaos-test'),
    ]);
    assert.equal(code, 0, `chaos exited ${String(code)}\n${stdout}\n--- stderr (tail) ---\n${stderrTail}`);
    assert.match(stdout, /violations: 0\n/);
    for (const kind of ['kill-leader', 'apiserver-restart', 'etcd-stop', 'throttle-429', 'connection-reset', 'lost-create-answer'])
      assert.match(stdout, new RegExp(`^${kind} +1 `, 'm'));
    assert.match(stdout, /leader takeovers: 1,/);
    assert.match(stdout, /audit: \d+ controller writes/);
  });
});
