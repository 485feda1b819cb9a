// The non-leader-write rule of chaos-audit.ts on hand-made Lease histories (node --test bench/chaos-audit.test.ts).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LEASE_TOLERANCE_MS, nonLeaderWrites, type AuditWrite } from './chaos-audit.ts';
import type { LeaseTerm } from './chaos-checker.ts';

const terms: LeaseTerm[] = [
  { holder: 'a', acquiredAt: 1_000, lastRenewAt: 20_000, leaseDurationMs: 15_000, endedAt: 35_000 },
  { holder: 'b', acquiredAt: 35_000, lastRenewAt: 60_000, leaseDurationMs: 15_000 },
];
const write = (identity: string, receivedAt: number): AuditWrite => ({ identity, receivedAt, verb: 'patch', what: 'pods p' });

describe('non-leader writes', () => {
  it('accepts writes of each holder inside its term, within the tolerance at the edges', () => {
    assert.deepEqual(nonLeaderWrites([write('a', 1_000 - LEASE_TOLERANCE_MS), write('a', 20_000), write('b', 40_000), write('b', 75_000 + LEASE_TOLERANCE_MS)], terms), []);
  });

  it('reports a write that arrives after the writer lease expired, with the successor and the lateness', () => {
    const [v, ...rest] = nonLeaderWrites([write('a', 36_500), write('a', 38_000)], terms);
    assert.equal(rest.length, 0);
    assert.equal(v?.kind, 'non-leader-write');
    assert.match(v?.detail ?? '', /^2 write\(s\) by a while b led, .* up to 3\.0 s after its lease ended$/);
  });

  it('reports a write after the writer lease expired while no successor has taken it yet, naming no leader', () => {
    const [v] = nonLeaderWrites([write('b', 80_000)], terms);
    assert.match(v?.detail ?? '', /^1 write\(s\) by b after its own lease expired, before a successor took it, .* up to 5\.0 s after its lease ended$/);
  });

  it('reports a writer that never held the lease', () => {
    assert.match(nonLeaderWrites([write('c', 40_000)], terms)[0]?.detail ?? '', /by c while b led.*never held the lease/);
  });
});
