// The rules of .dependency-cruiser.cjs and biome.jsonc catch what they are meant to: each case writes a tiny src/
// into a temporary directory, runs the real tool with the repository's config on it and reads its verdict.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ROOT } from './sources.ts';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A scratch repository holding the given files (path → text) and copies of the tools' configs. */
function tree(files: Readonly<Record<string, string>>): string {
  const dir = mkdtempSync(join(tmpdir(), 'architecture-'));
  dirs.push(dir);
  for (const config of ['.dependency-cruiser.cjs', 'biome.jsonc', 'tsconfig.json', 'tools/lint/pure-modules.grit']) {
    mkdirSync(dirname(join(dir, config)), { recursive: true });
    copyFileSync(join(ROOT, config), join(dir, config));
  }
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

interface Verdict {
  readonly ok: boolean;
  readonly output: string;
}

function run(dir: string, bin: string, args: readonly string[]): Verdict {
  const r = spawnSync(join(ROOT, 'node_modules', '.bin', bin), args, { cwd: dir, encoding: 'utf8' });
  return { ok: r.status === 0, output: `${r.stdout}${r.stderr}` };
}

const depcruise = (files: Readonly<Record<string, string>>): Verdict => run(tree(files), 'depcruise', ['src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err-long']);
const biome = (files: Readonly<Record<string, string>>): Verdict => run(tree(files), 'biome', ['lint', '--vcs-enabled=false', '--max-diagnostics=50', 'src']);

describe('dependency-cruiser (.dependency-cruiser.cjs)', () => {
  test('a layered tree passes', () => {
    const v = depcruise({
      'src/kube/types.ts': 'export type Pod = { name: string };\n',
      'src/api/cloneset.ts': "import type { Pod } from '../kube/types.ts';\nexport type CloneSet = { pods: Pod[] };\n",
      'src/cloneset/plan/scale.ts': "import type { CloneSet } from '../../api/cloneset.ts';\nexport const replicas = (c: CloneSet): number => c.pods.length;\n",
    });
    assert.ok(v.ok, v.output);
  });

  test('an upward import fails with the rule of its layer', () => {
    const v = depcruise({
      'src/kube/client.ts': "import { replicas } from '../cloneset/plan/scale.ts';\nexport const r = replicas;\n",
      'src/cloneset/plan/scale.ts': 'export const replicas = (): number => 1;\n',
    });
    assert.equal(v.ok, false);
    assert.match(v.output, /error layer-kube: src\/kube\/client\.ts → src\/cloneset\/plan\/scale\.ts/);
  });

  test('siblings do not import each other', () => {
    const v = depcruise({ 'src/webhook/server.ts': "import '../cloneset/manager.ts';\n", 'src/cloneset/manager.ts': 'export {};\n' });
    assert.match(v.output, /error layer-webhook: src\/webhook\/server\.ts → src\/cloneset\/manager\.ts/);
  });

  test('a cycle made of type-only imports fails', () => {
    const v = depcruise({
      'src/cloneset/plan/a.ts': "import type { B } from './b.ts';\nexport type A = B | 1;\n",
      'src/cloneset/plan/b.ts': "import type { A } from './a.ts';\nexport type B = A | 2;\n",
    });
    assert.match(v.output, /error no-cycles: src\/cloneset\/plan\/a\.ts →/);
  });

  test('product code may not import a test fixture; a test may', () => {
    const v = depcruise({
      'src/cloneset/execute.ts': "import './testing/world.ts';\n",
      'src/cloneset/execute.test.ts': "import './testing/world.ts';\n",
      'src/cloneset/testing/world.ts': 'export {};\n',
    });
    assert.match(v.output, /error product-not-to-test-code: src\/cloneset\/execute\.ts → src\/cloneset\/testing\/world\.ts/);
    assert.doesNotMatch(v.output, /execute\.test\.ts →/);
  });

  test('a pure module may not import IO modules or impure modules', () => {
    const v = depcruise({
      'src/cloneset/plan/scale.ts':
        "import { readFileSync } from 'node:fs';\nimport { createHash } from 'node:crypto';\nimport '../executor.ts';\nexport const f = [readFileSync, createHash];\n",
      'src/cloneset/executor.ts': 'export {};\n',
    });
    assert.match(v.output, /error pure-no-io-modules: src\/cloneset\/plan\/scale\.ts → fs/);
    assert.match(v.output, /error pure-imports-pure: src\/cloneset\/plan\/scale\.ts → src\/cloneset\/executor\.ts/);
    assert.doesNotMatch(v.output, /→ crypto/);
  });
});

describe('Biome on the pure modules (biome.jsonc)', () => {
  test('clock, randomness, timers, process state and module state each fail', () => {
    const v = biome({
      'src/cloneset/plan/impure.ts': [
        'let calls = 0;',
        'const cache = new Map<string, number>();',
        'export const now = (): number => Date.now();',
        'export const today = (): Date => new Date();',
        'export const dice = (): number => Math.random();',
        'export const later = (f: () => void): void => { setTimeout(f, 1); };',
        'export const flag = (): string | undefined => process.env.FLAG;',
        "export { randomUUID } from 'node:crypto';",
        'export const count = (): number => calls + cache.size;',
        '',
      ].join('\n'),
    });
    assert.equal(v.ok, false);
    for (const expected of [
      'module-level let/var is mutable module state',
      'a module-level new Map/Set is state shared by every reconcile',
      'reads the clock; take nowMs from the snapshot/input',
      'reads the clock (new Date())',
      'decisions must be reproducible; take randomness',
      'schedules work; return a requeue delay',
      'process state; pass flags and configuration in',
      'import only the hashing functions here',
    ]) {
      assert.ok(v.output.includes(expected), `expected "${expected}" in:\n${v.output}`);
    }
  });

  test('the same code outside the pure modules, and pure code with its inputs, pass', () => {
    const v = biome({
      'src/runtime/clock.ts': 'let calls = 0;\nexport const now = (): number => { calls++; return Date.now() + calls; };\n',
      'src/cloneset/plan/pure.ts': [
        "import { createHash } from 'node:crypto';",
        'const TABLE: ReadonlyMap<string, number> = new Map([["a", 1]]);',
        'export const at = (nowMs: number): Date => new Date(nowMs);',
        "export const hash = (s: string): string => createHash('sha256').update(s).digest('hex') + String(TABLE.size);",
        '',
      ].join('\n'),
    });
    assert.ok(v.ok, v.output);
  });
});
