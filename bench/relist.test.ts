import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { heapRssKiB, podRelistLogged } from './relist.ts';

const mapping = (range: string, name: string, rss: number): string =>
  `${range} rw-p 00000000 00:00 0                          ${name}\nSize:              40000 kB\nRss:               ${rss} kB\nPss:               ${rss} kB\n`;

describe("the controller's native heap, from /proc/<pid>/smaps", () => {
  it('is the resident size of the [heap] mapping, not of the mappings around it', () => {
    const smaps = mapping('00400000-00500000', '/usr/bin/node', 51200) + mapping('05e2b000-0ad6e000', '[heap]', 19456) + mapping('7f00-7f10', '', 8192);
    assert.equal(heapRssKiB(smaps), 19456);
  });

  it('is 0 for a process without one', () => {
    assert.equal(heapRssKiB(mapping('00400000-00500000', '/usr/bin/node', 51200)), 0);
  });
});

describe("the controller's log, read for the pod informer's relist", () => {
  it('finds a relist line written after the offset, and none written before it', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'relist-'));
    const log = path.join(dir, 'controller.log');
    const relisting = '{"level":"info","informer":"v1/pods","namespace":"ns","msg":"watch expired at resourceVersion 5 (410: too old); relisting"}\n';
    writeFileSync(log, relisting);
    const offset = statSync(log).size;
    appendFileSync(log, '{"level":"info","informer":"v1/nodes","msg":"watch expired at resourceVersion 6 (410: too old); relisting"}\n');
    assert.equal(podRelistLogged(log, offset), false, 'the earlier pod line and a node line do not count');
    appendFileSync(log, relisting);
    assert.equal(podRelistLogged(log, offset), true);
  });
});
