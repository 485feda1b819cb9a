// The architecture rules of src/ that no tool checks. The layers, import cycles and which modules a pure module may
// import are dependency-cruiser's (.dependency-cruiser.cjs, `npm run lint:deps`); what a pure module may not do
// (clock, timers, randomness, IO, module state) is Biome's (biome.jsonc, `npm run lint`). A rule goes here only when
// neither can say it; each failure names the file, the line and what to do.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { apiWritesOutsideExecutor } from './api-writes.ts';
import { lineOf, ROOT, sourceFiles } from './sources.ts';

const files = sourceFiles();

/** GitHub's anchor of a markdown heading: lower case, punctuation dropped, spaces as dashes. */
const anchorOf = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- ]/gu, '')
    .replace(/ /g, '-');

test('every features.md link in src/ names a heading of docs/features.md', () => {
  const features = readFileSync(join(ROOT, 'docs', 'features.md'), 'utf8');
  const anchors = new Set([...features.matchAll(/^#{1,3} (.+)$/gm)].map((m) => anchorOf(m[1] ?? '')));
  const broken: string[] = [];
  for (const { path, text } of files) {
    for (const m of text.matchAll(/features\.md#([a-z0-9-]+)((?:, #[a-z0-9-]+)*)/g)) {
      const named = [m[1] ?? '', ...[...(m[2] ?? '').matchAll(/#([a-z0-9-]+)/g)].map((x) => x[1] ?? '')];
      for (const a of named)
        if (!anchors.has(a)) broken.push(`src/${path}:${lineOf(text, m.index)}: docs/features.md#${a} is not a heading there; fix the link or add the section`);
    }
  }
  assert.deepEqual(broken, []);
});

test('no module but the executor writes to the API (cloneset/execute*.ts, write-policy.ts, ports.ts)', () => {
  const writes = files.flatMap(({ path, text }) =>
    apiWritesOutsideExecutor(path, text).map(
      (w) => `src/${path}:${w.line}: calls ${w.call}, an API write, outside the executor; return a plan action and write it in cloneset/execute*.ts under the one write policy`,
    ),
  );
  assert.deepEqual(writes, []);
});

test('the API-write rule reports a write in the reconciler, but not in the executor, tests, comments or other receivers', () => {
  const body =
    'export async function f(ports, client, set) {\n  await ports.cloneSets.updateStatus(cs, s);\n  await client.patch(R, ns, n, p, "merge");\n  set.delete(1);\n  // ports.createPod(x) in a comment\n}\n';
  assert.deepEqual(apiWritesOutsideExecutor('cloneset/reconciler.ts', body), [
    { line: 2, call: 'cloneSets.updateStatus()' },
    { line: 3, call: 'client.patch()' },
  ]);
  assert.deepEqual(apiWritesOutsideExecutor('runtime/other.ts', body), [{ line: 2, call: 'cloneSets.updateStatus()' }], 'client verbs are only checked in cloneset/');
  for (const path of ['cloneset/execute-cloneset.ts', 'cloneset/write-policy.ts', 'cloneset/reconciler.test.ts', 'cloneset/testing/fake.ts'])
    assert.deepEqual(apiWritesOutsideExecutor(path, body), [], path);
});
