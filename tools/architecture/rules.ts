/**
 * The architecture of src/ as rules a unit test checks (tools/architecture/architecture.test.ts), so that the layering and the
 * planner's purity described in docs/architecture.md hold because a test says so, not because a document does.
 *
 * Input: every file of src/ as (path relative to src/, source text). Output: violations, each with the file,
 * the line, what is wrong and what to do instead. No IO here; the test reads the files.
 */
import { findImports, tokenize, type ImportRef, type Token } from './source-scan.ts';

export interface Violation {
  readonly file: string;
  readonly line: number;
  readonly rule: 'layer' | 'cycle' | 'purity' | 'module-state' | 'resolve' | 'test-code';
  readonly message: string;
}

export interface Layer {
  readonly name: string;
  /** Imports may point to layers of a lower rank, or within the same layer; never sideways or up. */
  readonly rank: number;
  readonly matches: (file: string) => boolean;
  readonly why: string;
  /** Test/demo infrastructure: no product module may import it. */
  readonly infrastructure?: boolean;
}

const under = (dir: string) => (file: string): boolean => file.startsWith(`${dir}/`);
const is = (...names: string[]) => (file: string): boolean => names.includes(file);

/** Ordered from the bottom. The first layer that matches a file is its layer. */
export const LAYERS: readonly Layer[] = [
  { name: 'kube/types.ts', rank: 0, matches: is('kube/types.ts'), why: 'Kubernetes wire types (Pod, ObjectMeta…): the vocabulary every layer speaks, importing nothing' },
  { name: 'api/', rank: 1, matches: under('api'), why: 'the CloneSet API: types, strings, schema, defaults, Go-compatible JSON' },
  { name: 'kube/', rank: 2, matches: under('kube'), why: 'generic Kubernetes plumbing: REST client, errors, selectors' },
  { name: 'runtime/', rank: 3, matches: under('runtime'), why: 'controller machinery: informers, work queue, expectations, events, leader election' },
  { name: 'admission/', rank: 4, matches: under('admission'), why: 'pure admission decisions (defaulting, validation) shared by the webhook' },
  { name: 'cloneset/', rank: 5, matches: under('cloneset'), why: 'the CloneSet domain: pure planner and in-place engine, one executor, reconciler' },
  { name: 'webhook/', rank: 5, matches: under('webhook'), why: 'the admission/conversion HTTPS server (IO), a sibling of cloneset/' },
  { name: 'main', rank: 6, matches: (f) => (!f.includes('/') && f !== 'architecture.test.ts') || under('plugin')(f), why: 'composition roots: main.ts and the other top-level files (flags, HTTP endpoints, leadership), and plugin/, a client of everything' },
  { name: 'localcluster/', rank: 2, matches: under('localcluster'), why: 'the local control plane for tests, benchmarks and the demo', infrastructure: true },
  { name: 'architecture/', rank: 0, matches: (f) => under('architecture')(f) || f === 'architecture.test.ts', why: 'this checker; it reads source files, it imports no product module', infrastructure: true },
];

const isInfrastructure = (file: string): boolean => layerOf(file)?.infrastructure === true;

/** Folders and files whose decisions must be pure: snapshot in, plan out (docs/architecture.md). */
export const PURE: readonly ((file: string) => boolean)[] = [
  under('api'),
  is('kube/types.ts', 'kube/selectors.ts', 'kube/owner-refs.ts', 'kube/time.ts'),
  under('cloneset/plan'),
  under('cloneset/inplace'),
  under('admission'),
];

export const isTestFile = (file: string): boolean => file.endsWith('.test.ts');
/** Test fixtures (builders, simulators): importable from tests and other fixtures only. */
export const isFixture = (file: string): boolean => /(^|\/)testing\//.test(file);
export const isPure = (file: string): boolean => !isTestFile(file) && !isFixture(file) && PURE.some((p) => p(file));

/** Node built-ins a pure module may use: computation only, no IO, no clock, no randomness. */
const PURE_NODE_MODULES = new Set(['assert', 'assert/strict', 'buffer', 'crypto', 'path', 'util', 'url', 'string_decoder']);
/** npm packages a pure module may use. */
const PURE_PACKAGES = new Set(['yaml']);

export function layerOf(file: string): Layer | undefined {
  return LAYERS.find((l) => l.matches(file));
}

