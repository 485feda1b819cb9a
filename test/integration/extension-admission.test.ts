// Our opt-in annotations at admission on a real API server (docs/features.md#beyond-kruise): the webhook that
// hack/test.sh runs refuses a bad value with the annotation's path, as kubectl shows it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { stringify } from 'yaml';
import { newCloneSet } from '../helpers/cloneset.ts';
import { kubectl } from '../helpers/kube.ts';

function dryRun(annotations: Record<string, string>): { code: number; out: string } {
  const manifest = newCloneSet('default', 'knobs', 1, { annotations });
  const r = kubectl(['apply', '--dry-run=server', '-f', '-'], stringify(manifest));
  return { code: r.code, out: `${r.stdout}${r.stderr}` };
}

describe('extension annotations at admission on a real API server', () => {
  it('refuses bad knob values with the annotation path and a clear message, and admits good ones', () => {
    const bad = dryRun({
      'cloneset-controller.io/inactive-pods-limit': '-1',
      'cloneset-controller.io/progress-deadline-action': 'abort',
      'cloneset-controller.io/pvc-retention-when-scaled': 'Keep',
      'cloneset-controller.io/pvc-resize-policy': 'Recreate',
    });
    assert.notEqual(bad.code, 0);
    for (const line of [
      'metadata.annotations[cloneset-controller.io/inactive-pods-limit]: Invalid value: "-1": must be a non-negative integer in a string, e.g. "5" (the number of Failed/Succeeded pods to keep)',
      'metadata.annotations[cloneset-controller.io/progress-deadline-action]: Invalid value: "abort": supported values: "pause", "rollback"',
      'metadata.annotations[cloneset-controller.io/pvc-retention-when-scaled]: Invalid value: "Keep": supported values: "Retain", "Delete"',
      'metadata.annotations[cloneset-controller.io/pvc-resize-policy]: Invalid value: "Recreate": supported values: "InPlace"',
    ])
      assert.ok(bad.out.includes(line), `missing: ${line}\n${bad.out}`);
    const good = dryRun({
      'cloneset-controller.io/inactive-pods-limit': '5',
      'cloneset-controller.io/progress-deadline-action': 'rollback',
      'cloneset-controller.io/pvc-retention-when-scaled': 'Retain',
      'cloneset-controller.io/pvc-retention-when-deleted': 'Delete',
      'cloneset-controller.io/pvc-resize-policy': 'InPlace',
    });
    assert.equal(good.code, 0, good.out);
  });
});
