// Writes config/crd/apps.kruise.io_clonesets.yaml from src/api/crd-schema.ts (the single source of truth).
// Usage: node hack/gen-crd.ts [--check]   (--check: exit 1 if the file is stale, write nothing)
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { renderCrdYaml } from '../src/api/crd-schema.ts';
import { withCelRules } from '../src/admission/cel-rules.ts';

const target = resolve(import.meta.dirname, '..', 'config', 'crd', 'apps.kruise.io_clonesets.yaml');
const yaml = withCelRules(renderCrdYaml()); // CEL rules: src/admission/cel-rules.ts
if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // missing: stale
  }
  if (current !== yaml) {
    console.error(`${target} is stale: run node hack/gen-crd.ts`);
    process.exit(1);
  }
} else {
  writeFileSync(target, yaml);
  console.log(`wrote ${target}`);
}
