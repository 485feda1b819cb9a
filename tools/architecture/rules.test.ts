import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkArchitecture, resolveSpecifier, type Violation } from './rules.ts';

const check = (files: Record<string, string>): Violation[] => checkArchitecture(new Map(Object.entries(files)));
const summary = (vs: readonly Violation[]): string[] => vs.map((v) => `${v.rule} ${v.file}:${v.line}`);

test('resolveSpecifier follows ./ and ../ and keeps paths outside src/ visible', () => {
  assert.equal(resolveSpecifier('cloneset/plan/index.ts', '../../api/cloneset.ts'), 'api/cloneset.ts');
  assert.equal(resolveSpecifier('kube/client.ts', '../../package.json'), '../package.json');
  assert.equal(resolveSpecifier('main.ts', 'node:fs'), undefined);
});

test('an import pointing up the layers is reported with its line', () => {
  const vs = check({ 'kube/client.ts': "\nimport type { X } from '../runtime/clock.ts';\n", 'runtime/clock.ts': 'export type X = 1;' });
  assert.deepEqual(summary(vs), ['layer kube/client.ts:2']);
  assert.match(vs[0]?.message ?? '', /type-only imports count too/);
});

test('siblings of one rank may not import each other', () => {
  assert.deepEqual(summary(check({ 'webhook/server.ts': "import '../cloneset/manager.ts';", 'cloneset/manager.ts': '' })), ['layer webhook/server.ts:1']);
});

test('a type-only cycle is a cycle, reported with each step', () => {
  const vs = check({
    'cloneset/execute.ts': "import { a } from './execute-pod.ts';",
    'cloneset/execute-pod.ts': "import type { Deps } from './execute.ts';",
  });
  assert.deepEqual(summary(vs), ['cycle cloneset/execute-pod.ts:1']);
  assert.match(vs[0]?.message ?? '', /execute-pod\.ts:1 → cloneset\/execute\.ts \(type-only\), cloneset\/execute\.ts:1 → cloneset\/execute-pod\.ts/);
});

test('pure modules may not read the clock, draw random numbers, schedule timers, do IO or import IO modules', () => {
  const vs = check({
    'cloneset/plan/a.ts': [
      "import { readFileSync } from 'node:fs';",
      "import type { KubeClient } from '../../kube/client.ts';",
      'export const f = () => Date.now() + Math.random();',
      'export const g = () => new Date();',
      'export const h = () => setTimeout(() => {}, 1);',
      'export const ok = (nowMs: number) => new Date(nowMs).toISOString() + clock.setTimeout;',
    ].join('\n'),
    'kube/client.ts': '',
  });
  assert.deepEqual(summary(vs), ['purity cloneset/plan/a.ts:1', 'purity cloneset/plan/a.ts:2', 'purity cloneset/plan/a.ts:3', 'purity cloneset/plan/a.ts:3', 'purity cloneset/plan/a.ts:4', 'purity cloneset/plan/a.ts:5']);
});

test('module-level mutable state in a pure module is reported; state inside functions and read-only tables are not', () => {
  const vs = check({
    'admission/a.ts': [
      'let counter = 0;',
      'const cache = new Map<string, number>();',
      'const TABLE: ReadonlySet<string> = new Set(["a"]);',
      'export function f(): number { let n = 0; const m = new Map(); for (let i = 0; i < 2; i++) n++; return n + m.size + counter + cache.size + TABLE.size; }',
      'export const g = () => new Set<string>();',
      'export const o = { method() { return new Map(); } };',
      'function q(list: string[]): Map<string, { q: number; text: string }> {',
      '  const out = new Map<string, { q: number; text: string }>();',
      '  return out;',
      '}',
    ].join('\n'),
  });
  assert.deepEqual(summary(vs), ['module-state admission/a.ts:1', 'module-state admission/a.ts:2']);
});

test('a pure module may hash with node:crypto but not draw random values from it', () => {
  const vs = check({
    'api/a.ts': "import { createHash } from 'node:crypto';",
    'api/b.ts': "import { createHash, randomUUID } from 'node:crypto';",
    'api/c.ts': "import * as c from 'node:crypto';",
  });
  assert.deepEqual(summary(vs), ['purity api/b.ts:1', 'purity api/c.ts:1']);
  assert.match(vs[0]?.message ?? '', /imports randomUUID from 'node:crypto'/);
});

test('tests may import across layers; product code may not', () => {
  const vs = check({ 'kube/a.test.ts': "import '../runtime/watcher.ts';", 'kube/b.ts': "import '../runtime/watcher.ts';", 'runtime/watcher.ts': '' });
  assert.deepEqual(summary(vs), ['layer kube/b.ts:1']);
});

test('tests and fixtures are exempt from purity, but product code may not import them', () => {
  const vs = check({
    'cloneset/plan/a.test.ts': 'const t = Date.now();',
    'cloneset/plan/testing/builders.ts': 'let seq = 0;',
    'cloneset/plan/b.ts': "import { x } from './testing/builders.ts';",
  });
  assert.deepEqual(summary(vs), ['test-code cloneset/plan/b.ts:1']);
});

test('product code may not import test helpers or benchmarks outside src/', () => {
  const vs = check({ 'cloneset/a.ts': "import '../../test/helpers/kube.ts';\nimport pkg from '../../package.json' with { type: 'json' };", 'cloneset/a.test.ts': "import '../../test/helpers/kube.ts';" });
  assert.deepEqual(summary(vs), ['test-code cloneset/a.ts:1']);
});

test('no product module may import the local control plane', () => {
  assert.deepEqual(summary(check({ 'main.ts': "import './localcluster/cluster.ts';", 'localcluster/cluster.ts': '' })), ['layer main.ts:1']);
});
