import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { FakeClock } from './clock.ts';
import { EventRecorder, type EventSink } from './events.ts';

const silent = pino({ level: 'silent' });

interface Call {
  readonly verb: 'create' | 'patch';
  readonly namespace: string;
  readonly name?: string;
  readonly body: Record<string, unknown>;
}

class RecordingSink implements EventSink {
  readonly calls: Call[] = [];
  failPatch = false;
  failCreate = false;
  async create(namespace: string, event: object): Promise<unknown> {
    this.calls.push({ verb: 'create', namespace, body: event as Record<string, unknown> });
    if (this.failCreate) throw new Error('create refused');
    return event;
  }
  async patch(namespace: string, name: string, patch: object): Promise<unknown> {
    this.calls.push({ verb: 'patch', namespace, name, body: patch as Record<string, unknown> });
    if (this.failPatch) throw new Error('events "x" not found');
    return patch;
  }
}

const cloneSet = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  metadata: { name: 'sample', namespace: 'demo', uid: 'uid-1', resourceVersion: '42' },
};

function setup(): { sink: RecordingSink; clock: FakeClock; rec: EventRecorder } {
  const sink = new RecordingSink();
  const clock = new FakeClock(Date.UTC(2025, 0, 2, 3, 4, 5));
  return { sink, clock, rec: new EventRecorder({ sink, clock, logger: silent }) };
}

test('an event is written as a core/v1 Event on the object, from cloneset-controller', async () => {
  const { sink, rec } = setup();
  rec.event(cloneSet, 'Normal', 'SuccessfulCreate', 'succeed to create pod sample-abcde');
  await rec.flush();
  assert.equal(sink.calls.length, 1);
  const c = sink.calls[0];
  assert.equal(c?.verb, 'create');
  assert.equal(c?.namespace, 'demo');
  const body = c?.body ?? {};
  assert.equal(body['apiVersion'], 'v1');
  assert.equal(body['kind'], 'Event');
  assert.match(String((body['metadata'] as { name: string }).name), /^sample\.[0-9a-f]+$/);
  assert.deepEqual(body['involvedObject'], {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    name: 'sample',
    namespace: 'demo',
    uid: 'uid-1',
    resourceVersion: '42',
  });
  assert.deepEqual(body['source'], { component: 'cloneset-controller' });
  assert.equal(body['type'], 'Normal');
  assert.equal(body['reason'], 'SuccessfulCreate');
  assert.equal(body['count'], 1);
  assert.equal(body['firstTimestamp'], '2025-01-02T03:04:05Z');
});

test('identical repeats within the window patch the count of the first Event', async () => {
  const { sink, clock, rec } = setup();
  rec.event(cloneSet, 'Warning', 'ScaleUpLimited', 'limit: 2');
  clock.advance(1000);
  rec.event(cloneSet, 'Warning', 'ScaleUpLimited', 'limit: 2');
  rec.event(cloneSet, 'Warning', 'ScaleUpLimited', 'limit: 2');
  await rec.flush();
  assert.deepEqual(
    sink.calls.map((c) => c.verb),
    ['create', 'patch', 'patch'],
  );
  const name = (sink.calls[0]?.body['metadata'] as { name: string } | undefined)?.name;
  assert.ok(name !== undefined, 'the create names the event');
  assert.equal(sink.calls[1]?.name, name);
  assert.deepEqual(sink.calls[2]?.body, { count: 3, lastTimestamp: '2025-01-02T03:04:06Z', message: 'limit: 2' });
});

test('a different message, type, or object is a separate Event', async () => {
  const { sink, rec } = setup();
  rec.event(cloneSet, 'Warning', 'ScaleUpLimited', 'limit: 2');
  rec.event(cloneSet, 'Warning', 'ScaleUpLimited', 'limit: 3');
  rec.event(cloneSet, 'Normal', 'ScaleUpLimited', 'limit: 2');
  rec.event({ ...cloneSet, metadata: { ...cloneSet.metadata, name: 'other', uid: 'uid-2' } }, 'Warning', 'ScaleUpLimited', 'limit: 2');
  await rec.flush();
  assert.deepEqual(
    sink.calls.map((c) => c.verb),
    ['create', 'create', 'create', 'create'],
  );
});

