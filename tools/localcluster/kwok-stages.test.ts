// The kubelet stand-in's pod stages (config/kwok/pod-stages.yaml): what the local control plane's kwok may write.
// Their behaviour on a real API server is tested in test/integration/control-plane.test.ts; this checks the rule
// no integration test can catch reliably, since it is about a race: every status patch is conditional on the
// resourceVersion of the pod it was rendered from, so that kwok never writes a status computed from a stale pod.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { repoRoot } from './binaries.ts';

interface StagePatch {
  readonly subresource?: string;
  readonly root?: string;
  readonly type?: string;
  readonly template?: string;
}
interface Stage {
  readonly metadata: { readonly name: string };
  readonly spec: { readonly resourceRef: { readonly kind: string }; readonly next: { readonly patches?: readonly StagePatch[]; readonly delete?: boolean } };
}

const stages = (): Stage[] => parseAllDocuments(readFileSync(join(repoRoot(), 'config', 'kwok', 'pod-stages.yaml'), 'utf8')).map((d) => d.toJS() as Stage);

describe('the kwok pod stages', () => {
  it('are the five kubelet steps: start, in-place restart, containers ready, readiness gates, delete', () => {
    assert.deepEqual(
      stages().map((s) => s.metadata.name),
      ['pod-start-respecting-gates', 'pod-inplace-image-update', 'pod-container-ready', 'pod-readiness-gates', 'pod-delete'],
    );
  });

  it('patch pods/status only on the resourceVersion they were rendered from (a stale play is refused with 409)', () => {
    const patching = stages().filter((s) => (s.spec.next.patches ?? []).length > 0);
    assert.equal(patching.length, 4);
    for (const s of patching) {
      for (const p of s.spec.next.patches ?? []) {
        assert.equal(p.subresource, 'status', s.metadata.name);
        // kwok wraps a patch under `root`; the precondition sits beside status, so the template is the whole patch
        assert.equal(p.root, undefined, `${s.metadata.name}: no root, the template writes metadata and status`);
        const lines = (p.template ?? '').split('\n');
        assert.deepEqual(lines.slice(0, 3), ['metadata:', '  resourceVersion: {{ .metadata.resourceVersion | Quote }}', 'status:'], s.metadata.name);
        // everything else of the patch is under status: a stage never writes labels, annotations or spec
        for (const l of lines.slice(3)) assert.ok(l === '' || l.startsWith('  '), `${s.metadata.name}: "${l}" is outside status`);
      }
    }
  });

  it('delete without a patch', () => {
    const del = stages().filter((s) => s.spec.next.delete === true);
    assert.deepEqual(
      del.map((s) => [s.metadata.name, s.spec.next.patches]),
      [['pod-delete', undefined]],
    );
  });
});
