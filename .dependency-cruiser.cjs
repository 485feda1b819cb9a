// The import rules of src/ (docs/architecture.md#layers), checked by dependency-cruiser: `npm run lint:deps`
// (part of `npm test`). Each rule says which imports are forbidden; the `comment` is what a violation prints.
//
// Layers, bottom first; a module imports only from its own layer or the ones below it:
//
//   kube/types.ts ← api/ ← kube/ ← runtime/ ← admission/ ← cloneset/ | webhook/ ← main.ts & co, plugin/
//
// cloneset/ and webhook/ are siblings and do not import each other. Tests (*.test.ts) may reach across layers to build
// a scenario (nothing imports a test, so they add no cycle). What a pure module may not *do* (clock, timers,
// randomness, IO, module state) is checked by Biome (biome.jsonc, the override for the pure modules).

/** Tests: exempt from the layer rules. */
const TEST = '\\.test\\.ts$';
/** Test fixtures (builders, simulators, patch appliers): importable from tests and other fixtures only. */
const FIXTURE = '(^|/)testing/';
/** Snapshot in, plan out: the decisions, which import only other pure modules and computation-only node: modules. */
const PURE = '^src/(api|admission|cloneset/plan|cloneset/inplace)/|^src/kube/(types|selectors|owner-refs|time)\\.ts$';

/** One layer rule: a module under `from` may import from src/ only what `mayImport` matches (tests excepted). */
function layer({ name, from, mayImport, comment }) {
  return { name, severity: 'error', comment, from: { path: from, pathNot: TEST }, to: { path: '^src/', pathNot: mayImport } };
}

module.exports = {
  forbidden: [
    layer({
      name: 'layer-kube-types',
      from: '^src/kube/types\\.ts$',
      mayImport: '^src/kube/types\\.ts$',
      comment: 'kube/types.ts (the Kubernetes wire types) is the bottom layer and imports nothing of src/',
    }),
    layer({
      name: 'layer-api',
      from: '^src/api/',
      mayImport: '^src/(api/|kube/types\\.ts$)',
      comment: 'api/ (the CloneSet API) imports only api/ and kube/types.ts; move the shared piece down, or the caller up',
    }),
    layer({
      name: 'layer-kube',
      from: '^src/kube/',
      mayImport: '^src/(api|kube)/',
      comment: 'kube/ (generic Kubernetes plumbing) imports only kube/ and api/',
    }),
    layer({
      name: 'layer-runtime',
      from: '^src/runtime/',
      mayImport: '^src/(api|kube|runtime)/',
      comment: 'runtime/ (informers, work queue, expectations) imports only runtime/, kube/ and api/',
    }),
    layer({
      name: 'layer-admission',
      from: '^src/admission/',
      mayImport: '^src/(api|kube|runtime|admission)/',
      comment: 'admission/ (pure admission decisions) imports only the layers below it',
    }),
    layer({
      name: 'layer-cloneset',
      from: '^src/cloneset/',
      mayImport: '^src/(api|kube|runtime|admission|cloneset)/',
      comment: 'cloneset/ may not import webhook/ (a sibling), main.ts or plugin/; invert the dependency with an interface',
    }),
    layer({
      name: 'layer-webhook',
      from: '^src/webhook/',
      mayImport: '^src/(api|kube|runtime|admission|webhook)/',
      comment: 'webhook/ may not import cloneset/ (a sibling), main.ts or plugin/',
    }),
    // main.ts and the other top-level files (config.ts, server.ts, leadership.ts) and plugin/ may import any layer.
    {
      name: 'every-module-in-a-layer',
      severity: 'error',
      comment: 'this folder of src/ is in no layer: add it to .dependency-cruiser.cjs and to docs/architecture.md',
      from: { path: '^src/', pathNot: '^src/(api|kube|runtime|admission|cloneset|webhook|plugin)/|^src/[^/]+\\.ts$' },
      to: {},
    },
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'import cycle (type-only imports count): move what both sides need into a module neither imports back',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'product-not-to-test-code',
      severity: 'error',
      comment: 'product code imports a test or a test fixture (testing/); move what both need into a product module',
      from: { path: '^src/', pathNot: `${TEST}|${FIXTURE}` },
      to: { path: `${TEST}|${FIXTURE}` },
    },
    {
      name: 'product-not-to-tools',
      severity: 'error',
      comment: 'src/ ships alone: it may not import test/, bench/, hack/, tools/ or examples/; move what it needs into src/',
      from: { path: '^src/', pathNot: TEST },
      to: { path: '^(test|bench|hack|tools|examples)/' },
    },
    {
      name: 'localcluster-uses-api-and-kube-only',
      severity: 'error',
      comment: 'the local control plane (tools/localcluster/) may use only api/ and kube/ of src/',
      from: { path: '^tools/localcluster/' },
      to: { path: '^src/', pathNot: '^src/(api|kube)/' },
    },
    {
      name: 'pure-imports-pure',
      severity: 'error',
      comment:
        'a pure module imports a module that is not pure (type-only imports count); move the shared type or helper into a pure module (cloneset/plan/, api/) or do this in the executor',
      from: { path: PURE, pathNot: `${TEST}|${FIXTURE}` },
      to: { path: '^src/', pathNot: `${PURE}|${TEST}|${FIXTURE}` },
    },
    {
      name: 'pure-no-io-modules',
      severity: 'error',
      comment: 'a pure module imports a node: module with IO, a clock or process state; do the IO in the executor or runtime/ and pass the result in',
      from: { path: PURE, pathNot: `${TEST}|${FIXTURE}` },
      to: { dependencyTypes: ['core'], pathNot: '^(node:)?(assert|assert/strict|buffer|crypto|path|util|url|string_decoder)$' },
    },
    {
      name: 'pure-no-packages',
      severity: 'error',
      comment: 'a pure module imports an npm package; only yaml is allowed here, pass a logger or client in from the IO side instead',
      from: { path: PURE, pathNot: `${TEST}|${FIXTURE}` },
      to: { dependencyTypesNot: ['local', 'core'], couldNotResolve: false, pathNot: '(^|/)node_modules/yaml/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'this import names no file; relative imports carry the .ts extension',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // TypeScript 7 has no JavaScript API yet, so swc parses the sources. swc keeps type-only imports, so they count
    // for every rule (tsPreCompilationDeps, the tsc-only switch for that, is not needed).
    parser: 'swc',
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