/** Resolves a relative specifier against the importing file (both relative to src/); undefined for packages. */
export function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const parts = from.split('/').slice(0, -1);
  let up = 0; // segments above src/ (e.g. '../../package.json')
  for (const seg of specifier.split('/')) {
    if (seg === '.') continue;
    if (seg !== '..') parts.push(seg);
    else if (parts.length > 0) parts.pop();
    else up++;
  }
  return `${'../'.repeat(up)}${parts.join('/')}`;
}

export interface ScannedFile {
  readonly file: string;
  readonly tokens: readonly Token[];
  readonly imports: readonly ImportRef[];
}

export function scan(file: string, source: string): ScannedFile {
  const tokens = tokenize(source);
  return { file, tokens, imports: findImports(tokens) };
}

interface Edge {
  readonly to: string;
  readonly line: number;
  readonly typeOnly: boolean;
}

/** All checks over the whole of src/. `files` maps a path relative to src/ to its source text. */
export function checkArchitecture(files: ReadonlyMap<string, string>): Violation[] {
  const violations: Violation[] = [];
  const scanned: ScannedFile[] = [];
  for (const [file, source] of files) {
    try {
      scanned.push(scan(file, source));
    } catch (e) {
      violations.push({ file, line: 1, rule: 'resolve', message: `cannot be scanned (${e instanceof Error ? e.message : String(e)}); fix the lexer in tools/architecture/source-scan.ts` });
    }
  }
  const graph = new Map<string, Edge[]>();
  for (const s of scanned) {
    const edges: Edge[] = [];
    for (const ref of s.imports) {
      const target = resolveSpecifier(s.file, ref.specifier);
      if (target === undefined) {
        violations.push(...checkPackageImport(s.file, ref));
        continue;
      }
      if (target.startsWith('../')) {
        // Outside src/: package.json is fine; test helpers, benchmarks and scripts are not product code.
        if (!target.endsWith('package.json') && !isTestFile(s.file)) {
          violations.push({ file: s.file, line: ref.line, rule: 'test-code', message: `imports '${ref.specifier}', outside src/; product code may not depend on test/, bench/ or hack/ — move what it needs into src/` });
        }
        continue;
      }
      if (!target.endsWith('.ts')) {
        violations.push({ file: s.file, line: ref.line, rule: 'resolve', message: `imports '${ref.specifier}' without the .ts extension; Node's type stripping needs it: write '${ref.specifier}.ts'` });
        continue;
      }
      if (!files.has(target)) {
        violations.push({ file: s.file, line: ref.line, rule: 'resolve', message: `imports '${ref.specifier}', which is not a file of src/ (resolved to src/${target})` });
        continue;
      }
      edges.push({ to: target, line: ref.line, typeOnly: ref.typeOnly });
      violations.push(...checkEdge(s.file, target, ref));
    }
    graph.set(s.file, edges);
    if (isPure(s.file)) violations.push(...checkPureTokens(s.file, s.tokens));
  }
  violations.push(...findCycles(graph));
  return violations.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}

function checkPackageImport(file: string, ref: ImportRef): Violation[] {
  if (!isPure(file)) return [];
  if (ref.specifier.startsWith('node:')) {
    const mod = ref.specifier.slice('node:'.length);
    const random = ref.names.filter((n) => RANDOM.has(n) || (mod === 'crypto' && n === '*'));
    if (random.length > 0) {
      return [{ file, line: ref.line, rule: 'purity', message: `pure module imports ${random.join(', ')} from '${ref.specifier}'; decisions must be reproducible — take random values as an input (import only the hashing functions here)` }];
    }
    if (PURE_NODE_MODULES.has(mod)) return [];
    return [{ file, line: ref.line, rule: 'purity', message: `pure module imports '${ref.specifier}' (IO, clock or process state); do the IO in the executor or a runtime/ module and pass the result in (snapshot in, plan out)` }];
  }
  if (PURE_PACKAGES.has(ref.specifier)) return [];
  return [{ file, line: ref.line, rule: 'purity', message: `pure module imports the package '${ref.specifier}'; only ${[...PURE_PACKAGES].join(', ')} and computation-only node: modules are allowed here — pass a logger/client in from the IO side instead` }];
}

