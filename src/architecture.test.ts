// The architecture of src/ (docs/architecture.md) as a test: layer order, no import cycles (type-only imports
// included), and the purity of the planner, the in-place engine and admission. Rules: src/architecture/rules.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { checkArchitecture, formatViolations, layerOf, type Violation } from './architecture/rules.ts';

const SRC = resolve(import.meta.dirname);

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
  assert.deepEqual(orphans, [], 'add the folder to LAYERS in src/architecture/rules.ts and describe it in docs/architecture.md');
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

test('the pure modules keep no module-level mutable state', () => {
  assertNone('module-state');
});
