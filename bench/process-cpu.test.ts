import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BENCHMARK_ROLE, type CpuReading, cpuLines, cpuSpent, readCpu, roleOf } from './process-cpu.ts';

const reading = (atMs: number, entries: readonly [number, string, number][]): CpuReading => ({
  atMs,
  byPid: new Map(entries.map(([pid, role, seconds]) => [pid, { role, seconds }])),
});
const row = (label: string, value: string): string => `${label}|${value}`;

describe('the CPU of the test bed', () => {
  it('names the control plane by its binary and our node processes controller or webhook', () => {
    assert.equal(roleOf('kube-apiserver', ['/cache/bin/kube-apiserver', '--etcd-servers=x']), 'kube-apiserver');
    assert.equal(roleOf('node', ['node', '--max-semi-space-size=2', 'dist/main.js', 'webhook', '--kubeconfig', 'k']), 'webhook');
    assert.equal(roleOf('node', ['node', 'dist/main.js', '--kubeconfig', 'k', '--namespace', 'bench-1']), 'controller');
  });

  it('sums the processes of one role, most first, and leaves out a process missing from either reading', () => {
    const before = reading(1_000, [
      [10, 'kube-apiserver', 5],
      [11, 'kwok', 1],
      [12, 'webhook', 0.5],
      [13, 'webhook', 0.5],
      [14, 'controller', 2],
    ]);
    const after = reading(11_000, [
      [10, 'kube-apiserver', 12],
      [11, 'kwok', 4],
      [12, 'webhook', 1],
      [13, 'webhook', 1.5],
      [15, 'controller', 1],
    ]);
    const spent = cpuSpent(before, after);
    assert.equal(spent.wallMs, 10_000);
    assert.deepEqual(
      [...spent.byRole],
      [
        ['kube-apiserver', 7],
        ['kwok', 3],
        ['webhook', 1.5],
      ],
    );
  });

  it('prints both totals, the busy cores and the ratio, then every role of either side', () => {
    const run = {
      wallMs: 10_000,
      byRole: new Map([
        ['kube-apiserver', 12],
        ['controller', 4],
      ]),
    };
    const limit = {
      wallMs: 5_000,
      byRole: new Map([
        ['kube-apiserver', 8],
        [BENCHMARK_ROLE, 2],
      ]),
    };
    assert.deepEqual(cpuLines(run, limit, row, 2), [
      "test bed CPU (this run / the limit)|16.0 / 10.0 s in 10.0 / 5.0 s (1.60 / 2.00 of 2 cores busy; 1.60× the limit's CPU)",
      '  kube-apiserver|12.0 / 8.0 s',
      '  controller|4.0 / - s',
      `  ${BENCHMARK_ROLE}|- / 2.0 s`,
    ]);
  });

  it('counts a process known by its pid though its command line does not name the state dir (Kruise reads KUBECONFIG)', () => {
    const r = readCpu('/nonexistent-state-dir-for-the-test', new Map([[process.ppid, 'kruise-manager']]));
    assert.equal(r.byPid.get(process.ppid)?.role, 'kruise-manager');
  });

  it('reads this process among the test bed even when no other process names the state dir', () => {
    const r = readCpu('/nonexistent-state-dir-for-the-test');
    assert.equal(r.byPid.get(process.pid)?.role, BENCHMARK_ROLE);
    assert.ok((r.byPid.get(process.pid)?.seconds ?? -1) >= 0);
  });
});
