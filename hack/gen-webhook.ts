// Writes config/webhook/manifests.yaml from src/webhook/configurations.ts. Usage: node hack/gen-webhook.ts
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { renderWebhookManifestsYaml } from '../src/webhook/manifests.ts';

const dir = resolve(import.meta.dirname, '..', 'config', 'webhook');
mkdirSync(dir, { recursive: true });
writeFileSync(resolve(dir, 'manifests.yaml'), renderWebhookManifestsYaml());
console.log(`wrote ${resolve(dir, 'manifests.yaml')}`);
