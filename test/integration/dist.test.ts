// `npm run dist` as a user without a checkout gets it: the single files run with Node 24 and nothing else on PATH
// (no node_modules, no kubectl), the bundled controller reconciles a CloneSet, `kubectl-cloneset --version` and
// `get --watch` work against the real control plane, the checksums hold and the krew manifest passes krew's rules.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import type { KubeClient } from '../../src/kube/client.ts';
import { CLONESETS, NAMESPACES } from '../../src/kube/resources.ts';
import { validateKrewManifest, type KrewManifest } from '../../src/plugin/krew-manifest.ts';
import { newCloneSet, readyPods } from '../helpers/cloneset.ts';
import { eventually, kubeconfigPath, newNamespace, ROOT, testClient } from '../helpers/kube.ts';

const RELEASE = path.join(ROOT, 'dist', 'release');
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe('npm run dist: single files that need Node 24 and nothing else', () => {
  let client: KubeClient;
  let ns: string;
  let home: string;
  let bin: string;
  let env: NodeJS.ProcessEnv;
  let controller: ChildProcess | undefined;

  before(async () => {
    const built = spawnSync(process.execPath, ['--disable-warning=ExperimentalWarning', 'hack/dist.ts'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(built.status, 0, built.stderr);
    // A machine with Node 24 and nothing else: PATH holds node and the two downloaded files, HOME is empty.
    home = mkdtempSync(path.join(tmpdir(), 'dist-user-'));
    bin = path.join(home, 'bin');
    mkdirSync(bin);
    symlinkSync(process.execPath, path.join(bin, 'node'));
    for (const f of ['kubectl-cloneset', 'cloneset-controller.mjs']) copyFileSync(path.join(RELEASE, f), path.join(bin, f));
    env = { PATH: bin, HOME: home, KUBECONFIG: kubeconfigPath() };
    client = await testClient();
    ns = await newNamespace(client, 'dist');
  });
  after(async () => {
    if (controller !== undefined && controller.exitCode === null) {
      controller.kill('SIGTERM');
      await once(controller, 'exit');
    }
    await client.delete(NAMESPACES, undefined, ns).catch(() => undefined);
    client.close();
  });

  it("SHA256SUMS matches every file, and the krew manifest passes krew's rules with the archive's checksum", () => {
    const sums = readFileSync(path.join(RELEASE, 'SHA256SUMS'), 'utf8').trim().split('\n');
    assert.deepEqual(
      sums.map((l) => l.split('  ')[1]),
      ['kubectl-cloneset', 'cloneset-controller.mjs', `kubectl-cloneset-v${VERSION}.tar.gz`, 'cloneset.yaml'],
    );
    for (const line of sums) {
      const [sum, file] = line.split('  ');
      assert.equal(
        createHash('sha256')
          .update(readFileSync(path.join(RELEASE, file ?? '')))
          .digest('hex'),
        sum,
        file,
      );
    }
    const manifest = parse(readFileSync(path.join(RELEASE, 'cloneset.yaml'), 'utf8')) as KrewManifest;
    assert.deepEqual(validateKrewManifest('cloneset', manifest), []);
    const archive = path.join(RELEASE, `kubectl-cloneset-v${VERSION}.tar.gz`);
    assert.equal(manifest.spec.platforms[0]?.sha256, createHash('sha256').update(readFileSync(archive)).digest('hex'));
    const listing = spawnSync('tar', ['-tvzf', archive], { encoding: 'utf8' });
    assert.match(listing.stdout, /^-rwxr-xr-x .* kubectl-cloneset$/m, 'an executable kubectl-cloneset in the archive');
  });

  it('kubectl-cloneset --version runs from the single file', () => {
    const r = spawnSync('kubectl-cloneset', ['--version'], { env, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `kubectl-cloneset v${VERSION}\n`);
  });

  it('the bundled controller reconciles a CloneSet, and kubectl-cloneset get --watch shows it live', async () => {
    controller = spawn('node', [path.join(bin, 'cloneset-controller.mjs'), '-n', ns, '--metrics-bind-address=0', '--health-probe-bind-address=0', '--webhook-port=0'], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    await client.create(CLONESETS, ns, newCloneSet(ns, 'single', 2));
    await eventually('2 ready pods made by the bundled controller', async () => ((await readyPods(client, ns, 'single', 2))?.length === 2 ? true : undefined), {
      timeoutMs: 90_000,
    });
    const watch = spawn('kubectl-cloneset', ['get', 'single', '-n', ns, '--watch'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    watch.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = once(watch, 'exit');
    try {
      await eventually('the tree of the watch', async () => (/Name: +single/.test(out) && (out.match(/✔ Running/g) ?? []).length >= 2 ? true : undefined), { timeoutMs: 30_000 });
    } finally {
      watch.kill('SIGINT');
    }
    const [code] = await exited;
    assert.equal(code, 0, 'Ctrl-C ends the watch cleanly');
  });
});
