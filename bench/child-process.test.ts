import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { spawnLogged, stopRunningChildren } from './child-process.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'child-process-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// A child that runs until it is told to stop, as the controller and the webhook do.
const SLEEPER = ['-e', 'setInterval(() => {}, 1000)'];

describe('the benchmarks’ children', () => {
  it('are all stopped by stopRunningChildren, as an interrupted benchmark does before it exits', async () => {
    const a = spawnLogged(SLEEPER, path.join(dir, 'a.log'));
    const b = spawnLogged(SLEEPER, path.join(dir, 'b.log'));
    await stopRunningChildren();
    assert.equal(a.proc.signalCode, 'SIGTERM');
    assert.equal(b.proc.signalCode, 'SIGTERM');
  });

  it('are stopped all the same when some of them have exited on their own', async () => {
    const done = spawnLogged(['-e', ''], path.join(dir, 'done.log'));
    await once(done.proc, 'exit');
    assert.equal(done.proc.exitCode, 0);
    const running = spawnLogged(SLEEPER, path.join(dir, 'running.log'));
    await stopRunningChildren();
    assert.equal(done.proc.signalCode, null);
    assert.equal(running.proc.signalCode, 'SIGTERM');
  });
});
