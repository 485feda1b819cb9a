// The two log formats: json for pipelines (ISO-8601 time, level as a word), text for a person at a terminal.
import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import { coalescedWrite, createLogger, defaultLogFormat, toTextLine } from './logging.ts';

test('json: one object a line with an ISO-8601 time and the level as a word', () => {
  const lines: string[] = [];
  createLogger({ level: 'info', format: 'json', component: 'cloneset-controller', write: (l) => void lines.push(l) }).warn({ cloneset: 'web/shop' }, 'rollout blocked');
  assert.equal(lines.length, 1);
  const entry = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
  assert.match(String(entry['time']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(entry['level'], 'warn');
  assert.equal(entry['msg'], 'rollout blocked');
  assert.equal(entry['cloneset'], 'web/shop');
  assert.equal(entry['component'], 'cloneset-controller');
});

test('text: time, level, message, then key=value pairs (quoted when they hold spaces)', () => {
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', format: 'text', component: 'cloneset-controller', write: (l) => void lines.push(l) });
  logger.info({ cloneset: 'web/shop', action: 'create pod', pods: 2 }, 'write');
  logger.trace('not shown below debug');
  assert.equal(lines.length, 1);
  assert.match(lines[0] ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO {2}write {2}cloneset=web\/shop action="create pod" pods=2\n$/);
});

test('a line that is not JSON passes through the text format unchanged', () => {
  assert.equal(toTextLine('plain words'), 'plain words\n');
});

test('the default format is text on a terminal, json anywhere else', () => {
  assert.equal(defaultLogFormat(true), 'text');
  assert.equal(defaultLogFormat(false), 'json');
});

describe('coalescedWrite', () => {
  it('passes on the lines of one turn as one chunk, once the turn ends', () => {
    const chunks: string[] = [];
    const deferred: (() => void)[] = [];
    const out = coalescedWrite(
      (c) => chunks.push(c),
      (f) => deferred.push(f),
    );
    out.write('a\n');
    out.write('b\n');
    assert.deepEqual(chunks, []);
    assert.equal(deferred.length, 1);
    for (const f of deferred.splice(0)) f();
    assert.deepEqual(chunks, ['a\nb\n']);
    out.write('c\n');
    for (const f of deferred.splice(0)) f();
    assert.deepEqual(chunks, ['a\nb\n', 'c\n']);
  });

  it('flush passes on what is held at once (the process exit), and nothing twice', () => {
    const chunks: string[] = [];
    const deferred: (() => void)[] = [];
    const out = coalescedWrite(
      (c) => chunks.push(c),
      (f) => deferred.push(f),
    );
    out.write('last words\n');
    out.flush();
    for (const f of deferred.splice(0)) f();
    assert.deepEqual(chunks, ['last words\n']);
  });
});
