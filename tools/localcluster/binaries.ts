// Finds the control-plane binaries (envtest convention) and builds them when they are missing.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BINARY_NAMES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'] as const;
export type BinaryName = (typeof BINARY_NAMES)[number];
export type BinaryPaths = Record<BinaryName, string>;

type Env = Readonly<Record<string, string | undefined>>;

/** The repository root (this file lives in <repo>/tools/localcluster). */
export function repoRoot(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
}

/** $CLONESET_CACHE_DIR, else ${XDG_CACHE_HOME:-~/.cache}/cloneset-controller (same rule as hack/build-control-plane.sh). */
export function cacheDir(env: Env = process.env): string {
  const explicit = env['CLONESET_CACHE_DIR'];
  if (explicit !== undefined && explicit !== '') return explicit;
  const xdg = env['XDG_CACHE_HOME'];
  const base = xdg !== undefined && xdg !== '' ? xdg : join(homedir(), '.cache');
  return join(base, 'cloneset-controller');
}

/** TEST_ASSET_KUBE_APISERVER for kube-apiserver, and so on. */
export function testAssetVariable(name: BinaryName): string {
  return `TEST_ASSET_${name.toUpperCase().replaceAll('-', '_')}`;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Lookup order: TEST_ASSET_<NAME>, then $KUBEBUILDER_ASSETS/<name>, then <cache dir>/bin/<name>.
 * Returns undefined when none of them holds an executable file.
 */
export function findBinary(name: BinaryName, env: Env = process.env): string | undefined {
  const candidates: string[] = [];
  const asset = env[testAssetVariable(name)];
  if (asset !== undefined && asset !== '') candidates.push(asset);
  const assets = env['KUBEBUILDER_ASSETS'];
  if (assets !== undefined && assets !== '') candidates.push(join(assets, name));
  candidates.push(join(cacheDir(env), 'bin', name));
  return candidates.find(isExecutable);
}

function runBuildScript(env: Env): Promise<void> {
  const script = join(repoRoot(), 'hack', 'build-control-plane.sh');
  return new Promise((resolvePromise, reject) => {
    // The script's progress (and go's) goes to our stderr; stdout is kept clean for `cli.ts up`.
    const child = spawn('bash', [script], { stdio: ['ignore', process.stderr, process.stderr], env: { ...env } });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolvePromise();
      else reject(new Error(`${script} failed (${signal ?? `exit code ${String(code)}`})`));
    });
  });
}

/** Resolves every binary, running hack/build-control-plane.sh once when any is missing. */
export async function ensureBinaries(log: (line: string) => void, env: Env = process.env): Promise<BinaryPaths> {
  const missing = BINARY_NAMES.filter((n) => findBinary(n, env) === undefined);
  if (missing.length > 0) {
    log(`control-plane binaries missing (${missing.join(', ')}): building them with hack/build-control-plane.sh (first time: 10-25 min)`);
    await runBuildScript(env);
  }
  const get = (n: BinaryName): string => {
    const p = findBinary(n, env);
    if (p === undefined) {
      throw new Error(`${n} not found: set ${testAssetVariable(n)} or KUBEBUILDER_ASSETS, or run hack/build-control-plane.sh`);
    }
    return p;
  };
  return {
    etcd: get('etcd'),
    'kube-apiserver': get('kube-apiserver'),
    'kube-controller-manager': get('kube-controller-manager'),
    'kube-scheduler': get('kube-scheduler'),
    kwok: get('kwok'),
  };
}