test('a repeat after the window creates a new Event', async () => {
  const { sink, clock, rec } = setup();
  rec.event(cloneSet, 'Warning', 'X', 'm');
  clock.advance(10 * 60_000);
  rec.event(cloneSet, 'Warning', 'X', 'm');
  await rec.flush();
  assert.deepEqual(
    sink.calls.map((c) => c.verb),
    ['create', 'create'],
  );
  assert.equal(sink.calls[1]?.body['count'], 1);
});

test('when the patch fails the Event is created again with the aggregated count', async () => {
  const { sink, rec } = setup();
  sink.failPatch = true;
  rec.event(cloneSet, 'Warning', 'X', 'm');
  rec.event(cloneSet, 'Warning', 'X', 'm');
  await rec.flush();
  assert.deepEqual(
    sink.calls.map((c) => c.verb),
    ['create', 'patch', 'create'],
  );
  assert.equal(sink.calls[2]?.body['count'], 2);
});

test('many similar events with different messages are combined into one Event', async () => {
  const { sink, rec } = setup();
  for (let i = 0; i < 12; i++) rec.event(cloneSet, 'Normal', 'SuccessfulCreate', `succeed to create pod p-${i}`);
  await rec.flush();
  assert.deepEqual(
    sink.calls.map((c) => c.verb),
    [...Array<string>(10).fill('create'), 'patch', 'patch'],
  );
  assert.equal(sink.calls[9]?.body['message'], '(combined from similar events): succeed to create pod p-9');
  assert.deepEqual(sink.calls[11]?.body, { count: 3, lastTimestamp: '2025-01-02T03:04:05Z', message: '(combined from similar events): succeed to create pod p-11' });
});

test('event() never throws or blocks, even when the sink fails or the object has no name', async () => {
  const { sink, rec } = setup();
  sink.failCreate = true;
  assert.doesNotThrow(() => rec.event(cloneSet, 'Warning', 'X', 'm'));
  assert.doesNotThrow(() => rec.event({}, 'Warning', 'X', 'm'));
  await rec.flush();
  assert.equal(sink.calls.length, 1);
});

test('the pending-event queue is bounded', async () => {
  const sink = new RecordingSink();
  const rec = new EventRecorder({ sink, clock: new FakeClock(0), logger: silent, maxQueued: 3 });
  for (let i = 0; i < 10; i++) rec.event(cloneSet, 'Normal', 'R', `m${i}`);
  await rec.flush();
  assert.ok(sink.calls.length <= 4);
  assert.ok(rec.droppedTotal >= 6);
});

test('an object without a namespace gets its Event in default', async () => {
  const { sink, rec } = setup();
  rec.event({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }, 'Normal', 'R', 'm');
  await rec.flush();
  assert.equal(sink.calls[0]?.namespace, 'default');
});

test('the spam filter lets 25 events of one reason through per object, then one per 5 minutes, and never mutes another reason', async () => {
  const { sink, clock, rec } = setup();
  for (let i = 0; i < 100; i++) rec.event(cloneSet, 'Normal', 'SuccessfulCreate', `succeed to create pod sample-${i}`);
  rec.event(cloneSet, 'Warning', 'FailedCreate', 'failed to create pod: quota exceeded');
  await rec.flush();
  const reasons = sink.calls.map((c) => String(c.body['reason'] ?? ''));
  assert.equal(sink.calls.length, 26, 'burst of 25 creates + the warning');
  assert.equal(rec.droppedTotal, 75);
  assert.ok(reasons.includes('FailedCreate') || sink.calls.some((c) => String(c.body['message'] ?? '').includes('quota exceeded')));
  clock.advance(5 * 60_000);
  rec.event(cloneSet, 'Normal', 'SuccessfulCreate', 'succeed to create pod sample-late');
  rec.event(cloneSet, 'Normal', 'SuccessfulCreate', 'succeed to create pod sample-later');
  await rec.flush();
  assert.equal(sink.calls.length, 27, 'one token refilled after 5 minutes');
});
