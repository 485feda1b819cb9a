// The krew manifest hack/dist.ts writes, and krew's manifest rules (kubernetes-sigs/krew pkg/index/validation).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { krewManifest, validateKrewManifest, type KrewManifest } from './krew-manifest.ts';

const SHA = 'a'.repeat(64);
const good = krewManifest({ version: 'v0.1.0', uri: 'https://example.com/kubectl-cloneset-v0.1.0.tar.gz', sha256: SHA });

describe('krew manifest', () => {
  test("the manifest of kubectl-cloneset passes krew's rules", () => {
    assert.deepEqual(validateKrewManifest('cloneset', good), []);
    assert.equal(good.spec.platforms[0]?.bin, 'kubectl-cloneset');
  });

  test("krew's rules catch a bad version, sha256, name, selector key and missing files", () => {
    const platform = good.spec.platforms[0];
    assert.ok(platform !== undefined);
    const bad: KrewManifest = {
      ...good,
      metadata: { name: 'clone set' },
      spec: { ...good.spec, version: '0.1.0', platforms: [{ ...platform, sha256: 'XYZ', files: [], selector: { matchLabels: { distro: 'debian' } } }] },
    };
    assert.deepEqual(validateKrewManifest('clone set', bad), [
      'the plugin name "clone set" is not allowed',
      'failed to parse plugin version "0.1.0"',
      'platform 0: sha256 value XYZ is not valid',
      "platform 0: can't have a plugin without specifying file operations",
      'platform 0: selector key "distro" not supported',
    ]);
    assert.deepEqual(validateKrewManifest('cloneset', { ...good, metadata: { name: 'other' } }), ['plugin should be named "cloneset", not "other"']);
  });
});