function checkEdge(from: string, to: string, ref: ImportRef): Violation[] {
  const v: Violation[] = [];
  const typeNote = ref.typeOnly ? ' (type-only imports count too: they are still a dependency)' : '';
  if (!isTestFile(from) && !isFixture(from) && (isTestFile(to) || isFixture(to))) {
    v.push({ file: from, line: ref.line, rule: 'test-code', message: `product code imports test code src/${to}; move what both need into a product module` });
  }
  if (isInfrastructure(to) && !isInfrastructure(from) && !isTestFile(from)) {
    v.push({ file: from, line: ref.line, rule: 'layer', message: `imports src/${to}: ${layerOf(to)?.name ?? to} is test/demo infrastructure, no product module may depend on it` });
  }
  if (isPure(from) && !isPure(to) && !isTestFile(to) && !isFixture(to)) {
    v.push({ file: from, line: ref.line, rule: 'purity', message: `pure module imports src/${to}, which is not pure${typeNote}; move the shared type or helper into a pure module (e.g. cloneset/plan/ or api/) or do this in the executor` });
  }
  // Tests may reach across layers to build a scenario (nothing imports a test, so they add no cycle).
  if (isTestFile(from)) return v;
  const lf = layerOf(from);
  const lt = layerOf(to);
  if (lf === undefined || lt === undefined) {
    const f = lf === undefined ? from : to;
    v.push({ file: from, line: ref.line, rule: 'layer', message: `src/${f} belongs to no layer; add its folder to LAYERS in tools/architecture/rules.ts and to docs/architecture.md` });
    return v;
  }
  if (isInfrastructure(from)) {
    if (layerOf(from)?.name === 'architecture/' && layerOf(to)?.name !== 'architecture/') v.push({ file: from, line: ref.line, rule: 'layer', message: `the architecture checker imports src/${to}; it must read sources, not import them` });
    else if (under('localcluster')(from) && lt.rank > 2) v.push({ file: from, line: ref.line, rule: 'layer', message: `localcluster/ imports src/${to} (${lt.name}); the control plane may use only kube/ and api/` });
    return v;
  }
  if (lt.rank > lf.rank || (lt.rank === lf.rank && lt !== lf)) {
    v.push({
      file: from,
      line: ref.line,
      rule: 'layer',
      message: `${lf.name} imports src/${to} (${lt.name})${typeNote}; imports point down only (${layerOrder()}): move the shared piece down into ${lf.name} or below, or invert the dependency with an interface`,
    });
  }
  return v;
}

/** The product layers, bottom first, e.g. "kube/types.ts ← api/ ← … ← cloneset/ | webhook/ ← main". */
export function layerOrder(): string {
  const product = LAYERS.filter((l) => !l.infrastructure);
  const ranks = [...new Set(product.map((l) => l.rank))].sort((a, b) => a - b);
  return ranks.map((r) => product.filter((l) => l.rank === r).map((l) => l.name).join(' | ')).join(' ← ');
}

const RANDOM = new Set(['randomUUID', 'randomBytes', 'randomInt', 'randomFill', 'randomFillSync', 'getRandomValues', 'webcrypto']);
const TIMERS = new Set(['setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask']);
const MUTABLE_COLLECTIONS = new Set(['Map', 'Set', 'WeakMap', 'WeakSet']);

/** Clock, randomness, timers, process state and module-level mutable state in a pure module. */
export function checkPureTokens(file: string, tokens: readonly Token[]): Violation[] {
  const v: Violation[] = [];
  const t = (k: number): Token | undefined => tokens[k];
  const text = (k: number): string | undefined => tokens[k]?.text;
  const push = (line: number, rule: Violation['rule'], message: string): void => {
    v.push({ file, line, rule, message });
  };
  for (let k = 0; k < tokens.length; k++) {
    const tok = t(k);
    if (tok === undefined) continue;
    if (tok.kind !== 'ident') continue;
    const prev = t(k - 1);
    const isMember = prev?.kind === 'punct' && (prev.text === '.' || prev.text === '?.');
    const isKey = t(k + 1)?.text === ':' && (prev?.text === '{' || prev?.text === ',');
    if (isMember || isKey) continue;
    const name = tok.text;
    if (name === 'Date' && text(k + 1) === '.' && text(k + 2) === 'now') push(tok.line, 'purity', 'reads the clock (Date.now()); take `nowMs` from the snapshot/input instead');
    else if (name === 'Date' && text(k - 1) === 'new' && text(k + 1) === '(' && text(k + 2) === ')') push(tok.line, 'purity', 'reads the clock (new Date()); take `nowMs` from the snapshot/input and write new Date(nowMs)');
    else if (name === 'performance' && text(k + 1) === '.') push(tok.line, 'purity', 'reads the clock (performance.*); take `nowMs` from the input instead');
    else if (name === 'Math' && text(k + 1) === '.' && text(k + 2) === 'random') push(tok.line, 'purity', 'uses Math.random(); decisions must be reproducible — take randomness (if any) as an input');
    else if (name === 'crypto') push(tok.line, 'purity', 'uses the global crypto (random values); decisions must be reproducible — generate them on the IO side and pass them in');
    else if (TIMERS.has(name)) push(tok.line, 'purity', `schedules work (${name}); return a requeue delay in the plan and let the controller schedule it`);
    else if (name === 'process' || name === 'fetch' || name === 'console') push(tok.line, 'purity', `uses ${name} (process state or IO); pass flags/config in and return results instead`);
    else if (tok.depth === 0 && (name === 'let' || name === 'var') && text(k - 1) !== 'for') push(tok.line, 'module-state', `module-level \`${name}\` is mutable module state; make it a const, or keep the state in the caller and pass it in`);
    else if (tok.depth === 0 && name === 'const') {
      const collection = mutableCollectionInitializer(tokens, k);
      if (collection !== undefined) push(tok.line, 'module-state', `module-level \`new ${collection}(…)\` is state shared by every reconcile; build it inside the function, or type it Readonly${collection.replace('Weak', '')} if it is a constant table`);
    }
  }
  return v;
}

