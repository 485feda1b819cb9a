// No pod or PVC written by a replica that was not the leader: the API server's audit log (local cluster
// `up --audit-log`, tools/localcluster/audit.ts) records every successful write with the writer's User-Agent,
// `cloneset-controller/<leader-election identity>` (src/main.ts), and the time the API server received it. Each
// write must fall inside one of that identity's terms in the Lease history the checker watched:
//
//     acquireTime - TOLERANCE  ≤  received  ≤  min(successor's acquireTime, last renewTime + leaseDuration) + TOLERANCE
//
// TOLERANCE is 1 s: the Lease times are MicroTimes written by the holder's clock and the audit times come from the
// API server's clock, both on this host (no skew), so it only absorbs rounding. It is deliberately NOT a grace for
// requests in flight: a replica that lost its lease must stop writing before its lease expires (its renew deadline,
// 10 s, is shorter than the lease, 15 s); a write that arrives after the successor took over is two writers.
// A Lease watch gap (the API server restarting, < 10 s) cannot hide a whole term: a takeover needs 15 s.
import { readFileSync } from 'node:fs';
import type { LeaseTerm, Violation } from './chaos-checker.ts';

export const LEASE_TOLERANCE_MS = 1000;
const UA_PREFIX = 'cloneset-controller/';

export interface AuditWrite {
  readonly identity: string;
  readonly receivedAt: number;
  readonly verb: string;
  readonly what: string;
}

interface AuditEvent {
  readonly stage?: string;
  readonly verb?: string;
  readonly userAgent?: string;
  readonly requestReceivedTimestamp?: string;
  readonly objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  readonly responseStatus?: { code?: number };
}

/** The controller's successful writes to pods and PVCs of `ns` in the audit log. */
export function controllerWrites(auditLog: string, ns: string): AuditWrite[] {
  const out: AuditWrite[] = [];
  for (const line of readFileSync(auditLog, 'utf8').split('\n')) {
    if (line === '') continue;
    let e: AuditEvent;
    try {
      e = JSON.parse(line) as AuditEvent;
    } catch {
      continue; // a line cut by the API server being killed mid-write
    }
    const r = e.objectRef;
    if (e.stage !== 'ResponseComplete' || r?.namespace !== ns || (r.resource !== 'pods' && r.resource !== 'persistentvolumeclaims')) continue;
    if (!(e.userAgent ?? '').startsWith(UA_PREFIX) || (e.responseStatus?.code ?? 500) >= 300) continue;
    out.push({
      identity: (e.userAgent ?? '').slice(UA_PREFIX.length),
      receivedAt: Date.parse(e.requestReceivedTimestamp ?? ''),
      verb: e.verb ?? '',
      what: `${r.resource}${r.subresource !== undefined ? `/${r.subresource}` : ''} ${r.name ?? ''}`,
    });
  }
  return out;
}

/** The writes made outside their writer's terms as leader (grouped per writer and leader, with the worst lateness). */
export function nonLeaderWrites(writes: readonly AuditWrite[], terms: readonly LeaseTerm[]): Violation[] {
  const bad = new Map<string, { n: number; first: AuditWrite; lateMs: number; leader: string }>();
  for (const w of writes) {
    const mine = terms.filter((t) => t.holder === w.identity);
    const ok = mine.some((t) => {
      const end = Math.min(t.endedAt ?? Infinity, t.lastRenewAt + t.leaseDurationMs);
      return t.acquiredAt - LEASE_TOLERANCE_MS <= w.receivedAt && w.receivedAt <= end + LEASE_TOLERANCE_MS;
    });
    if (ok) continue;
    const leaderTerm = terms.find((t) => t.acquiredAt <= w.receivedAt && (t.endedAt === undefined || w.receivedAt < t.endedAt));
    const lastEnd = Math.max(...mine.map((t) => Math.min(t.endedAt ?? Infinity, t.lastRenewAt + t.leaseDurationMs)), -Infinity);
    const lateMs = Number.isFinite(lastEnd) ? w.receivedAt - lastEnd : NaN;
    const key = `${w.identity}→${leaderTerm?.holder ?? '(none)'}`;
    const b = bad.get(key);
    if (b === undefined) bad.set(key, { n: 1, first: w, lateMs, leader: leaderTerm?.holder ?? '(no leader)' });
    else {
      b.n++;
      b.lateMs = Math.max(b.lateMs, lateMs);
    }
  }
  return [...bad.entries()].map(([, b]) => ({
    at: b.first.receivedAt,
    kind: 'non-leader-write' as const,
    // A write inside the writer's own term record but after that record expired (it was paused, nobody has taken
    // over yet): nobody led at that moment, and the writer least of all.
    detail:
      `${b.n} write(s) by ${b.first.identity} ${b.leader === b.first.identity ? 'after its own lease expired, before a successor took it' : `while ${b.leader} led`}, first ${b.first.verb} ${b.first.what} at ${new Date(b.first.receivedAt).toISOString()}` +
      (Number.isNaN(b.lateMs) ? ' (it never held the lease)' : `, up to ${(b.lateMs / 1000).toFixed(1)} s after its lease ended`),
  }));
}
