// The one write policy (write-policy.ts): every write through the executor's ports is fenced, logged once with
// the plan's reason, and a 409/422 answer asks for a short requeue.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { ConnectionError, RequestAbortedError } from '../kube/api-error.ts';
import { FakeClock } from '../runtime/clock.ts';
import type { Pod } from '../kube/types.ts';
import { executePlan } from './execute.ts';
import type { Ports } from './ports.ts';
import { policedPorts } from './write-policy.ts';
import { apiError, cloneSet, executorFor } from './testing/executor-fixture.ts';
import { ResourceVersionExpectations, ScaleExpectations } from '../runtime/expectations.ts';

function capture(): { readonly lines: Record<string, unknown>[]; readonly logger: pino.Logger } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done): void {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, sink) };
}

const podPatched = (rv: string): Pod => ({ metadata: { name: 'sample-a', uid: 'uid-a', resourceVersion: rv }, spec: { containers: [] } });

test("one info line per API write: the CloneSet, the object, the verb and the plan's reason", async () => {
  const { lines, logger } = capture();
  const unexpected = async (): Promise<never> => Promise.reject(new Error('unexpected'));
  const ports = {
    pods: { patchPod: async () => podPatched('7'), createPod: unexpected, deletePod: unexpected, getPod: unexpected, patchPodStatus: unexpected, patchPodResize: unexpected },
  } as unknown as Ports;
  const clock = new FakeClock(0);
  const deps = {
    ports,
    scaleExpectations: new ScaleExpectations(clock),
    rvExpectations: new ResourceVersionExpectations(clock),
    recorder: executorFor(clock, {}, 'update').recorder,
    nowMs: () => 0,
    sleep: async () => undefined,
    logger,
  };
  await executePlan(cloneSet, 'ns/sample', 'update', [{ kind: 'PatchPodLifecycle', pod: { name: 'sample-a', uid: 'uid-a' }, state: 'PreparingUpdate' }], deps);
  await new Promise((resolve) => setImmediate(resolve));
  const writes = lines.filter((l) => l['msg'] === 'API write');
  assert.equal(writes.length, 1);
  assert.deepEqual(
    { cloneset: writes[0]?.['cloneset'], object: writes[0]?.['object'], action: writes[0]?.['action'], reason: writes[0]?.['reason'], level: writes[0]?.['level'] },
    { cloneset: 'ns/sample', object: 'pods/sample-a', action: 'patch', reason: 'update: lifecycle PreparingUpdate', level: 30 },
  );
});

test('a fenced pass sends nothing: the write is refused before it reaches the port', async () => {
  const { logger } = capture();
  const sent: string[] = [];
  const fenced = new AbortController();
  fenced.abort();
  const ports = policedPorts(
    {
      pods: {
        patchPod: async () => {
          sent.push('patch');
          return podPatched('7');
        },
      },
    } as unknown as Ports,
    {
      cloneSet: 'ns/sample',
      logger,
      reason: 'test',
      signal: fenced.signal,
      onConflict: () => undefined,
    },
  );
  await assert.rejects(ports.pods.patchPod('ns', 'sample-a', {}, 'strategic'), RequestAbortedError);
  assert.deepEqual(sent, []);
});

test('409 Conflict, 409 AlreadyExists and 422 Invalid ask for a requeue; 404 and 500 do not', async () => {
  const { logger } = capture();
  for (const [err, requeue] of [
    [apiError(409, 'Conflict'), true],
    [apiError(409, 'AlreadyExists'), true],
    [apiError(422, 'Invalid'), true],
    [apiError(404, 'NotFound'), false],
    [apiError(500, 'InternalError'), false],
  ] as const) {
    let asked = false;
    const ports = policedPorts({ pods: { patchPod: async () => Promise.reject(err) } } as unknown as Ports, {
      cloneSet: 'ns/sample',
      logger,
      reason: 'test',
      onConflict: () => {
        asked = true;
      },
    });
    await assert.rejects(ports.pods.patchPod('ns', 'sample-a', {}, 'strategic'));
    assert.equal(asked, requeue, err.reason);
  }
});

test('a pod patch whose answer was lost reads the pod and expects its live resourceVersion; the error still goes up', async () => {
  const { logger } = capture();
  const lost = new ConnectionError('https://127.0.0.1:6443', 'PATCH /api/v1/namespaces/ns/pods/sample-a', new Error('socket hang up'));
  const expected: [string, string][] = [];
  const ports = policedPorts(
    {
      pods: {
        patchPod: async () => Promise.reject(lost),
        patchPodStatus: async () => Promise.reject(lost),
        getPod: async () => podPatched('42'),
      },
    } as unknown as Ports,
    { cloneSet: 'ns/sample', logger, reason: 'test', onConflict: () => undefined, expectPodVersion: (uid, rv) => expected.push([uid, rv]) },
  );
  await assert.rejects(ports.pods.patchPod('ns', 'sample-a', {}, 'strategic'), ConnectionError);
  await assert.rejects(ports.pods.patchPodStatus('ns', 'sample-a', {}, 'strategic'), ConnectionError);
  assert.deepEqual(expected, [
    ['uid-a', '42'],
    ['uid-a', '42'],
  ]);
});

test('a pod patch that was answered, even with an error, reads nothing more', async () => {
  const { logger } = capture();
  const reads: string[] = [];
  const expected: string[] = [];
  for (const err of [apiError(409, 'Conflict'), apiError(500, 'InternalError'), new ConnectionError('https://127.0.0.1:6443', 'PATCH', new Error('refused'), true)]) {
    const ports = policedPorts(
      {
        pods: {
          patchPod: async () => Promise.reject(err),
          getPod: async (_ns: string, name: string) => {
            reads.push(name);
            return podPatched('42');
          },
        },
      } as unknown as Ports,
      { cloneSet: 'ns/sample', logger, reason: 'test', onConflict: () => undefined, expectPodVersion: (_uid, rv) => expected.push(rv) },
    );
    await assert.rejects(ports.pods.patchPod('ns', 'sample-a', {}, 'strategic'));
  }
  assert.deepEqual({ reads, expected }, { reads: [], expected: [] });
});
