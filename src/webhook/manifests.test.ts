import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { renderWebhookManifestsYaml } from './manifests.ts';

test('config/webhook/manifests.yaml is what the binary writes in Service mode (run node hack/gen-webhook.ts when this fails)', () => {
  const file = readFileSync(resolve(import.meta.dirname, '..', '..', 'config', 'webhook', 'manifests.yaml'), 'utf8');
  assert.equal(file, renderWebhookManifestsYaml());
});
