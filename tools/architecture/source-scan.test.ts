import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { findImports, tokenize } from './source-scan.ts';

const imports = (src: string): { specifier: string; line: number; kind: string; typeOnly: boolean }[] =>
  findImports(tokenize(src)).map((r) => ({ specifier: r.specifier, line: r.line, kind: r.kind, typeOnly: r.typeOnly }));
const specs = (src: string): string[] => imports(src).map((r) => r.specifier);

describe('findImports', () => {
  test('finds static, type-only, re-exported, side-effect and dynamic imports with their lines', () => {
    const src = [
      "import a from './a.ts';",
      "import type { B } from './b.ts';",
      'import {',
      '  c,',
      '  type C,',
      "} from './c.ts';",
      "import { type D, type E } from './d.ts';",
      "export { f } from './f.ts';",
      "export type { G } from './g.ts';",
      "export * from './h.ts';",
      "import './side.ts';",
      "const m = await import('./dyn.ts');",
      "type T = typeof import('./typeof.ts');",
      "import * as ns from 'node:fs';",
    ].join('\n');
    assert.deepEqual(imports(src), [
      { specifier: './a.ts', line: 1, kind: 'import', typeOnly: false },
      { specifier: './b.ts', line: 2, kind: 'import', typeOnly: true },
      { specifier: './c.ts', line: 6, kind: 'import', typeOnly: false },
      { specifier: './d.ts', line: 7, kind: 'import', typeOnly: true },
      { specifier: './f.ts', line: 8, kind: 'export-from', typeOnly: false },
      { specifier: './g.ts', line: 9, kind: 'export-from', typeOnly: true },
      { specifier: './h.ts', line: 10, kind: 'export-from', typeOnly: false },
      { specifier: './side.ts', line: 11, kind: 'side-effect', typeOnly: false },
      { specifier: './dyn.ts', line: 12, kind: 'dynamic', typeOnly: false },
      { specifier: './typeof.ts', line: 13, kind: 'dynamic', typeOnly: true },
      { specifier: 'node:fs', line: 14, kind: 'import', typeOnly: false },
    ]);
  });

  test('is not fooled by imports inside comments, strings, template literals or regular expressions', () => {
    const src = [
      "// import x from './comment.ts';",
      "/* import y from './block.ts'; */",
      "const s = \"import z from './string.ts'\";",
      "const t = `import w from './template.ts' ${\"}\"} import('./in-template.ts')`;",
      "const r = /import q from '.\\/regex.ts'/;",
      "const d = 4 / 2; const e = 6 / 3; // two divisions, not a regex",
      "import real from './real.ts';",
    ].join('\n');
    assert.deepEqual(specs(src), ['./real.ts']);
    assert.equal(imports(src)[0]?.line, 7);
  });

  test('ignores import.meta, member calls named import and `export { x };` without a module', () => {
    const src = "const here = import.meta.dirname;\nloader.import('./no.ts');\nconst x = 1;\nexport { x };\nimport y from './yes.ts';";
    assert.deepEqual(specs(src), ['./yes.ts']);
  });

  test('names what each import takes from the module', () => {
    const names = (src: string): readonly string[] | undefined => findImports(tokenize(src))[0]?.names;
    assert.deepEqual(names("import { a, type B, c as d } from './m.ts';"), ['a', 'B', 'c']);
    assert.deepEqual(names("import x, * as ns from './m.ts';"), ['default', '*']);
    assert.deepEqual(names("export * from './m.ts';"), ['*']);
  });

  test('a value imported next to a type keeps the import a run-time one', () => {
    assert.equal(imports("import x, { type Y } from './m.ts';")[0]?.typeOnly, false);
    assert.equal(imports("import { type as } from './m.ts';")[0]?.typeOnly, true);
    assert.equal(imports("import { type as Renamed } from './m.ts';")[0]?.typeOnly, false);
  });
});

describe('tokenize', () => {
  test('tracks the nesting depth, template substitutions included', () => {
    const tokens = tokenize('let a = 1;\nfunction f() { let b = `${ {c: 1}.c }`; }');
    const lets = tokens.filter((t) => t.text === 'let').map((t) => [t.line, t.depth]);
    assert.deepEqual(lets, [[1, 0], [2, 1]]);
    assert.equal(tokens[tokens.length - 1]?.depth, 0);
  });

  test('an unterminated string is an error that names the line', () => {
    assert.throws(() => tokenize("const a = 1;\nconst s = 'open"), /unterminated string starting on line 2/);
  });
});
