import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { heapRssKiB } from './relist.ts';

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
