import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateCA, issueServingCertificate } from './cert-issuer.ts';
import { DirCertificates } from './cert-source.ts';
import { splitPem } from './certificates.ts';

describe('DirCertificates (--webhook-cert-dir)', () => {
  test('serves tls.crt/tls.key; ca.crt, when present, becomes the caBundle', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'certdir-'));
    try {
      const ca = await generateCA(Date.now(), 3_600_000);
      const srv = await issueServingCertificate(ca, ['localhost'], Date.now(), 3_600_000);
      writeFileSync(path.join(dir, 'tls.crt'), srv.cert);
      writeFileSync(path.join(dir, 'tls.key'), srv.key);
      const source = new DirCertificates(dir, 5000);
      const without = await source.sync();
      assert.deepEqual([without.serving, without.caBundle, without.nextCheckMs], [srv, undefined, 5000]);
      writeFileSync(path.join(dir, 'ca.crt'), ca.cert);
      assert.equal((await source.sync()).caBundle, ca.cert);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('missing files or a key of another certificate: an error that says what to fix', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'certdir-'));
    try {
      await assert.rejects(new DirCertificates(dir).sync(), /--webhook-cert-dir .*: cannot read tls.crt and tls.key .*mount a kubernetes.io\/tls Secret there/);
      const other = await generateCA(0, 60_000);
      writeFileSync(path.join(dir, 'tls.crt'), (await generateCA(0, 60_000)).cert);
      writeFileSync(path.join(dir, 'tls.key'), other.key);
      await assert.rejects(new DirCertificates(dir).sync(), /tls.key does not belong to tls.crt/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a Secret volume update (the kubelet swaps the ..data symlink) is noticed, and the next sync serves the new pair', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'certdir-'));
    const source = new DirCertificates(dir);
    // The kubelet's layout: tls.crt → ..data/tls.crt, ..data → ..<timestamp>/, replaced atomically by a rename.
    const publish = (version: string, pair: { cert: string; key: string }): void => {
      mkdirSync(path.join(dir, version));
      writeFileSync(path.join(dir, version, 'tls.crt'), pair.cert);
      writeFileSync(path.join(dir, version, 'tls.key'), pair.key);
      symlinkSync(version, path.join(dir, '..data_tmp'));
      renameSync(path.join(dir, '..data_tmp'), path.join(dir, '..data'));
    };
    try {
      const ca = await generateCA(Date.now(), 3_600_000);
      const first = await issueServingCertificate(ca, ['localhost'], Date.now(), 3_600_000);
      const second = await issueServingCertificate(ca, ['localhost'], Date.now(), 3_600_000);
      publish('..v1', first);
      for (const f of ['tls.crt', 'tls.key']) symlinkSync(path.join('..data', f), path.join(dir, f));
      assert.deepEqual((await source.sync()).serving, first);
      const changed = new Promise<void>((resolve) => source.onChange(resolve));
      publish('..v2', second);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error('no change noticed within 5 s of the ..data swap')), 5000);
      });
      await Promise.race([changed, late]).finally(() => clearTimeout(timer));
      assert.deepEqual((await source.sync()).serving, second);
    } finally {
      source.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SecretCertificates: the issuing library is loaded only to issue', () => {
  const child = path.join(import.meta.dirname, 'testing', 'secret-sync-child.ts');
  const sync = (secret: unknown): { issuerLoaded: boolean; wrote: number; secret: unknown } => {
    const out = execFileSync(process.execPath, ['--disable-warning=ExperimentalWarning', child], { input: secret === undefined ? '' : JSON.stringify(secret), encoding: 'utf8' });
    return JSON.parse(out) as { issuerLoaded: boolean; wrote: number; secret: unknown };
  };

  test('no Secret yet: the CA and serving certificate are issued (and the library loaded)', () => {
    const first = sync(undefined);
    assert.deepEqual([first.issuerLoaded, first.wrote], [true, 1]);
    const caCrt = Buffer.from((first.secret as { data: Record<string, string> }).data['ca.crt'] ?? '', 'base64').toString('utf8');
    assert.equal(splitPem(caCrt).join(''), caCrt, 'ca.crt is stored as the caBundle is installed from it (newline-terminated blocks)');
  });

  test('a Secret that holds valid certificates is read with node:crypto alone, and nothing is written', () => {
    const { secret } = sync(undefined);
    const again = sync(secret);
    assert.deepEqual([again.issuerLoaded, again.wrote], [false, 0]);
  });
});
