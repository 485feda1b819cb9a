// Repeated 409s and 429s are logged once a minute at most; single ones stay quiet.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { warnOnRepeatedAnswers } from './api-warnings.ts';
import type { RequestMetrics } from './kube/client.ts';

function harness(): { metrics: RequestMetrics; warnings: Record<string, unknown>[]; passed: string[]; at: (ms: number) => void } {
  let now = 0;
  const warnings: Record<string, unknown>[] = [];
  const passed: string[] = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => void warnings.push(JSON.parse(s) as Record<string, unknown>) });
  const next: RequestMetrics = { request: (r) => void passed.push(r.code), retry: () => undefined };
  return {
    metrics: warnOnRepeatedAnswers(next, logger, () => now),
    warnings,
    passed,
    at: (ms) => {
      now = ms;
    },
  };
}

test('five conflicts within a minute give one warning with the count by method; the sixth adds none', () => {
  const h = harness();
  for (const method of ['PATCH', 'PATCH', 'PUT', 'PATCH']) h.metrics.request({ method, host: 'api', code: '409', seconds: 0.01 });
  assert.equal(h.warnings.length, 0);
  h.metrics.request({ method: 'PUT', host: 'api', code: '409', seconds: 0.01 });
  h.metrics.request({ method: 'PUT', host: 'api', code: '409', seconds: 0.01 });
  assert.equal(h.warnings.length, 1);
  assert.deepEqual(h.warnings[0]?.['byMethod'], { PATCH: 3, PUT: 2 });
  assert.match(String(h.warnings[0]?.['msg']), /409 Conflict 5 times within a minute/);
  assert.equal(h.passed.length, 6, 'every request still reaches the metrics');
});

test('conflicts spread over minutes never warn; 429s warn from the third', () => {
  const h = harness();
  for (let i = 0; i < 10; i++) {
    h.at(i * 61_000);
    h.metrics.request({ method: 'PATCH', host: 'api', code: '409', seconds: 0.01 });
  }
  assert.equal(h.warnings.length, 0);
  for (let i = 0; i < 3; i++) h.metrics.request({ method: 'POST', host: 'api', code: '429', seconds: 0.01 });
  assert.equal(h.warnings.length, 1);
  assert.match(String(h.warnings[0]?.['msg']), /429 Too Many Requests 3 times/);
});
