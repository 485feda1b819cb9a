// Copies the manifests the Helm chart shares with config/ into charts/cloneset-controller/files/, so that the chart
// and `kubectl apply -k config/` install the same CRD, the same least-privilege RBAC rules and the same webhook
// configurations (the ones the controller itself keeps in place, src/webhook/) — the chart's templates read these
// files with .Files.Get; nothing is written twice by hand. The alert rules (config/prometheus/alerts.yaml, which
// promtool tests) are copied the same way, and the Grafana dashboard is written from hack/dashboard.ts.
// Usage: node hack/gen-chart.ts [--check]   (--check: exit 1 if a copy is stale or missing, write nothing)
// Run it after `npm run gen:crd`, after editing config/rbac/ or config/prometheus/, or hack/dashboard.ts.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { dashboard } from './dashboard.ts';

const root = resolve(import.meta.dirname, '..');
const chartFiles = resolve(root, 'charts', 'cloneset-controller', 'files');

/** config/ source → copy in the chart. */
const CHART_COPIES: readonly (readonly [string, string])[] = [
  ['config/crd/apps.kruise.io_clonesets.yaml', 'crd/apps.kruise.io_clonesets.yaml'],
  ['config/rbac/role.yaml', 'rbac/role.yaml'],
  ['config/rbac/leader-election-role.yaml', 'rbac/leader-election-role.yaml'],
  ['config/rbac/webhook-role.yaml', 'rbac/webhook-role.yaml'],
  ['config/webhook/manifests.yaml', 'webhook/manifests.yaml'],
  ['config/rbac/metrics-auth-role.yaml', 'rbac/metrics-auth-role.yaml'],
  ['config/rbac/metrics-reader-role.yaml', 'rbac/metrics-reader-role.yaml'],
  ['config/prometheus/alerts.yaml', 'prometheus/alerts.yaml'],
];

/** Generated files of the chart (path under charts/cloneset-controller/ → content). */
const GENERATED: readonly (readonly [string, string])[] = [['dashboards/cloneset-controller.json', `${JSON.stringify(dashboard(), null, 2)}\n`]];

const HEADER = (src: string): string => `# Copied from ${src} by \`npm run gen:chart\` (hack/gen-chart.ts). Do not edit: edit ${src} and re-run.\n`;

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

const check = process.argv.includes('--check');
const stale: string[] = [];
for (const [src, dst] of CHART_COPIES) {
  const content = HEADER(src) + readFileSync(resolve(root, src), 'utf8');
  const target = resolve(chartFiles, dst);
  if (read(target) === content) continue;
  if (check) {
    stale.push(relative(root, target));
  } else {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
    console.log(`wrote ${relative(root, target)}`);
  }
}
for (const [dst, content] of GENERATED) {
  const target = resolve(chartFiles, '..', dst);
  if (read(target) === content) continue;
  if (check) {
    stale.push(relative(root, target));
  } else {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
    console.log(`wrote ${relative(root, target)}`);
  }
}
if (stale.length > 0) {
  console.error(`stale copies in the Helm chart: ${stale.join(', ')}; run npm run gen:chart`);
  process.exit(1);
}
