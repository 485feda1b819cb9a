// `npm run dist`: one self-contained file each for kubectl-cloneset and the controller — a single bundled ES
// module that runs on Node >= 24 without node_modules (esbuild) — plus the krew plugin archive, the krew manifest
// generated from it (checked against krew's manifest rules, src/plugin/krew-manifest.ts) and SHA256SUMS.
//
// Usage: node hack/dist.ts [--base-url URL]
//   --base-url: where the release files will be downloaded from; the krew manifest's `uri` is
//   URL/kubectl-cloneset-vX.Y.Z.tar.gz. Without it the manifest points at the local archive (file://), which
//   `kubectl krew install --manifest=… --archive=…` installs; nothing here publishes anything.
//
// Output in dist/release/: kubectl-cloneset (executable, no extension: kubectl finds plugins by file name),
// cloneset-controller.mjs, kubectl-cloneset-vX.Y.Z.tar.gz, cloneset.yaml (krew), SHA256SUMS.
import { build, type Plugin } from 'esbuild';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { spawnSync } from 'node:child_process';
import { stringify } from 'yaml';
import { STUBS } from '../src/kube/client-node-config.ts';
import { krewManifest, validateKrewManifest } from '../src/plugin/krew-manifest.ts';

const root = resolve(import.meta.dirname, '..');
const out = resolve(root, 'dist', 'release');
const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as { version: string };
const { values } = parseArgs({ options: { 'base-url': { type: 'string' } } });

/**
 * src/kube/client-node-config.ts loads client-node's KubeConfig through a runtime require and a module hook that
 * answers some of its imports with stubs (to keep the generated API out of memory). A bundle resolves imports at
 * build time instead: the same stubs are put in place here, and the module imports config.js statically.
 */
const clientNodeConfig: Plugin = {
  name: 'client-node-config',
  setup(b) {
    b.onLoad({ filter: /src[\\/]kube[\\/]client-node-config\.ts$/ }, () => ({
      loader: 'ts',
      contents: "import { KubeConfig } from '@kubernetes/client-node/dist/config.js';\nexport function kubeConfigClass(): typeof KubeConfig { return KubeConfig; }\n",
      resolveDir: resolve(root, 'src', 'kube'),
    }));
    b.onResolve({ filter: /.*/ }, (args) => {
      const stub = STUBS[args.path];
      if (stub === undefined || !/[\\/]@kubernetes[\\/]client-node[\\/]dist[\\/]config\.js$/.test(args.importer)) return undefined;
      return { path: args.path, namespace: 'client-node-stub' };
    });
    b.onLoad({ filter: /.*/, namespace: 'client-node-stub' }, (args) => ({
      loader: 'js',
      contents: decodeURIComponent((STUBS[args.path] ?? '').replace(/^data:text\/javascript,/, '')),
    }));
  },
};

// Bundled CommonJS dependencies call require() for Node's built-ins; an ES module has no require of its own.
// The version check runs before anything else can fail on an older Node in a less readable way.
const banner = [
  "import { createRequire as __createRequire } from 'node:module';",
  'const require = __createRequire(import.meta.url);',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the text of the generated launcher, whose own template literal runs there
  "if (Number(process.versions.node.split('.')[0]) < 24) { process.stderr.write(`error: this program needs Node.js 24 or newer (found ${process.version}); install it from https://nodejs.org\\n`); process.exit(1); }",
].join('\n');

async function bundle(entry: string, file: string, shebang: boolean): Promise<string> {
  const target = resolve(out, file);
  const result = await build({
    entryPoints: [resolve(root, entry)],
    outfile: target,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node24',
    minifySyntax: true,
    legalComments: 'none',
    logLevel: 'warning',
    banner: { js: `${shebang ? '#!/usr/bin/env node\n' : ''}${banner}` },
    plugins: [clientNodeConfig],
    metafile: true,
  });
  chmodSync(target, 0o755);
  const inputs = Object.keys(result.metafile.inputs).length;
  process.stderr.write(`  ${file}: ${(statSync(target).size / 1024 / 1024).toFixed(1)} MiB from ${inputs} modules\n`);
  return target;
}

/** A reproducible .tar.gz of one executable (fixed owner, mode and time). */
function tarGz(dir: string, name: string, archive: string): void {
  const tar = spawnSync('tar', ['--sort=name', '--mtime=@0', '--owner=0', '--group=0', '--numeric-owner', '-cf', '-', '-C', dir, name], { maxBuffer: 256 * 1024 * 1024 });
  if (tar.status !== 0) throw new Error(`tar failed: ${tar.stderr.toString()}`);
  writeFileSync(archive, gzipSync(tar.stdout, { level: 9 }));
}

const sha256 = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

process.stderr.write(`building dist/release/ (version ${pkg.version})\n`);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
await bundle('src/plugin/cli.ts', 'kubectl-cloneset', true);
await bundle('src/main.ts', 'cloneset-controller.mjs', true);
const archiveName = `kubectl-cloneset-v${pkg.version}.tar.gz`;
const archive = resolve(out, archiveName);
tarGz(out, 'kubectl-cloneset', archive);
const uri = values['base-url'] !== undefined ? `${values['base-url'].replace(/\/$/, '')}/${archiveName}` : `file://${archive}`;
const manifest = krewManifest({ version: `v${pkg.version}`, uri, sha256: sha256(archive) });
const problems = validateKrewManifest('cloneset', manifest);
if (problems.length > 0) throw new Error(`the krew manifest breaks krew's rules: ${problems.join('; ')}`);
writeFileSync(resolve(out, 'cloneset.yaml'), stringify(manifest));
const sums = ['kubectl-cloneset', 'cloneset-controller.mjs', archiveName, 'cloneset.yaml'].map((f) => `${sha256(resolve(out, f))}  ${f}`);
writeFileSync(resolve(out, 'SHA256SUMS'), `${sums.join('\n')}\n`);
process.stderr.write(`  krew manifest: cloneset.yaml (uri ${uri})\n  checksums: SHA256SUMS (sha256sum -c SHA256SUMS)\n`);
