// The container image, built without a daemon by `npm run image` (hack/build-image.sh), run the way a kubelet runs
// its pod by `npm run image:smoke` (hack/image-smoke.sh: podman, or unshare where podman cannot run containers;
// PID 1, read-only root, user 65532, the ServiceAccount volume and KUBERNETES_SERVICE_HOST/PORT) against this test
// cluster: it reconciles a CloneSet and exits 0 on SIGTERM. Needs root (apt-get, mmdebstrap, umoci, podman), as CI
// has. About 40 s (plus apt-get of mmdebstrap, umoci and podman the first time).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import path from 'node:path';
import { kubeconfigPath, ROOT } from '../helpers/kube.ts';

const OUT = path.join(ROOT, '.local', 'image-test');
const ARCHIVE = path.join(OUT, 'cloneset-controller.oci.tar');

function bash(script: string, env: Record<string, string>): { code: number; stdout: string; stderr: string } {
  const r = spawnSync('bash', [path.join(ROOT, 'hack', script)], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    maxBuffer: 16 * 1024 * 1024,
    timeout: 600_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

describe('container image (npm run image, npm run image:smoke)', () => {
  it('npm run image writes an OCI archive and prints its size', () => {
    const r = bash('build-image.sh', { IMAGE_OUT_DIR: OUT });
    assert.equal(r.code, 0, r.stderr);
    const [file, size] = r.stdout.trim().split('\t');
    assert.equal(file, ARCHIVE);
    const mib = Math.floor(statSync(ARCHIVE).size / 1024 / 1024);
    assert.equal(size, `${mib} MiB`);
    assert.ok(mib > 20 && mib < 120, `a small image (node, its libraries and the app only): ${mib} MiB`);
  });

  it('its entrypoint, run like a pod with in-cluster configuration, reconciles a CloneSet and drains on SIGTERM', () => {
    const r = bash('image-smoke.sh', { IMAGE_ARCHIVE: ARCHIVE, KUBECONFIG: kubeconfigPath(), SMOKE_NAMESPACE: 'image-smoke-test' });
    assert.equal(r.code, 0, r.stderr);
    for (const line of [
      'ok: /readyz answers 200 (informers synced)',
      'ok: CloneSet image-smoke-test/sample reconciled: 3 pods Ready and counted in status',
      'ok: SIGTERM reached the entrypoint (PID 1), which exited 0',
    ])
      assert.ok(r.stderr.includes(line), `${line}\n${r.stderr}`);
    assert.match(r.stderr, /PASS: cloneset-controller\.oci\.tar \(\d+ MiB\) ran \((podman|unshare)\) read-only as 65532:65532 with in-cluster config/);
  });
});