/**
 * For a module-level `const x[: T] = new Map|Set|WeakMap|WeakSet(…)`, the collection's name; undefined otherwise,
 * and when the declared type is `ReadonlyMap`/`ReadonlySet` (a constant table the type checker keeps read-only).
 * Only a collection that is the whole initializer is caught: `new` inside a function body is local state.
 */
function mutableCollectionInitializer(tokens: readonly Token[], k: number): string | undefined {
  let j = k + 1;
  let readonly = false;
  for (; j < tokens.length; j++) {
    const tok = tokens[j];
    if (tok === undefined || (tok.depth === 0 && tok.text === ';')) return undefined;
    if (tok.kind === 'ident' && (tok.text === 'ReadonlyMap' || tok.text === 'ReadonlySet')) readonly = true;
    if (tok.depth === 0 && tok.kind === 'punct' && tok.text === '=') break;
  }
  const name = tokens[j + 2]?.text;
  if (tokens[j + 1]?.text !== 'new' || name === undefined || !MUTABLE_COLLECTIONS.has(name) || readonly) return undefined;
  return name;
}

/** Strongly connected components of the import graph with more than one file (or a self-import). */
export function findCycles(graph: ReadonlyMap<string, readonly Edge[]>): Violation[] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  const strong = (v: string): void => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const e of graph.get(v) ?? []) {
      if (!idx.has(e.to)) {
        strong(e.to);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(e.to) ?? 0));
      } else if (onStack.has(e.to)) {
        low.set(v, Math.min(low.get(v) ?? 0, idx.get(e.to) ?? 0));
      }
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      for (;;) {
        const w = stack.pop();
        if (w === undefined) break;
        onStack.delete(w);
        comp.push(w);
        if (w === v) break;
      }
      if (comp.length > 1 || (graph.get(v) ?? []).some((e) => e.to === v)) components.push(comp.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) strong(v);

  return components.map((comp) => {
    const members = new Set(comp);
    const first = comp[0] ?? '';
    const path = cyclePath(graph, members, first);
    const steps = path.map((e, i) => `${i === 0 ? first : (path[i - 1]?.to ?? '')}:${e.line} → ${e.to}${e.typeOnly ? ' (type-only)' : ''}`);
    return {
      file: first,
      line: path[0]?.line ?? 1,
      rule: 'cycle' as const,
      message: `import cycle (type-only imports included): ${steps.join(', ')}; move what both sides need into a module that neither of them imports back`,
    };
  });
}

/** A shortest path from `start` back to itself inside one component (breadth-first). */
function cyclePath(graph: ReadonlyMap<string, readonly Edge[]>, members: ReadonlySet<string>, start: string): Edge[] {
  const prev = new Map<string, { from: string; edge: Edge }>();
  const queue: string[] = [start];
  for (let q = 0; q < queue.length; q++) {
    const v = queue[q] ?? '';
    for (const e of graph.get(v) ?? []) {
      if (!members.has(e.to)) continue;
      if (e.to === start) {
        const path: Edge[] = [e];
        let cur = v;
        while (cur !== start) {
          const p = prev.get(cur);
          if (p === undefined) break;
          path.unshift(p.edge);
          cur = p.from;
        }
        return path;
      }
      if (!prev.has(e.to)) {
        prev.set(e.to, { from: v, edge: e });
        queue.push(e.to);
      }
    }
  }
  return [];
}

export function formatViolations(vs: readonly Violation[]): string {
  return vs.map((x) => `src/${x.file}:${x.line}: [${x.rule}] ${x.message}`).join('\n');
}
