// The architecture of src/ (docs/architecture.md) as a test: layer order, no import cycles (type-only imports
// included), and the purity of the planner, the in-place engine and admission. Rules: tools/architecture/rules.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { checkArchitecture, formatViolations, layerOf, type Violation } from './rules.ts';

const SRC = resolve(import.meta.dirname, '..', '..', 'src');

function sources(): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(SRC, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const abs = join(entry.parentPath, entry.name);
    files.set(relative(SRC, abs).split('\\').join('/'), readFileSync(abs, 'utf8'));
  }
  return files;
}

const files = sources();
const violations = checkArchitecture(files);
/** Fails with one line per violation: file:line, the rule, what is wrong and what to do. */
function assertNone(rule: Violation['rule']): void {
  const found = violations.filter((v) => v.rule === rule);
  assert.ok(found.length === 0, `${found.length} violation(s):\n${formatViolations(found)}\n`);
}

test('every source file belongs to a layer', () => {
  const orphans = [...files.keys()].filter((f) => layerOf(f) === undefined);
  assert.deepEqual(orphans, [], 'add the folder to LAYERS in tools/architecture/rules.ts and describe it in docs/architecture.md');
});

test('every relative import names an existing .ts file of src/', () => {
  assertNone('resolve');
});

test('imports point down the layers only', () => {
  assertNone('layer');
});

test('product code never imports tests or test fixtures', () => {
  assertNone('test-code');
});

test('there are no import cycles, type-only imports included', () => {
  assertNone('cycle');
});

test('the pure modules do no IO and read no clock, randomness or process state', () => {
  assertNone('purity');
});

/** GitHub's anchor of a markdown heading: lower case, punctuation dropped, spaces as dashes. */
const anchorOf = (heading: string): string => heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\- ]/gu, '').replace(/ /g, '-');

test('every features.md link in src/ names a heading of docs/features.md', () => {
  const features = readFileSync(resolve(SRC, '..', 'docs', 'features.md'), 'utf8');
  const anchors = new Set([...features.matchAll(/^#{1,3} (.+)$/gm)].map((m) => anchorOf(m[1] ?? '')));
  const broken: string[] = [];
  for (const [file, source] of files) {
    for (const m of source.matchAll(/features\.md#([a-z0-9-]+)((?:, #[a-z0-9-]+)*)/g)) {
      const named = [m[1] ?? '', ...[...(m[2] ?? '').matchAll(/#([a-z0-9-]+)/g)].map((x) => x[1] ?? '')];
      const line = source.slice(0, m.index).split('\n').length;
      for (const a of named) if (!anchors.has(a)) broken.push(`src/${file}:${line}: docs/features.md#${a} is not a heading there; fix the link or add the section`);
    }
  }
  assert.ok(broken.length === 0, `${broken.length} broken link(s):\n${broken.join('\n')}\n`);
});

test('the pure modules keep no module-level mutable state', () => {
  assertNone('module-state');
});
